package sched

import (
	"context"
	"fmt"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// ReadAhead yields the chunks of a source in a given order, decoding up to Threads() of them
// ahead on the scheduler's helpers while the caller works on the current one. It follows the
// bufio.Scanner loop:
//
//	ra := s.ReadAhead(ctx, src, order, nil)
//	defer ra.Close()
//	for ra.Next() {
//		use(ra.Index(), ra.Chunk())
//	}
//	if err := ra.Err(); err != nil { ... }
//
// The decoded chunks waiting to be used count against the memory budget: a chunk beyond the
// next one is started only while the budget is not spent, so at most the budget plus one chunk
// per thread is held. A scheduler of one thread decodes each chunk in Next, on the caller's
// goroutine.
type ReadAhead struct {
	s       *Scheduler
	src     mlfeed.Source
	order   []int
	recycle bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	slots   map[int]*slot // claimed positions not yet consumed
	started int           // positions [0, started) are claimed
	pos     int           // the position Chunk returns; -1 before the first Next
	ahead   int           // how far past pos a position may be claimed
	free    []*mlfeed.Chunk
	moved   chan struct{} // closed (and replaced) when pos advances or the reader closes

	cur     *mlfeed.Chunk
	curSize int64
	err     error
	closed  bool
}

type slot struct {
	done  chan struct{}
	chunk *mlfeed.Chunk
	size  int64
	err   error
}

// ReadAheadOptions tune a ReadAhead; nil means the zero value.
type ReadAheadOptions struct {
	// Ahead is how many chunks past the current one may be decoding or decoded at once
	// (0: Threads()).
	Ahead int
	// Recycle lets the source decode later chunks into the memory of chunks already used
	// (Source.ReadChunkReuse): a chunk is then valid only until the next call of Next, as
	// with csv.Reader.ReuseRecord.
	Recycle bool
}

// ReadAhead starts reading the chunks order names (indices into src.Chunks(), in the order
// they are to be yielded) and returns the reader that yields them. The chunks are read with a
// ctx derived from ctx that carries s, so decoders may split them with Parallel. Close stops
// the reading.
func (s *Scheduler) ReadAhead(ctx context.Context, src mlfeed.Source, order []int, opts *ReadAheadOptions) *ReadAhead {
	if opts == nil {
		opts = &ReadAheadOptions{}
	}
	ctx, cancel := context.WithCancel(WithContext(ctx, s))
	r := &ReadAhead{
		s: s, src: src, order: order, recycle: opts.Recycle, ctx: ctx, cancel: cancel,
		slots: map[int]*slot{}, pos: -1, ahead: opts.Ahead, moved: make(chan struct{}),
	}
	if r.ahead <= 0 {
		r.ahead = s.threads
	}
	for w := 0; w < s.threads-1 && w < len(order)-1 && w < r.ahead; w++ {
		r.wg.Add(1)
		go r.work()
	}
	return r
}

// work decodes claimed positions on a helper token until there is none left to claim.
func (r *ReadAhead) work() {
	defer r.wg.Done()
	for {
		p, sl, prev, ok := r.claimAhead()
		if !ok {
			r.helpLast()
			return
		}
		if err := r.s.waitHelper(r.ctx); err != nil {
			r.publish(sl, nil, err)
			return
		}
		c, err := r.read(p, prev)
		r.s.doneHelper()
		r.publish(sl, c, err)
	}
}

// claimAhead waits until a position past the current one may be started (within Ahead of it
// and, beyond the next one, within the memory budget) and claims it.
func (r *ReadAhead) claimAhead() (p int, sl *slot, prev *mlfeed.Chunk, ok bool) {
	for {
		r.mu.Lock()
		if r.closed || r.started >= len(r.order) || r.ctx.Err() != nil {
			r.mu.Unlock()
			return 0, nil, nil, false
		}
		p = r.started
		moved := r.moved
		if p-r.pos <= r.ahead {
			r.s.mu.Lock()
			fits := r.s.used < r.s.memory || p <= r.pos+1
			changed := r.s.watchLocked()
			r.s.mu.Unlock()
			if fits {
				sl, prev = r.claimLocked()
				r.mu.Unlock()
				return p, sl, prev, true
			}
			r.mu.Unlock()
			select {
			case <-moved:
			case <-changed:
			case <-r.ctx.Done():
			}
			continue
		}
		r.mu.Unlock()
		select {
		case <-moved:
		case <-r.ctx.Done():
		}
	}
}

// claimLocked claims position r.started; r.mu is held.
func (r *ReadAhead) claimLocked() (*slot, *mlfeed.Chunk) {
	sl := &slot{done: make(chan struct{})}
	r.slots[r.started] = sl
	r.started++
	var prev *mlfeed.Chunk
	if n := len(r.free); n > 0 {
		prev = r.free[n-1]
		r.free = r.free[:n-1]
	}
	return sl, prev
}

// helpLast takes pieces of the chunks still being decoded in parallel (Parallel) once no
// chunk is left to claim: a helper that would stop helps finish the last chunks instead.
func (r *ReadAhead) helpLast() {
	for r.ctx.Err() == nil && r.s.tryHelper() {
		ran, _ := r.s.help()
		r.s.doneHelper()
		if !ran {
			return
		}
	}
}

// lastKey marks the ctx of the decode of one of a ReadAhead's last chunks (see Pieces).
type lastKey struct{}

// Pieces returns how many pieces a decoder should cut the work it is about to give Parallel
// with ctx into: 1 when ctx carries no scheduler; one per idle thread of the scheduler plus
// the caller's, since a piece no other thread takes costs only the joining of the pieces; and
// Threads() for the last chunks a ReadAhead decodes, whose pieces the threads that run out of
// chunks take as they come free.
func Pieces(ctx context.Context) int {
	s := FromContext(ctx)
	if s == nil {
		return 1
	}
	if ctx.Value(lastKey{}) != nil {
		return s.threads
	}
	return 1 + s.Idle()
}

func (r *ReadAhead) read(p int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	ctx := r.ctx
	if p >= len(r.order)-(r.s.threads-1) {
		ctx = context.WithValue(ctx, lastKey{}, true)
	}
	i := r.order[p]
	if n := mlfeed.NumChunks(r.src); i < 0 || i >= n {
		return nil, fmt.Errorf("mlfeed: chunk %d outside [0, %d)", i, n)
	}
	var c *mlfeed.Chunk
	// A fault on a mapped input file that shrinks meanwhile is an error naming it.
	err := mmap.Guard(func() (err error) {
		if r.recycle {
			c, err = r.src.ReadChunkReuse(ctx, i, prev)
		} else {
			c, err = r.src.ReadChunk(ctx, i)
		}
		return err
	})
	return c, err
}

func (r *ReadAhead) publish(sl *slot, c *mlfeed.Chunk, err error) {
	if err == nil {
		sl.size = c.MemSize()
		r.s.Account(sl.size)
	}
	sl.chunk, sl.err = c, err
	close(sl.done)
}

// Next advances to the next chunk of the order, decoding it on the calling goroutine if no
// helper has started it. It returns false at the end or on an error (see Err).
func (r *ReadAhead) Next() bool {
	r.mu.Lock()
	if r.err != nil || r.closed {
		r.mu.Unlock()
		return false
	}
	r.dropCurrentLocked()
	r.pos++
	close(r.moved)
	r.moved = make(chan struct{})
	if r.pos >= len(r.order) {
		r.mu.Unlock()
		return false
	}
	sl := r.slots[r.pos]
	inline := sl == nil
	var prev *mlfeed.Chunk
	if inline {
		sl, prev = r.claimLocked()
	}
	r.mu.Unlock()
	if inline {
		c, err := r.read(r.pos, prev)
		r.publish(sl, c, err)
	}
	// While a helper decodes this chunk, decode later ones no helper has started, or take
	// pieces of a chunk that a helper decodes in parallel (Parallel).
wait:
	for {
		select {
		case <-sl.done:
			break wait
		default:
		}
		if r.helpAhead(sl) {
			continue
		}
		ran, added := r.s.help()
		if ran {
			continue
		}
		select {
		case <-sl.done:
			break wait
		case <-added:
		case <-r.ctx.Done():
			r.mu.Lock()
			r.err = r.ctx.Err()
			r.mu.Unlock()
			return false
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.slots, r.pos)
	if sl.err != nil {
		r.err = sl.err
		return false
	}
	r.cur, r.curSize = sl.chunk, sl.size
	return true
}

// helpAhead decodes, on the caller's goroutine, the next position no helper has claimed,
// when the chunk the caller waits for (sl) is not decoded yet and the position may be started
// (within Ahead and the budget). It reports whether it did.
func (r *ReadAhead) helpAhead(sl *slot) bool {
	select {
	case <-sl.done:
		return false
	default:
	}
	r.mu.Lock()
	p := r.started
	if p >= len(r.order) || p-r.pos > r.ahead || r.ctx.Err() != nil {
		r.mu.Unlock()
		return false
	}
	r.s.mu.Lock()
	fits := r.s.used < r.s.memory
	r.s.mu.Unlock()
	if !fits {
		r.mu.Unlock()
		return false
	}
	next, prev := r.claimLocked()
	r.mu.Unlock()
	c, err := r.read(p, prev)
	r.publish(next, c, err)
	return true
}

// dropCurrentLocked releases the current chunk's memory and, when recycling, keeps the chunk
// for a later decode; r.mu is held.
func (r *ReadAhead) dropCurrentLocked() {
	if r.cur == nil {
		return
	}
	r.s.Release(r.curSize)
	if r.recycle {
		r.free = append(r.free, r.cur)
	}
	r.cur, r.curSize = nil, 0
}

// Chunk returns the chunk Next advanced to. Without Recycle it stays valid after Next.
func (r *ReadAhead) Chunk() *mlfeed.Chunk { return r.cur }

// Index returns the index (in the source's chunk table) of the chunk Next advanced to.
func (r *ReadAhead) Index() int { return r.order[r.pos] }

// Position returns the position in the order of the chunk Next advanced to.
func (r *ReadAhead) Position() int { return r.pos }

// Err returns the error that stopped Next, as the source returned it, or nil.
func (r *ReadAhead) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close stops the reading ahead, waits for the helpers and releases the memory of the chunks
// not yet used. It does not close the source.
func (r *ReadAhead) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.cancel()
	close(r.moved)
	r.moved = make(chan struct{})
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropCurrentLocked()
	for p, sl := range r.slots {
		<-sl.done
		if sl.err == nil {
			r.s.Release(sl.size)
		}
		delete(r.slots, p)
	}
	r.free = nil
	return nil
}
