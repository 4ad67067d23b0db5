package minibatch

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/prefetch"
)

// Reader delivers minibatches from a source. Use it like bufio.Scanner:
//
//	for r.Next() {
//		b := r.Batch()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Minibatches are planned in order on the caller's goroutine and packed (their data copied
// out of the chunks) ahead of time by Config.Packers background goroutines, several at once;
// chunks are read and decoded ahead by others (Config.Prefetch). A Reader is not safe for
// concurrent use. It does not close the source; Close it before closing the source.
type Reader struct {
	src      mlfeed.Source
	cfg      Config
	schema   mlfeed.Schema
	infos    []mlfeed.ChunkInfo
	defining int   // stream that defines the minibatch size, or -1
	mbSize   int64 // samples per minibatch
	samples  int64 // samples per sweep
	rz       randomizer
	workers  int
	rank     int
	prefetch int
	packers  int           // background packing goroutines; 0 packs in Next
	lengther mlfeed.Source // the source, when its SequenceLengths count as the Reader does; else nil
	reuser   mlfeed.Source // the source, when chunks are recycled; else nil

	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup // chunk loads and packers

	// Planning: the position up to which minibatches have been planned.
	cur, nxt *sweepPlan // the current sweep, and the next one once planned ahead
	next     int        // position of the next sequence in cur.order
	pos      int64      // global sample position of that sequence
	used     int        // entries of cur.need whose first use has come
	req      int        // entries of cur.need requested (in the next sweep's need once reqNext)
	reqNext  bool       // requests have moved on to nxt
	planned  bool
	planEnd  bool            // planning has reached the end or an error
	seq      uint64          // number of the last job planned
	retired  []*slot         // slots planning let go, oldest first, whose chunks may still be read
	spare    []*mlfeed.Chunk // chunks no job reads any more, to decode into

	// Delivery: the position after the minibatch the caller holds.
	at    position
	done  bool
	err   error
	held  *job
	free  []*job // jobs not in use
	queue []*job // planned jobs, oldest first
	work  chan *job
	// waiting is the job Next waits for, if any.
	waiting atomic.Pointer[job]
	empty   Batch // what Batch returns before the first minibatch

	lengths [][]int32
	ones    []int32
	slots   []*slot // per chunk: being read or held, or nil
}

// position is a point of the reader's progress: the sweep, the position of the next sequence
// in its order, and the global sample position of that sequence.
type position struct {
	sweep   int64
	next    int
	pos     int64
	planned bool
}

// job is one minibatch: planned (which sequences, from which chunks) on the caller's goroutine,
// then packed into its Batch by a packer.
type job struct {
	refs   []jobRef
	seq    uint64 // the job's number, counting from 1 in planning order
	batch  Batch
	at     position
	err    error
	sent   bool          // handed to the packers, and done not yet received
	packed bool          // known to be packed (consumer side)
	done   chan struct{} // a packer signals here when the batch is packed
}

// jobRef is one of a job's sequences: sequence idx of chunk, n samples long, from slot s.
type jobRef struct {
	s     *slot
	chunk int32
	idx   int32
	n     int64
}

// sweepPlan is a plan plus what this worker needs from it.
type sweepPlan struct {
	plan
	own     []bool      // per sequence position: this worker's
	need    []needEntry // this worker's chunks in order of first use
	lastUse []int32     // per chunk: position of its last use by this worker, or -1
}

type needEntry struct {
	chunk, first int32
}

// slot is a chunk being read or held. chunk and err are set before done is closed and loaded
// is set.
type slot struct {
	done   chan struct{}
	loaded atomic.Bool // done is closed: a cheaper test than receiving from it
	chunk  *mlfeed.Chunk
	unit   []bool // per stream: one fixed-size dense sample per sequence, sample q at q
	err    error
	// Planning side only: the (sweep, position) of the chunk's last use, and the number of
	// the last job that reads it.
	until   [2]int64
	lastJob uint64
}

// New returns a Reader over src. It reads no data until the first call to Next.
func New(src mlfeed.Source, cfg Config) (*Reader, error) {
	r := &Reader{src: src, cfg: cfg, schema: src.Schema(), infos: src.Chunks(), defining: -1}
	if cfg.MinibatchSize < 0 {
		return nil, fmt.Errorf("%w: negative minibatch size %d", ErrConfig, cfg.MinibatchSize)
	}
	r.mbSize = int64(cfg.MinibatchSize)
	if r.mbSize == 0 {
		r.mbSize = DefaultMinibatchSize
	}
	if cfg.EpochSize < 0 || cfg.MaxSamples < 0 || cfg.MaxSweeps < 0 || cfg.RandomizationWindow < 0 {
		return nil, fmt.Errorf("%w: negative epoch size, maximum or window", ErrConfig)
	}
	if cfg.DefinesMBSize != "" {
		r.defining = r.schema.Index(cfg.DefinesMBSize)
		if r.defining < 0 {
			return nil, fmt.Errorf("%w: definesMBSize: no stream %q", ErrConfig, cfg.DefinesMBSize)
		}
	} else {
		for i := range r.schema.Streams {
			if r.schema.Streams[i].DefinesMBSize {
				r.defining = i
			}
		}
		r.lengther = src
	}
	if !cfg.KeepDataInMemory {
		r.reuser = src
	}
	var err error
	if r.workers, r.rank, err = workers(cfg); err != nil {
		return nil, err
	}
	switch {
	case cfg.Prefetch == 0:
		r.prefetch = 2
	case cfg.Prefetch > 0:
		r.prefetch = cfg.Prefetch
	}
	switch {
	case cfg.Packers == 0:
		r.packers = min(runtime.GOMAXPROCS(0), DefaultPackers)
	case cfg.Packers > 0:
		r.packers = cfg.Packers
	}
	r.rz = randomizer{randomize: !cfg.NoRandomize, seed: cfg.RandomizationSeed,
		window: cfg.RandomizationWindow, sampleBased: cfg.SampleBasedRandomizationWindow}
	maxLen := 0
	for _, c := range r.infos {
		if c.Sequences < 0 || c.Samples < 0 {
			return nil, fmt.Errorf("%w: negative counts in the chunk table", mlfeed.ErrFormat)
		}
		r.rz.chunks = append(r.rz.chunks, chunkCounts{c.Sequences, c.Samples})
		r.rz.sequences += c.Sequences
		r.samples += c.Samples
		maxLen = max(maxLen, c.Sequences)
		if r.rz.sequences > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than 2^31 sequences", mlfeed.ErrTooLarge)
		}
	}
	r.lengths = make([][]int32, len(r.infos))
	r.ones = make([]int32, maxLen)
	for i := range r.ones {
		r.ones[i] = 1
	}
	r.slots = make([]*slot, len(r.infos))
	r.cur, r.nxt = &sweepPlan{}, &sweepPlan{}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.empty.init(&r.schema, cfg.FrameMode)
	r.empty.reset()
	// Jobs: one the caller holds, and one more than there are packers in flight, so that a
	// packer always has the next minibatch to pack while the caller waits for the oldest.
	for range r.packers + 2 {
		j := &job{done: make(chan struct{}, 1)}
		j.batch.init(&r.schema, cfg.FrameMode)
		r.free = append(r.free, j)
	}
	return r, nil
}

// workers returns the worker count and rank from the configuration or the environment.
func workers(cfg Config) (n, rank int, err error) {
	n, rank = cfg.Workers, cfg.Rank
	if n == 0 {
		n, rank = 1, 0
		if ws := os.Getenv("WORLD_SIZE"); ws != "" {
			if n, err = strconv.Atoi(ws); err != nil || n < 1 {
				return 0, 0, fmt.Errorf("%w: WORLD_SIZE=%q", ErrConfig, ws)
			}
			rs := os.Getenv("RANK")
			if rank, err = strconv.Atoi(rs); err != nil {
				return 0, 0, fmt.Errorf("%w: RANK=%q with WORLD_SIZE=%d", ErrConfig, rs, n)
			}
		}
	}
	if n < 1 || rank < 0 || rank >= n {
		return 0, 0, fmt.Errorf("%w: rank %d of %d workers", ErrConfig, rank, n)
	}
	return n, rank, nil
}

// Schema returns the source's schema.
func (r *Reader) Schema() mlfeed.Schema { return r.schema }

// SweepSamples returns the number of samples in one sweep.
func (r *Reader) SweepSamples() int64 { return r.samples }

// Position returns the global sample position of the next sequence: the one after the last
// minibatch Next returned.
func (r *Reader) Position() int64 { return r.at.pos }

// Batch returns the minibatch the last successful Next prepared. It is valid until the next
// call to Next, Restore, SetPosition or Close.
func (r *Reader) Batch() *Batch {
	if r.held != nil {
		return &r.held.batch
	}
	return &r.empty
}

// Err returns the error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// Close stops background reads and packing, waits for them to end, and releases the chunks
// held. It does not close the source.
func (r *Reader) Close() error {
	if r.ctx.Err() != nil {
		return nil
	}
	r.cancel()
	if r.work != nil {
		close(r.work)
	}
	r.bg.Wait()
	clear(r.slots)
	r.held, r.queue = nil, nil
	r.done = true
	return nil
}

func (r *Reader) fail(err error) bool {
	r.err = err
	r.done = true
	return false
}

// Next prepares the next minibatch. It returns false at the end (MaxSweeps or MaxSamples
// reached, or an empty source) or on an error, which Err then returns.
func (r *Reader) Next() bool {
	if r.held != nil {
		r.recycle(r.held.seq)
		r.free = append(r.free, r.held)
		r.held = nil
	}
	if r.done {
		return false
	}
	if r.reuser != nil {
		// Chunks that only minibatches packed already read can go to the spares now.
		var seq uint64
		for _, q := range r.queue {
			if q.sent {
				select {
				case <-q.done:
					q.sent, q.packed = false, true
				default:
				}
			}
			if !q.packed {
				break
			}
			seq = q.seq
		}
		r.recycle(seq)
	}
	if r.packers > 0 && r.work == nil {
		r.work = make(chan *job, len(r.free))
		for range r.packers {
			r.bg.Add(1)
			go r.packLoop()
		}
	}
	// Plan as far ahead as there are free jobs, handing each to the packers.
	for len(r.free) > 0 && !r.planEnd {
		if r.reuser != nil && len(r.queue) > 0 && r.planned && r.next >= len(r.cur.order) {
			// The sweep's minibatches are all planned. Let them be packed before planning
			// the next sweep, whose first minibatches need most chunks at once: then those
			// are decoded into the memory of this sweep's, not into new memory (a pause of
			// a minibatch or two per sweep, instead of twice the memory).
			for _, q := range r.queue {
				r.finish(q)
			}
			r.recycle(r.seq)
		}
		j := r.free[len(r.free)-1]
		if !r.planNext(j) {
			break
		}
		r.free = r.free[:len(r.free)-1]
		r.queue = append(r.queue, j)
		if r.work != nil && j.err == nil {
			j.sent = true
			r.work <- j
		}
	}
	if len(r.queue) == 0 {
		r.done = true
		clear(r.spare)
		r.spare = r.spare[:0]
		return false
	}
	j := r.queue[0]
	copy(r.queue, r.queue[1:])
	r.queue = r.queue[:len(r.queue)-1]
	r.finish(j)
	r.held = j
	if j.err != nil {
		return r.fail(j.err)
	}
	r.at = j.at
	return true
}

// finish makes sure that job j is packed: it waits for the packer it was handed to, or packs
// it on this goroutine.
func (r *Reader) finish(j *job) {
	switch {
	case j.packed:
	case j.sent:
		r.waiting.Store(j)
		<-j.done
		r.waiting.Store(nil)
	case j.err == nil: // not an error of planning
		r.pack(j)
	}
	j.sent, j.packed = false, true
}

// recycle keeps, to decode into, the chunks of the retired slots that no job after job seq
// reads, when every job up to seq has been packed. The spares are never more than the chunks
// the randomization window held at once, and a few prefetched.
func (r *Reader) recycle(seq uint64) {
	k := 0
	for ; k < len(r.retired) && r.retired[k].lastJob <= seq; k++ {
		if s := r.retired[k]; s.loaded.Load() && s.err == nil {
			r.spare = append(r.spare, s.chunk)
		}
		r.retired[k] = nil
	}
	r.retired = r.retired[:copy(r.retired, r.retired[k:])]
}

// packLoop packs the jobs sent to it until the reader is closed.
func (r *Reader) packLoop() {
	defer r.bg.Done()
	for j := range r.work {
		r.pack(j)
		j.done <- struct{}{}
		if r.waiting.Load() == j {
			// The caller waits for this minibatch: the send put its goroutine next in
			// line on this thread, but it would run only once this packer blocks. Let
			// it run now, so that it hands the minibatch out and plans the next ones.
			runtime.Gosched()
		}
	}
}

// pack copies a planned job's sequences into its batch and lays them out.
func (r *Reader) pack(j *job) {
	defer mmap.Recover(mmap.Catch(), &j.err) // chunks may alias a mapped file that shrinks meanwhile
	b := &j.batch
	b.reset()
	var last *slot
	for k, x := range j.refs {
		// Start loading what later sequences will read, so that their cache misses overlap
		// this sequence's copy (a shuffled gather is bound by the latency of those misses):
		// the offsets of the sequence prefetchAhead on, the values of the one valuesAhead on.
		if k+prefetchAhead < len(j.refs) {
			prefetchOffsets(&j.refs[k+prefetchAhead])
		}
		if k+valuesAhead < len(j.refs) {
			prefetchValues(&j.refs[k+valuesAhead], b.schema)
		}
		if x.s != last {
			if !x.s.loaded.Load() {
				<-x.s.done
			}
			if x.s.err != nil {
				j.err = x.s.err
				return
			}
			last = x.s
		}
		if err := b.add(x.s.chunk, x.s.unit, int(x.chunk), int(x.idx), x.n); err != nil {
			j.err = err
			return
		}
	}
	b.pack()
}

// prefetchAhead and valuesAhead are how many sequences ahead pack prefetches offsets and
// values.
const prefetchAhead, valuesAhead = 8, 4

// prefetchOffsets prefetches the start of x's sequence in each stream, if its chunk is loaded.
func prefetchOffsets(x *jobRef) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		if !x.s.unit[i] {
			prefetch.Int64s(x.s.chunk.Streams[i].SeqStart[x.idx:])
		}
	}
}

// prefetchValues prefetches the first values of x's sequence in each stream (the first sample
// offsets, for streams that have them), if its chunk is loaded.
func prefetchValues(x *jobRef, sc *mlfeed.Schema) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		d := &x.s.chunk.Streams[i]
		if x.s.unit[i] {
			prefetch.Bytes(d.Values.Bytes[int(x.idx)*sc.Streams[i].Dim*d.Values.Type.Size():])
			continue
		}
		s0 := d.SeqStart[x.idx]
		switch {
		case d.SampleStart != nil:
			prefetch.Int64s(d.SampleStart[s0:])
		case d.Values.Strings == nil:
			if o := s0 * int64(sc.Streams[i].Dim*d.Values.Type.Size()); o < int64(len(d.Values.Bytes)) {
				prefetch.Bytes(d.Values.Bytes[o:])
			}
		}
	}
}

// unitStreams reports for each stream of a checked chunk whether it holds one fixed-size dense
// sample per sequence, sample q at q, with all its values.
func unitStreams(sc *mlfeed.Schema, c *mlfeed.Chunk) []bool {
	unit := make([]bool, len(c.Streams))
	for i := range c.Streams {
		d, st := &c.Streams[i], &sc.Streams[i]
		if d.SampleStart != nil || st.Dim <= 0 || st.Storage != mlfeed.Dense || d.Values.Type == mlfeed.String ||
			d.Values.Type.Size()*st.Dim*c.Sequences != len(d.Values.Bytes) {
			continue
		}
		unit[i] = true
		for q, v := range d.SeqStart {
			if v != int64(q) {
				unit[i] = false
				break
			}
		}
	}
	return unit
}

// planNext plans the next minibatch into j: its sequences, and the chunks they come from,
// requested ahead. It returns false at the end; an error is planned as a job carrying it.
func (r *Reader) planNext(j *job) bool {
	j.refs, j.err, j.packed = j.refs[:0], nil, false
	if r.planEnd {
		return false
	}
	r.seq++
	j.seq = r.seq
	if r.rz.sequences == 0 {
		r.planEnd = true
		return false
	}
	if !r.planned {
		if err := r.startSweep(0); err != nil {
			return r.planFail(j, err)
		}
	}
	if r.next >= len(r.cur.order) {
		if r.cfg.MaxSweeps > 0 && r.cur.sweep+1 >= r.cfg.MaxSweeps {
			r.planEnd = true
			return false
		}
		if err := r.startSweep(r.cur.sweep + 1); err != nil {
			return r.planFail(j, err)
		}
	}
	if r.cfg.MaxSamples > 0 && r.pos >= r.cfg.MaxSamples || r.cfg.MaxSweeps > 0 && r.cur.sweep >= r.cfg.MaxSweeps {
		r.planEnd = true
		return false
	}
	limit, epochEnd := int64(math.MaxInt64), int64(math.MaxInt64)
	if e := r.cfg.EpochSize; e > 0 {
		epochEnd = (r.pos/e + 1) * e
		limit = epochEnd
	}
	if m := r.cfg.MaxSamples; m > 0 && m < limit {
		limit = m
	}
	var global int64
	p := r.cur
	for r.next < len(p.order) {
		t := r.next
		ref := p.order[t]
		lens, err := r.lengthsOf(ref.chunk)
		if err != nil {
			return r.planFail(j, err)
		}
		n := int64(lens[ref.idx])
		if global > 0 && global+n > r.mbSize {
			break
		}
		if r.cfg.FrameMode && n != 1 {
			return r.planFail(j, fmt.Errorf("%w: frame mode: sequence %d of chunk %d has %d samples", ErrFrameMode, ref.idx, ref.chunk, n))
		}
		if p.own[t] {
			s, err := r.take(t, ref)
			if err != nil {
				return r.planFail(j, err)
			}
			j.refs = append(j.refs, jobRef{s, ref.chunk, ref.idx, n})
		}
		global += n
		r.pos += n
		r.next++
		if r.next == len(p.order) {
			// A sweep ends at its table's sample count even if decoded lengths disagree.
			r.pos = (p.sweep + 1) * r.samples
		}
		if r.pos >= limit {
			break
		}
	}
	m := &j.batch // the packer leaves these fields alone
	m.Sweep = p.sweep
	m.Position = r.pos
	m.GlobalSamples = global
	m.EndOfSweep = r.next == len(p.order)
	m.EndOfEpoch = r.pos >= epochEnd
	if m.EndOfSweep && r.cfg.EpochSize == 0 {
		m.EndOfEpoch = false
	}
	j.at = position{p.sweep, r.next, r.pos, true}
	return true
}

// planFail plans j as the error err and ends planning.
func (r *Reader) planFail(j *job, err error) bool {
	j.err = err
	r.planEnd = true
	return true
}

// take returns the slot of this worker's sequence at position t, requesting the chunk if
// needed and chunks ahead of it, and lets the slot go after the chunk's last use.
func (r *Reader) take(t int, ref seqRef) (*slot, error) {
	p := r.cur
	for r.used < len(p.need) && int(p.need[r.used].first) <= t {
		r.used++
	}
	if err := r.pump(); err != nil {
		return nil, err
	}
	s := r.slots[ref.chunk]
	if s == nil {
		s = r.request(ref.chunk, p)
	}
	s.lastJob = r.seq
	if int(p.lastUse[ref.chunk]) == t && s.until == [2]int64{p.sweep, int64(t)} && !r.cfg.KeepDataInMemory {
		r.slots[ref.chunk] = nil
		if r.reuser != nil {
			r.retired = append(r.retired, s)
		}
	}
	return s, nil
}

// drain waits for the planned jobs and frees them and the held one: the position of planning
// is about to move.
func (r *Reader) drain() {
	for _, j := range r.queue {
		if j.sent {
			<-j.done
		}
		j.sent = false
		r.free = append(r.free, j)
	}
	r.queue = r.queue[:0]
	if r.held != nil {
		r.free = append(r.free, r.held)
		r.held = nil
	}
	clear(r.retired)
	r.retired = r.retired[:0]
}

// request starts reading chunk c for plan p, or extends the life of the slot holding it.
func (r *Reader) request(c int32, p *sweepPlan) *slot {
	until := [2]int64{p.sweep, int64(p.lastUse[c])}
	if s := r.slots[c]; s != nil {
		if s.until[0] < until[0] || s.until[0] == until[0] && s.until[1] < until[1] {
			s.until = until
		}
		return s
	}
	s := &slot{done: make(chan struct{}), until: until}
	r.slots[c] = s
	var prev *mlfeed.Chunk
	if n := len(r.spare); n > 0 {
		prev = r.spare[n-1]
		r.spare[n-1] = nil
		r.spare = r.spare[:n-1]
	}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		s.err = mmap.Guard(func() (err error) {
			if prev != nil {
				s.chunk, err = r.reuser.ReadChunkReuse(r.ctx, int(c), prev)
			} else {
				s.chunk, err = r.src.ReadChunk(r.ctx, int(c))
			}
			return err
		})
		if s.err == nil && s.chunk == nil {
			s.err = fmt.Errorf("%w: chunk %d read as nil", mlfeed.ErrFormat, c)
		}
		if s.err == nil {
			s.err = r.checkChunk(c, s.chunk)
		}
		if s.err == nil {
			s.unit = unitStreams(&r.schema, s.chunk)
		}
		close(s.done)
		s.loaded.Store(true)
	}()
	return s
}

// checkChunk checks that a chunk read has the shape its table entry and the schema promise,
// so that packing cannot index out of range.
func (r *Reader) checkChunk(c int32, ch *mlfeed.Chunk) error {
	if ch.Sequences != r.infos[c].Sequences || len(ch.Streams) != len(r.schema.Streams) {
		return fmt.Errorf("%w: chunk %d has %d sequences and %d streams, its table entry and schema %d and %d",
			mlfeed.ErrFormat, c, ch.Sequences, len(ch.Streams), r.infos[c].Sequences, len(r.schema.Streams))
	}
	for i := range ch.Streams {
		d := &ch.Streams[i]
		if len(d.SeqStart) != ch.Sequences+1 || d.SampleStart != nil && int64(len(d.SampleStart)) != d.Samples()+1 {
			return fmt.Errorf("%w: chunk %d: stream %q has inconsistent offsets", mlfeed.ErrFormat, c, r.schema.Streams[i].Name)
		}
	}
	return nil
}

// pump requests chunks ahead of use, into the next sweep when this one's are all requested.
func (r *Reader) pump() error {
	for {
		ahead := r.req - r.used
		if r.reqNext {
			ahead = len(r.cur.need) - r.used + r.req
		}
		if ahead >= r.prefetch {
			return nil
		}
		if !r.reqNext {
			if r.req < len(r.cur.need) {
				r.request(r.cur.need[r.req].chunk, r.cur)
				r.req++
				continue
			}
			if r.cfg.MaxSweeps > 0 && r.cur.sweep+1 >= r.cfg.MaxSweeps {
				return nil
			}
			if err := r.planSweep(r.cur.sweep+1, r.nxt); err != nil {
				return err
			}
			r.reqNext, r.req = true, 0
			continue
		}
		if r.req >= len(r.nxt.need) {
			return nil
		}
		r.request(r.nxt.need[r.req].chunk, r.nxt)
		r.req++
	}
}

// startSweep makes sweep s current, at its start.
func (r *Reader) startSweep(s int64) error {
	if r.planned && r.reqNext && r.nxt.sweep == s {
		r.cur, r.nxt = r.nxt, r.cur
		r.reqNext = false
	} else {
		if err := r.planSweep(s, r.cur); err != nil {
			return err
		}
		r.req, r.reqNext = 0, false
	}
	for c, sl := range r.slots {
		if sl != nil && sl.until[0] < s && !r.cfg.KeepDataInMemory {
			r.slots[c] = nil
		}
	}
	r.planned = true
	r.next, r.used = 0, 0
	r.pos = s * r.samples
	if r.cfg.TraceLevel >= 2 && r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "minibatch: sweep %d: %d sequences, %d samples, %d of %d chunks for worker %d of %d\n",
			s, len(r.cur.order), r.samples, len(r.cur.need), len(r.infos), r.rank, r.workers)
	}
	return nil
}

// planSweep computes sweep s's order and this worker's part of it into p.
func (r *Reader) planSweep(s int64, p *sweepPlan) error {
	r.rz.plan(s, &p.plan)
	q := len(p.order)
	p.own = resize(p.own, q)
	switch {
	case r.workers == 1:
		for t := range p.own {
			p.own[t] = true
		}
	case r.cfg.Distribution == CNTKCompatible && r.rz.randomize:
		for t, ref := range p.order {
			p.own[t] = int(p.chunkPos[ref.chunk])%r.workers == r.rank
		}
	case r.cfg.Distribution == CNTKCompatible:
		for t := range p.own {
			p.own[t] = t%r.workers == r.rank
		}
	default:
		if err := r.balanced(p); err != nil {
			return err
		}
	}
	p.lastUse = resize(p.lastUse, len(r.infos))
	for c := range p.lastUse {
		p.lastUse[c] = -1
	}
	p.need = p.need[:0]
	for t, ref := range p.order {
		if !p.own[t] {
			continue
		}
		if p.lastUse[ref.chunk] < 0 {
			p.need = append(p.need, needEntry{ref.chunk, int32(t)})
		}
		p.lastUse[ref.chunk] = int32(t)
	}
	return nil
}

// balanced marks the sequences whose first sample, in the sweep's chunk order, falls in this
// worker's equal share [lo, hi) of the sweep's samples.
func (r *Reader) balanced(p *sweepPlan) error {
	n, k := int64(r.workers), int64(r.rank)
	share := func(k int64) int64 { return r.samples/n*k + r.samples%n*k/n }
	lo, hi := share(k), share(k+1)
	// ownSeq[c] holds the ownership of each sequence of a chunk that straddles lo or hi.
	var straddling map[int32][]bool
	for pos, c := range p.chunkOrder {
		a, e := p.chunkStart[pos], p.chunkStart[pos+1]
		if a >= lo && e <= hi || e <= lo || a >= hi || a == e {
			continue
		}
		lens, err := r.lengthsOf(c)
		if err != nil {
			return err
		}
		own := make([]bool, len(lens))
		start := a
		for i, l := range lens {
			own[i] = start >= lo && start < hi
			start += int64(l)
		}
		if straddling == nil {
			straddling = map[int32][]bool{}
		}
		straddling[c] = own
	}
	for t, ref := range p.order {
		pos := p.chunkPos[ref.chunk]
		a, e := p.chunkStart[pos], p.chunkStart[pos+1]
		switch {
		case straddling[ref.chunk] != nil:
			p.own[t] = straddling[ref.chunk][ref.idx]
		case a == e: // a chunk of empty sequences goes with the share its position falls in
			p.own[t] = a >= lo && a < hi || k == n-1 && a == hi
		default:
			p.own[t] = a >= lo && e <= hi
		}
	}
	return nil
}

// lengthsOf returns the lengths of chunk c's sequences.
func (r *Reader) lengthsOf(c int32) ([]int32, error) {
	if l := r.lengths[c]; l != nil {
		return l, nil
	}
	info := r.infos[c]
	var l []int32
	switch {
	case info.Samples == int64(info.Sequences) && r.cfg.DefinesMBSize == "":
		// The table counts samples as we do, and sequences are at least one sample long:
		// every sequence is one sample long.
		l = r.ones[:info.Sequences]
	case r.lengther != nil:
		ls, err := r.lengther.SequenceLengths(int(c))
		if err != nil {
			return nil, err
		}
		if len(ls) != info.Sequences {
			return nil, fmt.Errorf("%w: chunk %d: %d sequence lengths for %d sequences", mlfeed.ErrFormat, c, len(ls), info.Sequences)
		}
		l = make([]int32, len(ls))
		for i, v := range ls {
			if v < 0 || v > math.MaxInt32 {
				return nil, fmt.Errorf("%w: chunk %d: sequence length %d", mlfeed.ErrFormat, c, v)
			}
			l[i] = int32(v)
		}
	default:
		var ch *mlfeed.Chunk
		if s := r.slots[c]; s != nil {
			<-s.done
			if s.err != nil {
				return nil, s.err
			}
			ch = s.chunk
		} else {
			var err error
			if ch, err = r.src.ReadChunk(r.ctx, int(c)); err != nil {
				return nil, err
			}
		}
		if ch.Sequences != info.Sequences {
			return nil, fmt.Errorf("%w: chunk %d has %d sequences, its table entry %d", mlfeed.ErrFormat, c, ch.Sequences, info.Sequences)
		}
		l = make([]int32, ch.Sequences)
		for q := range l {
			if r.defining >= 0 {
				d := &ch.Streams[r.defining]
				l[q] = int32(d.SeqStart[q+1] - d.SeqStart[q])
			} else {
				l[q] = int32(ch.SequenceLength(q))
			}
		}
	}
	r.lengths[c] = l
	return l, nil
}
