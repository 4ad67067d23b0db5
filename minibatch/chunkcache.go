package minibatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/keep"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// The chunk cache holds the chunks that planned minibatches read. The planning cursor
// (cursor.go) requests each chunk, Config.Prefetch ahead of its first use, and lets it go
// after its last use in the sweep. A request starts a load on a thread of the scheduler;
// whoever needs a chunk first (a packer, or Next) and finds its load not started loads it on
// its own goroutine instead, so that no thread waits for a thread. A request for a chunk that
// is in memory already (one packed raw from the source's memory, or one kept with
// KeepDataInMemory) is complete at once. A chunk let go is, once every minibatch that reads
// it is packed, kept as a spare to decode a later chunk into (Source.ReadChunkReuse).
//
// The memory of the chunks held, spare or kept counts against the scheduler's budget (a
// ReadAhead or a decoder sharing the scheduler sees it): chunks are read ahead, and kept as
// spares, only while the budget is not spent. The chunks the planned minibatches read are
// loaded whatever the budget: a randomization window larger than the budget holds more.
type chunkCache struct {
	src    mlfeed.Source
	schema *mlfeed.Schema
	infos  []mlfeed.ChunkInfo
	sched  *sched.Scheduler
	ctx    context.Context // carries sched, for the source's decoders
	bg     sync.WaitGroup  // chunk loads and packers

	prefetch  int
	recycling bool // chunks no minibatch reads any more are decoded into
	// decoded is set once a chunk is decoded rather than packed raw from the source's memory
	// (RawSampler): until then there is nothing to recycle.
	decoded atomic.Bool
	// keep holds every chunk decoded, with KeepDataInMemory; keptMem is their memory,
	// counted against the budget once each.
	keep    *keep.Chunks[*keptChunk]
	keptMem atomic.Int64
	// pending is the memory the loads requested and not done yet are expected to take, each
	// as much as the largest chunk decoded so far (largest): read-ahead requests many chunks
	// at once, before any of them counts.
	pending atomic.Int64
	largest atomic.Int64

	slots   []*slot // per chunk: being read or held, or nil
	live    int     // slots not nil
	maxLive int     // the most slots not nil at once
	retired []*slot // slots let go, oldest first, whose chunks may still be read
	spare   []*slot // slots of chunks no job reads any more, to decode into

	// Sequence lengths (lengths.go).
	defining  int  // stream that defines the minibatch size, or -1
	definesMB bool // Config.DefinesMBSize is set
	lengths   [][]int32
	known     int // chunks whose entry of lengths is set
	ones      []int32

	// Chunks packed straight from the source's memory (mlfeed.RawSampler), built once each
	// (raw.go).
	raw       mlfeed.RawSampler
	rawChunks []atomic.Pointer[rawChunk]
	identity  []int64 // 0, 1, 2, ...: every raw chunk's sequence starts
}

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
	raw     bool      // the chunk's memory is not the slot's (RawSampler, or kept): never decoded into
	err     error
	// mem is the memory counted against the budget for the chunk, until the slot is dropped.
	mem     atomic.Int64
	dropped atomic.Bool
	est     atomic.Int64 // the memory expected while the load is to come (chunkCache.pending)
	// Planning side only: the (sweep, position) of the chunk's last use, and the number of
	// the last job that reads it.
	until   [2]int64
	lastJob uint64
}

// keptChunk is a chunk kept with KeepDataInMemory, with what packing needs of it.
type keptChunk struct {
	chunk *mlfeed.Chunk
	unit  []bool
	views []rawView
}

// closed is the done channel of slots complete when requested.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// request starts loading chunk c, to be held until the position until, or extends the life of
// the slot holding it.
func (cc *chunkCache) request(c int32, until [2]int64) *slot {
	if s := cc.slots[c]; s != nil {
		if s.until[0] < until[0] || s.until[0] == until[0] && s.until[1] < until[1] {
			s.until = until
		}
		return s
	}
	return cc.startLoad(c, until)
}

// startLoad makes chunk c's slot, to be held until the position until, and starts loading it.
func (cc *chunkCache) startLoad(c int32, until [2]int64) *slot {
	s := &slot{c: c, until: until}
	cc.setSlot(c, s)
	if cc.inMemory(s) {
		return s
	}
	s.done = make(chan struct{})
	if est := cc.largest.Load(); est > 0 {
		s.est.Store(est)
		cc.pending.Add(est)
	}
	if n := len(cc.spare); n > 0 {
		sp := cc.spare[n-1]
		cc.spare[n-1] = nil
		cc.spare = cc.spare[:n-1]
		s.prev = sp.chunk
		cc.drop(sp) // the new chunk counts its own memory once decoded
	}
	if cc.sched.Threads() > 1 {
		// Load in the background once a thread is free. With one thread, the chunk is
		// loaded where it is first needed.
		cc.bg.Add(1)
		go func() {
			defer cc.bg.Done()
			if cc.sched.AcquireThread(cc.ctx) != nil {
				return
			}
			defer cc.sched.ReleaseThread()
			cc.load(s)
		}()
	}
	return s
}

// inMemory completes slot s at once when its chunk is in memory already: raw, and described
// before, or kept. It reports whether it did.
func (cc *chunkCache) inMemory(s *slot) bool {
	var chunk *mlfeed.Chunk
	var unit []bool
	var views []rawView
	if rc := cc.rawReady(s.c); rc != nil {
		chunk, unit, views = rc.chunk, rc.unit, rc.views
	} else if k, ok := cc.kept(s.c); ok {
		chunk, unit, views = k.chunk, k.unit, k.views
	} else {
		return false
	}
	s.chunk, s.unit, s.views, s.raw = chunk, unit, views, true
	s.claimed.Store(true)
	s.done = closed
	s.loaded.Store(true)
	return true
}

// kept returns chunk c when KeepDataInMemory keeps it already.
func (cc *chunkCache) kept(c int32) (*keptChunk, bool) {
	if cc.keep == nil {
		return nil, false
	}
	return cc.keep.Kept(int(c))
}

// wait returns once slot s is loaded, loading it on the calling goroutine if no one has
// started to.
func (cc *chunkCache) wait(s *slot) {
	if s.loaded.Load() {
		return
	}
	if !cc.load(s) {
		<-s.done
	}
}

// waitHelping is wait for a packer: while another goroutine loads s, it loads the chunks of
// later sequences of its minibatch (rest) that no one has started, rather than wait idle
// with those chunks not loading (the chunks requested before the first minibatch outnumber
// the threads that load them).
func (cc *chunkCache) waitHelping(s *slot, rest []jobRef) {
	if s.loaded.Load() || cc.load(s) {
		return
	}
	for k := range rest {
		if s.loaded.Load() {
			return
		}
		if o := rest[k].s; !o.loaded.Load() {
			cc.load(o)
		}
	}
	<-s.done
}

// load decodes slot s's chunk unless another goroutine has claimed it; it reports whether it
// did.
func (cc *chunkCache) load(s *slot) bool {
	if !s.claimed.CompareAndSwap(false, true) {
		return false
	}
	s.err = mmap.Guard(func() (err error) {
		if err := cc.ctx.Err(); err != nil {
			return err
		}
		if rc := cc.rawOf(s.c); rc != nil {
			s.chunk, s.views, s.unit, s.raw = rc.chunk, rc.views, rc.unit, true
			return nil
		}
		cc.decoded.Store(true)
		if cc.keep != nil {
			k, err := cc.keptChunk(s.c)
			if err != nil {
				return err
			}
			s.chunk, s.views, s.unit, s.raw = k.chunk, k.views, k.unit, true
			return nil
		}
		if s.chunk, err = cc.src.ReadChunkReuse(cc.ctx, int(s.c), s.prev); err != nil {
			return err
		}
		if err := cc.check(s.c, s.chunk); err != nil {
			return err
		}
		s.unit = unitStreams(cc.schema, s.chunk)
		s.views = unitViews(cc.schema, s.chunk, s.unit)
		cc.account(s, s.chunk.MemSize())
		return nil
	})
	s.prev = nil
	cc.settle(s)
	close(s.done)
	s.loaded.Store(true)
	return true
}

// settle takes slot s's expected memory off the pending loads', once: its load is done, or it
// was dropped.
func (cc *chunkCache) settle(s *slot) {
	if n := s.est.Swap(0); n != 0 {
		cc.pending.Add(-n)
	}
}

// keptChunk returns chunk c with KeepDataInMemory, decoded by the first call that asks for it
// and counted against the budget then.
func (cc *chunkCache) keptChunk(c int32) (*keptChunk, error) {
	k, fresh, err := cc.keep.Chunk(cc.ctx, int(c))
	if err != nil {
		return nil, err
	}
	if fresh {
		n := k.chunk.MemSize()
		cc.keptMem.Add(n)
		cc.sched.Account(n)
	}
	return k, nil
}

// readKept decodes chunk c for keep (KeepDataInMemory).
func (cc *chunkCache) readKept(ctx context.Context, c int) (*keptChunk, error) {
	ch, err := cc.src.ReadChunk(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := cc.check(int32(c), ch); err != nil {
		return nil, err
	}
	unit := unitStreams(cc.schema, ch)
	return &keptChunk{ch, unit, unitViews(cc.schema, ch, unit)}, nil
}

// check checks that a chunk read is not nil and has the shape its table entry and the schema
// promise, so that packing cannot index out of range.
func (cc *chunkCache) check(c int32, ch *mlfeed.Chunk) error {
	if ch == nil {
		return fmt.Errorf("%w: chunk %d read as nil", mlfeed.ErrFormat, c)
	}
	if ch.Sequences != cc.infos[c].Sequences || len(ch.Streams) != len(cc.schema.Streams) {
		return fmt.Errorf("%w: chunk %d has %d sequences and %d streams, its table entry and schema %d and %d",
			mlfeed.ErrFormat, c, ch.Sequences, len(ch.Streams), cc.infos[c].Sequences, len(cc.schema.Streams))
	}
	for i := range ch.Streams {
		d := &ch.Streams[i]
		if len(d.SeqStart) != ch.Sequences+1 || d.SampleStart != nil && int64(len(d.SampleStart)) != d.Samples()+1 {
			return fmt.Errorf("%w: chunk %d: stream %q has inconsistent offsets", mlfeed.ErrFormat, c, cc.schema.Streams[i].Name)
		}
	}
	return nil
}

// account counts n bytes of slot s's chunk against the budget, until the slot is dropped
// (which may have happened while it loaded).
func (cc *chunkCache) account(s *slot, n int64) {
	if n <= 0 {
		return
	}
	for l := cc.largest.Load(); n > l && !cc.largest.CompareAndSwap(l, n); l = cc.largest.Load() {
	}
	cc.sched.Account(n)
	s.mem.Store(n)
	if s.dropped.Load() {
		cc.release(s)
	}
}

// drop lets slot s's chunk go from the cache: its memory no longer counts.
func (cc *chunkCache) drop(s *slot) {
	s.dropped.Store(true)
	cc.settle(s)
	cc.release(s)
}

// release gives back the memory counted for slot s, once.
func (cc *chunkCache) release(s *slot) {
	if n := s.mem.Swap(0); n != 0 {
		cc.sched.Release(n)
	}
}

// full reports whether the chunks held and those being loaded have spent the scheduler's
// memory budget.
func (cc *chunkCache) full() bool { return cc.sched.InUse()+cc.pending.Load() >= cc.sched.Memory() }

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

// setSlot sets chunk c's slot to s (nil: lets it go), counting the slots held.
func (cc *chunkCache) setSlot(c int32, s *slot) {
	switch {
	case cc.slots[c] == nil && s != nil:
		cc.live++
		cc.maxLive = max(cc.maxLive, cc.live)
	case cc.slots[c] != nil && s == nil:
		cc.live--
	}
	cc.slots[c] = s
}

// letGo lets chunk c's slot s go after its last use: retired, to become a spare once the jobs
// that read it are packed, when chunks are recycled.
func (cc *chunkCache) letGo(c int32, s *slot) {
	cc.setSlot(c, nil)
	if cc.recycling {
		cc.retired = append(cc.retired, s)
	} else {
		cc.drop(s)
	}
}

// clearSlots lets every slot go.
func (cc *chunkCache) clearSlots() {
	for c, s := range cc.slots {
		if s != nil {
			cc.drop(s)
			cc.slots[c] = nil
		}
	}
	cc.live = 0
}

// clearRetired drops the retired slots: no job will read them.
func (cc *chunkCache) clearRetired() {
	for k, s := range cc.retired {
		cc.drop(s)
		cc.retired[k] = nil
	}
	cc.retired = cc.retired[:0]
}

// clearSpare drops the spares.
func (cc *chunkCache) clearSpare() {
	for k, s := range cc.spare {
		cc.drop(s)
		cc.spare[k] = nil
	}
	cc.spare = cc.spare[:0]
}

// recycle keeps, to decode into, the chunks of the retired slots that no job after job seq
// reads, when every job up to seq has been packed. Spares and slots held together stay
// within the most slots held at once (the window and the chunks read ahead) plus the
// read-ahead's count, and within the memory budget: a chunk beyond that is let go. So the
// window's chunks are decoded into again from sweep to sweep, but spares do not pile up on
// top of a full window.
func (cc *chunkCache) recycle(seq uint64) {
	limit := cc.maxLive + cc.prefetch - cc.live
	k := 0
	for ; k < len(cc.retired) && cc.retired[k].lastJob <= seq; k++ {
		// A raw chunk's memory is the source's: it is never decoded into.
		if s := cc.retired[k]; s.loaded.Load() && s.err == nil && !s.raw && len(cc.spare) < limit && !cc.full() {
			cc.spare = append(cc.spare, s)
		} else {
			cc.drop(s)
		}
		cc.retired[k] = nil
	}
	cc.retired = cc.retired[:copy(cc.retired, cc.retired[k:])]
}

// close drops every chunk held, spare or kept, once the loads have ended.
func (cc *chunkCache) close() {
	cc.clearSlots()
	cc.clearRetired()
	cc.clearSpare()
	if n := cc.keptMem.Swap(0); n != 0 {
		cc.sched.Release(n)
	}
}
