package minibatch

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// Stop is a mixture's stopping rule: when a mixture sweep ends.
type Stop uint8

const (
	// FirstExhausted ends a mixture sweep after the sequence that ends the sweep of the
	// first data set to finish one (Hugging Face's "first_exhausted"): no sequence repeats
	// within it.
	FirstExhausted Stop = iota
	// AllExhausted ends a mixture sweep once every data set the weights can draw (weight
	// above zero) has ended a sweep in it; data sets that finish early start their next
	// sweep (Hugging Face's "all_exhausted"): every sequence comes at least once.
	AllExhausted
	// Never: one mixture sweep without end, each data set sweep after sweep; MaxSamples (or
	// the caller) ends reading.
	Never
)

var stopNames = [...]string{"first_exhausted", "all_exhausted", "never"}

// String returns the rule's name: "first_exhausted", "all_exhausted" or "never".
func (s Stop) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return fmt.Sprintf("Stop(%d)", s)
}

// ParseStop returns the stopping rule named ("first_exhausted", "all_exhausted", "never").
func ParseStop(name string) (Stop, error) {
	for i, n := range stopNames {
		if name == n {
			return Stop(i), nil
		}
	}
	return 0, fmt.Errorf("%w: stopping rule %q: want first_exhausted, all_exhausted or never", ErrConfig, name)
}

// MixSource is one data set of a mixture.
type MixSource struct {
	// Name names the data set in errors and states (its path, say).
	Name string
	// Source is the data set. Closing the mixture closes it.
	Source mlfeed.Source
	// Weight is its share of the sequences drawn, relative to the others' (weights need not
	// add up to one), until the first Schedule entry. Zero draws none.
	Weight float64
}

// MixPhase changes the weights from a global sample position on.
type MixPhase struct {
	// At is the global sample position from which Weights hold; positive, each entry's
	// after the one before.
	At int64
	// Weights are the data sets' new weights, one per data set in order.
	Weights []float64
}

// Mix describes a mixture.
type Mix struct {
	Sources  []MixSource
	Stop     Stop
	Schedule []MixPhase
}

// Mixed is a mixture's source: as an mlfeed.Source it reads the data sets one after the other
// (their chunk tables concatenated), and a Reader made over it draws them by the weights.
type Mixed struct {
	mix    Mix
	schema mlfeed.Schema
	infos  []mlfeed.ChunkInfo
	first  []int // per data set: its first chunk in infos; then len(infos)
	phases []phase

	mu     sync.Mutex
	origin map[*mlfeed.Chunk]int // the data set that returned each chunk, for ReadChunkReuse
}

// phase is the weights from position at on, as thresholds of a 53-bit draw: data set i is
// drawn when the draw is below thr[i] and not below thr[i-1].
type phase struct {
	at  int64
	thr []uint64
	pos []bool // weight above zero
}

// NewMix checks a mixture and returns its source. The data sets must have the same streams
// (names, storage, types and shapes, in order); the error names the first that does not, and
// the stream. Every data set must hold a sequence; weights must be finite, not negative, and
// some positive at every phase.
func NewMix(m Mix) (*Mixed, error) {
	if len(m.Sources) == 0 {
		return nil, fmt.Errorf("%w: a mixture of no data sets", ErrConfig)
	}
	if len(m.Sources) > math.MaxUint16 {
		return nil, fmt.Errorf("%w: a mixture of %d data sets (at most %d)", ErrConfig, len(m.Sources), math.MaxUint16)
	}
	if m.Stop > Never {
		return nil, fmt.Errorf("%w: stopping rule %d", ErrConfig, m.Stop)
	}
	x := &Mixed{mix: m, origin: map[*mlfeed.Chunk]int{}}
	name := func(i int) string {
		if n := m.Sources[i].Name; n != "" {
			return fmt.Sprintf("data set %d (%s)", i, n)
		}
		return fmt.Sprintf("data set %d", i)
	}
	x.schema = m.Sources[0].Source.Schema()
	x.schema.Streams = slices.Clone(x.schema.Streams)
	for i, s := range m.Sources {
		if s.Source == nil {
			return nil, fmt.Errorf("%w: %s has no source", ErrConfig, name(i))
		}
		sc := s.Source.Schema()
		if err := sameStreams(x.schema, sc); err != nil {
			return nil, fmt.Errorf("%w: %s does not have the streams of %s: %s", ErrConfig, name(i), name(0), err)
		}
		x.schema.HasIDs = x.schema.HasIDs && sc.HasIDs
		x.first = append(x.first, len(x.infos))
		infos := s.Source.Chunks()
		if n, _ := mlfeed.Totals(infos); n == 0 {
			return nil, fmt.Errorf("%w: %s holds no sequence", ErrConfig, name(i))
		}
		x.infos = append(x.infos, infos...)
		if len(x.infos) > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than 2^31 chunks", mlfeed.ErrTooLarge)
		}
	}
	x.first = append(x.first, len(x.infos))
	w := make([]float64, len(m.Sources))
	for i, s := range m.Sources {
		w[i] = s.Weight
	}
	p, err := newPhase(0, w)
	if err != nil {
		return nil, err
	}
	x.phases = append(x.phases, p)
	for k, ph := range m.Schedule {
		if len(ph.Weights) != len(m.Sources) {
			return nil, fmt.Errorf("%w: schedule entry %d has %d weights for %d data sets", ErrConfig, k, len(ph.Weights), len(m.Sources))
		}
		if ph.At <= x.phases[len(x.phases)-1].at {
			return nil, fmt.Errorf("%w: schedule entry %d at position %d: positions must be positive and increase", ErrConfig, k, ph.At)
		}
		p, err := newPhase(ph.At, ph.Weights)
		if err != nil {
			return nil, fmt.Errorf("schedule entry %d: %w", k, err)
		}
		x.phases = append(x.phases, p)
	}
	return x, nil
}

// newPhase converts weights into draw thresholds. Only explicitly rounded float64 sums and
// quotients are used, so every platform draws the same.
func newPhase(at int64, w []float64) (phase, error) {
	var total float64
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return phase{}, fmt.Errorf("%w: weight %v of data set %d: weights must be finite and not negative", ErrConfig, v, i)
		}
		total = float64(total + v)
	}
	if total <= 0 || math.IsInf(total, 0) {
		return phase{}, fmt.Errorf("%w: weights %v: some weight must be positive, and their sum finite", ErrConfig, w)
	}
	p := phase{at: at, thr: make([]uint64, len(w)), pos: make([]bool, len(w))}
	var cum float64
	for i, v := range w {
		cum = float64(cum + v)
		p.thr[i] = uint64(float64(cum/total) * (1 << 53))
		p.pos[i] = v > 0
	}
	last := len(w) - 1
	for last > 0 && !p.pos[last] {
		last--
	}
	for i := last; i < len(w); i++ {
		p.thr[i] = 1 << 53 // rounding leaves no draw to a data set of weight zero
	}
	return p, nil
}

// sameStreams says how b's streams differ from a's, or returns nil.
func sameStreams(a, b mlfeed.Schema) error {
	for k := range max(len(a.Streams), len(b.Streams)) {
		if k >= len(a.Streams) {
			return fmt.Errorf("it has stream %q more", b.Streams[k].Name)
		}
		if k >= len(b.Streams) {
			return fmt.Errorf("it lacks stream %q", a.Streams[k].Name)
		}
		x, y := &a.Streams[k], &b.Streams[k]
		switch {
		case x.Name != y.Name:
			return fmt.Errorf("stream %d is %q, not %q", k, y.Name, x.Name)
		case x.Storage != y.Storage || x.Type != y.Type || x.Dim != y.Dim || !slices.Equal(x.SampleShape(), y.SampleShape()):
			return fmt.Errorf("stream %q is %s %s %s, not %s %s %s", x.Name, y.Storage, y.Type, shapeOf(y), x.Storage, x.Type, shapeOf(x))
		}
	}
	return nil
}

func shapeOf(st *mlfeed.Stream) string {
	var d []string
	for _, v := range st.SampleShape() {
		d = append(d, fmt.Sprint(v))
	}
	if len(d) == 0 {
		return "[variable]"
	}
	return "[" + strings.Join(d, "x") + "]"
}

// Mix returns the mixture's description.
func (x *Mixed) Mix() Mix { return x.mix }

// Schema returns the data sets' common streams.
func (x *Mixed) Schema() mlfeed.Schema { return x.schema }

// Chunks returns the data sets' chunk tables, one after the other.
func (x *Mixed) Chunks() []mlfeed.ChunkInfo { return x.infos }

// locate returns the data set of chunk c and its index there.
func (x *Mixed) locate(c int) (int, int) {
	k, found := slices.BinarySearch(x.first, c)
	if !found {
		k--
	}
	for x.first[k+1] == x.first[k] { // (no data set is empty; kept for safety)
		k++
	}
	return k, c - x.first[k]
}

// SourceOf returns the data set (its index in Mix.Sources) that chunk c of the concatenated
// tables (Batch.Origins' Chunk) belongs to, or -1 for no chunk.
func (x *Mixed) SourceOf(c int) int {
	if c < 0 || c >= len(x.infos) {
		return -1
	}
	k, _ := x.locate(c)
	return k
}

// ReadChunk reads chunk i of the concatenated tables.
func (x *Mixed) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return x.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse reads chunk i, decoding into prev only when the same data set returned it.
func (x *Mixed) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(x.infos) {
		return nil, fmt.Errorf("%w: chunk %d of %d", mlfeed.ErrFormat, i, len(x.infos))
	}
	k, c := x.locate(i)
	x.mu.Lock()
	if prev != nil {
		o, ok := x.origin[prev]
		delete(x.origin, prev)
		if !ok || o != k {
			prev = nil // another data set's chunk (maybe its mapped memory): never written into
		}
	}
	x.mu.Unlock()
	ch, err := x.mix.Sources[k].Source.ReadChunkReuse(ctx, c, prev)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	if len(x.origin) >= 1<<12 {
		clear(x.origin) // chunks dropped rather than recycled: forget them (no reuse is safe)
	}
	x.origin[ch] = k
	x.mu.Unlock()
	return ch, nil
}

// SequenceLengths returns the lengths of chunk i's sequences.
func (x *Mixed) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(x.infos) {
		return nil, fmt.Errorf("%w: chunk %d of %d", mlfeed.ErrFormat, i, len(x.infos))
	}
	k, c := x.locate(i)
	return x.mix.Sources[k].Source.SequenceLengths(c)
}

// RawSamples passes on where a data set describes its samples (mlfeed.RawSampler).
func (x *Mixed) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if i < 0 || i >= len(x.infos) {
		return nil, 0, 0, 0, false
	}
	k, c := x.locate(i)
	if rs, is := x.mix.Sources[k].Source.(mlfeed.RawSampler); is {
		return rs.RawSamples(c, stream)
	}
	return nil, 0, 0, 0, false
}

// Close closes every data set.
func (x *Mixed) Close() error {
	var first error
	for _, s := range x.mix.Sources {
		if err := s.Source.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// mixPoint is a point of a mixture's timeline, where a minibatch starts: the global sample
// position, the mixture sweep, and per data set the sequences taken since the start of
// training, and at the start of the mixture sweep.
type mixPoint struct {
	pos   int64
	sweep int64
	taken []int64
	start []int64
}

func (p *mixPoint) copyFrom(o *mixPoint) {
	p.pos, p.sweep = o.pos, o.sweep
	p.taken = append(p.taken[:0], o.taken...)
	p.start = append(p.start[:0], o.start...)
}

// mixSet is one data set of a mixture, as the planner sees it.
type mixSet struct {
	pl    planner   // its own sweeps: its randomizer, and this worker's part of each
	off   int32     // its first chunk in the mixture's table
	n     int64     // sequences per sweep
	plan  sweepPlan // its sweep plan.sweep, once planned
	ready bool
}

// mixPlanner plans a mixture's minibatches: in segments of at least segMin sequences that
// end where a minibatch ends, each planned from where the last one ended (next).
type mixPlanner struct {
	sets    []mixSet
	phases  []phase
	stop    Stop
	seed    uint64 // the draws' stream
	segMin  int
	next    mixPoint // where the next segment starts
	nextSeg int64    // its number
}

// newMixPlanner makes the planner of mixture x for the Reader whose planner is pl and whose
// chunk cache gives the lengths.
func newMixPlanner(x *Mixed, pl *planner, lengths func(int32) ([]int32, error)) *mixPlanner {
	m := &mixPlanner{phases: x.phases, stop: x.mix.Stop, seed: splitmix(pl.rz.seed ^ 0x6d6c66656564), sets: make([]mixSet, len(x.mix.Sources))}
	m.segMin = int(max(1<<16, 4*pl.mbSize, int64(len(x.infos))))
	if mixSegmentForTests > 0 {
		m.segMin = mixSegmentForTests
	}
	for i := range m.sets {
		s := &m.sets[i]
		lo, hi := x.first[i], x.first[i+1]
		s.off = int32(lo)
		s.pl = planner{samples: 0, workers: pl.workers, rank: pl.rank, distribution: pl.distribution,
			rz: randomizer{randomize: pl.rz.randomize, seed: pl.rz.seed + uint64(i)<<32, window: pl.rz.window, sampleBased: pl.rz.sampleBased}}
		off := s.off
		s.pl.lengths = func(c int32) ([]int32, error) { return lengths(off + c) }
		for _, c := range x.infos[lo:hi] {
			s.pl.rz.chunks = append(s.pl.rz.chunks, chunkCounts{c.Sequences, c.Samples})
			s.pl.rz.sequences += c.Sequences
			s.pl.samples += c.Samples
		}
		s.n = int64(s.pl.rz.sequences)
	}
	m.reset(nil)
	return m
}

// reset makes the next segment, number 0, start at pt (nil: the start of training).
func (m *mixPlanner) reset(pt *mixPoint) {
	if pt == nil {
		m.next = mixPoint{taken: make([]int64, len(m.sets)), start: make([]int64, len(m.sets))}
	} else {
		m.next.copyFrom(pt)
	}
	m.nextSeg = 0
}

// splitmix is SplitMix64's output function.
func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// phaseAt returns the weights in force at position pos.
func (m *mixPlanner) phaseAt(pos int64) *phase {
	if len(m.phases) == 1 || pos < m.phases[1].at {
		return &m.phases[0]
	}
	// The last phase that starts at or before pos (phases[0] starts at 0).
	k, found := slices.BinarySearchFunc(m.phases, pos, func(p phase, pos int64) int { return cmp.Compare(p.at, pos) })
	if !found {
		k--
	}
	return &m.phases[k]
}

// draw returns the data set of the sequence that starts at position pos: SplitMix64's output
// at step pos of the stream seeded with seed, its top 53 bits against the thresholds.
func (m *mixPlanner) draw(pos int64) int {
	u := splitmix(m.seed+uint64(pos)*0x9e3779b97f4a7c15) >> 11
	thr := m.phaseAt(pos).thr
	for i, t := range thr {
		if u < t {
			return i
		}
	}
	return len(thr) - 1
}

// exhausted reports whether data set i has ended a sweep within the mixture sweep of pt.
func (m *mixPlanner) exhausted(pt *mixPoint, i int) bool {
	return pt.taken[i]-pt.start[i] >= m.sets[i].n
}

// ended reports whether the mixture sweep of pt has ended at pt.
func (m *mixPlanner) ended(pt *mixPoint) bool {
	switch m.stop {
	case FirstExhausted:
		for i := range m.sets {
			if m.exhausted(pt, i) {
				return true
			}
		}
	case AllExhausted:
		ph := m.phaseAt(pt.pos)
		for i := range m.sets {
			if ph.pos[i] && !m.exhausted(pt, i) {
				return false
			}
		}
		return true
	}
	return false
}

// normalize starts the next mixture sweep at pt when its own has ended: every data set at
// the start of a sweep of its own.
func (m *mixPlanner) normalize(pt *mixPoint) {
	if !m.ended(pt) {
		return
	}
	pt.sweep++
	for i := range m.sets {
		n := m.sets[i].n
		pt.taken[i] = (pt.taken[i] + n - 1) / n * n
		pt.start[i] = pt.taken[i]
	}
}

// sequence returns data set i's k-th sequence since the start of training, whether it is
// this worker's, and its length.
func (m *mixPlanner) sequence(i int, k int64) (seqRef, bool, int64, error) {
	s := &m.sets[i]
	sweep, t := k/s.n, int(k%s.n)
	if !s.ready || s.plan.sweep != sweep {
		s.ready = false
		if err := s.pl.planSweep(sweep, &s.plan); err != nil {
			return seqRef{}, false, 0, err
		}
		s.ready = true
	}
	ref := s.plan.order[t]
	lens, err := s.pl.lengths(ref.chunk)
	if err != nil {
		return seqRef{}, false, 0, err
	}
	return seqRef{ref.chunk + s.off, ref.idx}, s.plan.own[t], int64(lens[ref.idx]), nil
}

// segment plans segment g (the one after the last planned, or 0 after reset) into p: the
// sequences from the point next on, drawn one by one, until a minibatch ends with segMin
// sequences planned, or the mixture sweep ends, or MaxSamples is reached. Minibatches end
// as pl.minibatch ends them, so a segment's end is a minibatch's end whatever segMin is:
// the minibatches do not depend on where segments begin.
func (m *mixPlanner) segment(pl *planner, g int64, p *sweepPlan) error {
	if g != m.nextSeg {
		return fmt.Errorf("minibatch: internal error: mixture segment %d planned after %d", g, m.nextSeg-1)
	}
	pt := &m.next
	m.normalize(pt)
	p.sweep, p.userSweep, p.start, p.endsSweep = g, pt.sweep, pt.pos, false
	p.mixAt.copyFrom(pt)
	p.order, p.own, p.src, p.srcSweep = p.order[:0], p.own[:0], p.src[:0], p.srcSweep[:0]
	limit, _ := pl.ends(pt.pos)
	var global int64
	for pl.maxSamples <= 0 || pt.pos < pl.maxSamples {
		i := m.draw(pt.pos)
		k := pt.taken[i]
		ref, own, n, err := m.sequence(i, k)
		if err != nil {
			return err
		}
		if global > 0 && global+n > pl.mbSize {
			// A minibatch ends before this sequence.
			if len(p.order) >= m.segMin {
				break
			}
			global, limit = 0, endOf(pl, pt.pos)
		}
		p.order = append(p.order, ref)
		p.own = append(p.own, own)
		p.src = append(p.src, uint16(i))
		p.srcSweep = append(p.srcSweep, uint32(k/m.sets[i].n))
		pt.taken[i]++
		pt.pos += n
		global += n
		if m.ended(pt) {
			p.endsSweep = true
			break
		}
		if pt.pos >= limit {
			if len(p.order) >= m.segMin {
				break
			}
			global, limit = 0, endOf(pl, pt.pos)
		}
	}
	p.end = pt.pos
	if len(p.order) == 0 && (pl.maxSamples <= 0 || pt.pos < pl.maxSamples) {
		return fmt.Errorf("minibatch: internal error: empty mixture segment at position %d", pt.pos)
	}
	m.nextSeg = g + 1
	return nil
}

func endOf(pl *planner, pos int64) int64 {
	limit, _ := pl.ends(pos)
	return limit
}

// MixState is the part of a State that places a mixture.
type MixState struct {
	// Sweep is the mixture sweep.
	Sweep int64 `json:"sweep"`
	// Taken is, per data set, the sequences it has given since the start of training, and
	// SweepStart the same at the start of the mixture sweep.
	Taken      []int64 `json:"taken"`
	SweepStart []int64 `json:"sweepStart"`
	// Sequences and Samples are each data set's per sweep, to check that a restore reads
	// the same data.
	Sequences []int64 `json:"sequences"`
	Samples   []int64 `json:"samples"`
	// Stop is the stopping rule's name.
	Stop string `json:"stop"`
}

// mixState returns the state of mixture point pt.
func (m *mixPlanner) state(pt *mixPoint) *MixState {
	st := &MixState{Sweep: pt.sweep, Taken: slices.Clone(pt.taken), SweepStart: slices.Clone(pt.start), Stop: m.stop.String()}
	for i := range m.sets {
		st.Sequences = append(st.Sequences, m.sets[i].n)
		st.Samples = append(st.Samples, m.sets[i].pl.samples)
	}
	return st
}

// point checks a mixture state against the mixture and returns its point at position pos.
func (m *mixPlanner) point(st *MixState, pos int64) (*mixPoint, error) {
	n := len(m.sets)
	if len(st.Taken) != n || len(st.SweepStart) != n || len(st.Sequences) != n || len(st.Samples) != n {
		return nil, fmt.Errorf("%w: taken on a mixture of %d data sets, this is of %d", ErrState, len(st.Sequences), n)
	}
	if st.Stop != m.stop.String() {
		return nil, fmt.Errorf("%w: taken with stopping rule %q, this mixture's is %q", ErrState, st.Stop, m.stop)
	}
	for i := range m.sets {
		s := &m.sets[i]
		if st.Sequences[i] != s.n || st.Samples[i] != s.pl.samples {
			return nil, fmt.Errorf("%w: data set %d: taken on data of %d sequences and %d samples per sweep, this is %d and %d",
				ErrState, i, st.Sequences[i], st.Samples[i], s.n, s.pl.samples)
		}
		if st.SweepStart[i] < 0 || st.Taken[i] < st.SweepStart[i] || st.Taken[i] > math.MaxInt64/2 {
			return nil, fmt.Errorf("%w: data set %d: %d sequences taken, %d at the sweep's start", ErrState, i, st.Taken[i], st.SweepStart[i])
		}
	}
	if st.Sweep < 0 || pos < 0 {
		return nil, fmt.Errorf("%w: position out of range", ErrState)
	}
	return &mixPoint{pos: pos, sweep: st.Sweep, taken: slices.Clone(st.Taken), start: slices.Clone(st.SweepStart)}, nil
}

// mixSegmentForTests, when positive, is the fewest sequences a mixture's segment plans in
// place of the default: tests lower it, to cross segment ends often.
var mixSegmentForTests int
