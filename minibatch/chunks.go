package minibatch

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// Delivery, part one: the chunks. The planner names the chunks this worker needs in order of
// first use; the Reader requests them Config.Prefetch ahead of the minibatch being planned.
// A request starts a load on a thread of the scheduler; whoever needs a chunk first (a
// packer, or Next) and finds its load not started loads it on its own goroutine instead, so
// that no thread waits for a thread. A chunk is let go after its last use in the sweep
// (unless KeepDataInMemory), and, once every minibatch that reads it is packed, kept as a
// spare to decode a later chunk into (Source.ReadChunkReuse).

// slot is a chunk being loaded or held. chunk, unit and err are set before done is closed
// and loaded is set.
type slot struct {
	c       int32         // the chunk's index
	prev    *mlfeed.Chunk // a spare chunk to decode into, or nil
	claimed atomic.Bool   // a goroutine has started loading
	done    chan struct{}
	loaded  atomic.Bool // done is closed: a cheaper test than receiving from it
	chunk   *mlfeed.Chunk
	unit    []bool    // per stream: one fixed-size dense sample per sequence, sample q at q
	views   []rawView // where the samples lie, when every stream is unit (packRaw)
	raw     bool      // views are the source's memory (RawSampler): the chunk has none of its own
	err     error
	// Planning side only: the (sweep, position) of the chunk's last use, and the number of
	// the last job that reads it.
	until   [2]int64
	lastJob uint64
}

// request starts loading chunk c for plan p, or extends the life of the slot holding it.
func (r *Reader) request(c int32, p *sweepPlan) *slot {
	until := [2]int64{p.sweep, int64(p.lastUse[c])}
	if s := r.slots[c]; s != nil {
		if s.until[0] < until[0] || s.until[0] == until[0] && s.until[1] < until[1] {
			s.until = until
		}
		return s
	}
	return r.startLoad(c, until)
}

// startLoad makes chunk c's slot, to be held until the position until, and starts loading it.
func (r *Reader) startLoad(c int32, until [2]int64) *slot {
	s := &slot{c: c, done: make(chan struct{}), until: until}
	r.setSlot(c, s)
	if n := len(r.spare); n > 0 {
		s.prev = r.spare[n-1]
		r.spare[n-1] = nil
		r.spare = r.spare[:n-1]
	}
	if r.sched.Threads() > 1 {
		// Load in the background once a thread is free. With one thread, the chunk is
		// loaded where it is first needed.
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			if r.sched.AcquireThread(r.ctx) != nil {
				return
			}
			defer r.sched.ReleaseThread()
			r.load(s)
		}()
	}
	return s
}

// wait returns once slot s is loaded, loading it on the calling goroutine if no one has
// started to.
func (r *Reader) wait(s *slot) {
	if s.loaded.Load() {
		return
	}
	if !r.load(s) {
		<-s.done
	}
}

// waitHelping is wait for a packer: while another goroutine loads s, it loads the chunks of
// later sequences of its minibatch (rest) that no one has started, rather than wait idle
// with those chunks not loading (the chunks requested before the first minibatch outnumber
// the threads that load them).
func (r *Reader) waitHelping(s *slot, rest []jobRef) {
	if s.loaded.Load() || r.load(s) {
		return
	}
	for k := range rest {
		if s.loaded.Load() {
			return
		}
		if o := rest[k].s; !o.loaded.Load() {
			r.load(o)
		}
	}
	<-s.done
}

// load decodes slot s's chunk unless another goroutine has claimed it; it reports whether it
// did.
func (r *Reader) load(s *slot) bool {
	if !s.claimed.CompareAndSwap(false, true) {
		return false
	}
	s.err = mmap.Guard(func() (err error) {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if rc := r.rawOf(s.c); rc != nil {
			s.chunk, s.views, s.unit, s.raw = rc.chunk, rc.views, rc.unit, true
			return nil
		}
		r.decoded.Store(true)
		if s.chunk, err = r.src.ReadChunkReuse(r.ctx, int(s.c), s.prev); err != nil {
			return err
		}
		if s.chunk == nil {
			return fmt.Errorf("%w: chunk %d read as nil", mlfeed.ErrFormat, s.c)
		}
		if err := r.checkChunk(s.c, s.chunk); err != nil {
			return err
		}
		s.unit = unitStreams(&r.schema, s.chunk)
		s.views = unitViews(&r.schema, s.chunk, s.unit)
		return nil
	})
	s.prev = nil
	close(s.done)
	s.loaded.Store(true)
	return true
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

// unitStreams reports for each stream of a checked chunk whether it holds one fixed-size dense
// sample per sequence, sample q at q, with all its values.
func unitStreams(sc *mlfeed.Schema, c *mlfeed.Chunk) []bool {
	unit := make([]bool, len(c.Streams))
	for i := range c.Streams {
		d, st := &c.Streams[i], &sc.Streams[i]
		if d.SampleStart != nil || st.Dim <= 0 || st.Storage != mlfeed.Dense || d.Values.Type.IsVarLen() ||
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

// unitViews returns views of a decoded chunk's values, so that packRaw packs it as it packs a
// raw chunk, when every stream is unit and of the schema's type; else nil.
func unitViews(sc *mlfeed.Schema, c *mlfeed.Chunk, unit []bool) []rawView {
	for i, u := range unit {
		if !u || c.Streams[i].Values.Type != sc.Streams[i].Type {
			return nil
		}
	}
	views := make([]rawView, len(unit))
	for i := range views {
		size := sc.Streams[i].Dim * sc.Streams[i].Type.Size()
		views[i] = rawView{b: c.Streams[i].Values.Bytes, stride: size, size: size}
	}
	return views
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
		r.setSlot(ref.chunk, nil)
		if r.recycling {
			r.retired = append(r.retired, s)
		}
	}
	return s, nil
}

// pump requests chunks ahead of use, into the next sweep when this one's are all requested.
func (r *Reader) pump() error {
	for {
		ahead := r.req - r.used
		if r.reqNext {
			ahead = len(r.cur.need) - r.used + r.req
		}
		if ahead >= r.prefetch || !r.readAhead && ahead >= 0 {
			return nil
		}
		if !r.reqNext {
			if r.req < len(r.cur.need) {
				r.request(r.cur.need[r.req].chunk, r.cur)
				r.req++
				continue
			}
			if r.pl.lastSweep(r.cur.sweep) {
				return nil
			}
			if err := r.pl.planSweep(r.cur.sweep+1, r.nxt); err != nil {
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

// setSlot sets chunk c's slot to s (nil: lets it go), counting the slots held.
func (r *Reader) setSlot(c int32, s *slot) {
	switch {
	case r.slots[c] == nil && s != nil:
		r.live++
		r.maxLive = max(r.maxLive, r.live)
	case r.slots[c] != nil && s == nil:
		r.live--
	}
	r.slots[c] = s
}

// clearSlots lets every slot go.
func (r *Reader) clearSlots() {
	clear(r.slots)
	r.live = 0
}

// recycle keeps, to decode into, the chunks of the retired slots that no job after job seq
// reads, when every job up to seq has been packed. Spares and slots held together stay
// within the most slots held at once (the window and the chunks read ahead) plus the
// read-ahead's count: a chunk beyond that is let go. So the window's chunks are decoded into
// again from sweep to sweep, but spares do not pile up on top of a full window.
func (r *Reader) recycle(seq uint64) {
	limit := r.maxLive + r.prefetch - r.live
	k := 0
	for ; k < len(r.retired) && r.retired[k].lastJob <= seq; k++ {
		// A raw chunk's memory is the source's: it is never decoded into.
		if s := r.retired[k]; s.loaded.Load() && s.err == nil && !s.raw && len(r.spare) < limit {
			r.spare = append(r.spare, s.chunk)
		}
		r.retired[k] = nil
	}
	r.retired = r.retired[:copy(r.retired, r.retired[k:])]
}

// oneSampleEach reports whether chunk table entry info says that every sequence of its chunk
// is one sample long: the table counts samples as the planner does (no defining stream), and
// sequences are at least one sample long.
func (r *Reader) oneSampleEach(info mlfeed.ChunkInfo) bool {
	return info.Samples == int64(info.Sequences) && r.cfg.DefinesMBSize == ""
}

// lengthsOf returns the lengths of chunk c's sequences (the planner's lengths).
func (r *Reader) lengthsOf(c int32) ([]int32, error) {
	if l := r.lengths[c]; l != nil {
		return l, nil
	}
	info := r.infos[c]
	var l []int32
	switch {
	case r.oneSampleEach(info):
		l = r.ones[:info.Sequences]
	case r.defining < 0:
		// The source's lengths are each sequence's longest stream's, as ours.
		ls, err := r.src.SequenceLengths(int(c))
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
			r.wait(s)
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
			d := &ch.Streams[r.defining]
			l[q] = int32(d.SeqStart[q+1] - d.SeqStart[q])
		}
	}
	r.lengths[c] = l
	if l != nil {
		r.known++
	}
	return l, nil
}
