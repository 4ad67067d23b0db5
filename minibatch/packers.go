package minibatch

import "sync/atomic"

// The packers. Each planned minibatch is a job: the sequences the planner chose, with the
// slots of their chunks. Jobs are handed, in order, to Config.Packers packer goroutines, which
// pack each (pack.go) on a thread of the scheduler; Next hands them out in order. When Next
// needs a job that no packer has started, it packs it itself, so the caller's thread works
// rather than waits, and a scheduler of one thread packs everything in Next.

// packing holds a Reader's jobs and runs its packers.
type packing struct {
	cc      *chunkCache
	packers int // packing goroutines; 0 packs in Next
	work    chan sentJob
	held    *job   // the job whose minibatch the caller holds
	free    []*job // jobs not in use
	queue   []*job // planned jobs, oldest first
}

// job is one minibatch: planned (which sequences, from which chunks) on the caller's goroutine,
// then packed into its Batch by a packer or by Next.
type job struct {
	refs  []jobRef
	seq   uint64 // the job's number, counting from 1 in planning order
	batch Batch
	at    position
	mix   mixPoint // a mixture's point at, of its own memory
	err   error
	// state is seq<<1 while the job waits to be packed and seq<<1|1 once a goroutine has
	// claimed it: a packer that receives a job planned over since, or one Next packed, finds
	// the state changed and leaves it.
	state  atomic.Uint64
	sent   bool          // handed to the packers, and not known to be packed (consumer side)
	packed bool          // known to be packed (consumer side)
	done   chan struct{} // a packer that claimed the job signals here when it is packed
}

// jobRef is one of a job's sequences: sequence idx of chunk, n samples long, from slot s.
type jobRef struct {
	s     *slot
	chunk int32
	idx   int32
	n     int64
}

// sentJob is a job handed to the packers, with the number it was planned as.
type sentJob struct {
	j   *job
	seq uint64
}

// claim reports whether the caller is the one to pack job j, planned as job seq.
func (j *job) claim(seq uint64) bool { return j.state.CompareAndSwap(seq<<1, seq<<1|1) }

// start starts the packers, once.
func (p *packing) start() {
	if p.packers == 0 || p.work != nil {
		return
	}
	p.work = make(chan sentJob, 2*len(p.free))
	for range p.packers {
		p.cc.bg.Add(1)
		go p.packLoop()
	}
}

// stop ends the packers (Close; they end once the jobs sent are done or skipped).
func (p *packing) stop() {
	if p.work != nil {
		close(p.work)
	}
}

// send hands a planned job to the packers, unless their queue is full: then Next or Ready
// packs it. (Jobs that Next or Ready packed stay queued until a packer skips them, and the
// packers may all wait for threads: a send that waited could wait for the caller itself.)
func (p *packing) send(j *job) {
	j.state.Store(j.seq << 1)
	select {
	case p.work <- sentJob{j, j.seq}:
		j.sent = true
	default:
	}
}

// packLoop packs the jobs sent to it, on a thread of the scheduler each, until the reader is
// closed.
func (p *packing) packLoop() {
	cc := p.cc
	defer cc.bg.Done()
	for w := range p.work {
		if w.j.state.Load() != w.seq<<1 {
			continue // packed already, by Next or Ready: no thread needed to skip it
		}
		if cc.sched.AcquireThread(cc.ctx) != nil {
			return
		}
		if w.j.claim(w.seq) {
			p.pack(w.j)
			w.j.done <- struct{}{}
		}
		cc.sched.ReleaseThread()
	}
}

// finish makes sure that job j is packed: it packs it on this goroutine unless a packer has
// started it; while a packer packs it, it packs later jobs no packer has started, and waits
// only when there are none.
func (p *packing) finish(j *job) {
	switch {
	case j.packed:
	case j.sent:
		if j.claim(j.seq) {
			p.pack(j)
			break
		}
		for !p.packedYet(j) {
			if !p.packAhead() {
				<-j.done
				break
			}
		}
	case j.err == nil: // not an error of planning
		p.pack(j)
	}
	j.sent, j.packed = false, true
}

// packAhead packs the oldest queued job that no packer has started, on this goroutine. It
// reports whether there was one.
func (p *packing) packAhead() bool {
	for _, q := range p.queue {
		if q.sent && q.claim(q.seq) {
			p.pack(q)
			q.sent, q.packed = false, true
			return true
		}
	}
	return false
}

// packedYet reports whether job j is packed, without waiting.
func (p *packing) packedYet(j *job) bool {
	if j.sent {
		select {
		case <-j.done:
			j.sent, j.packed = false, true
		default:
		}
	}
	return j.packed
}

// packedUpTo returns the number of the last job of the queue up to which every job is packed
// (0: none), without waiting.
func (p *packing) packedUpTo() uint64 {
	var seq uint64
	for _, q := range p.queue {
		if !p.packedYet(q) {
			break
		}
		seq = q.seq
	}
	return seq
}

// deliver removes the oldest planned job from the queue, packs it (finish) and holds it.
func (p *packing) deliver() *job {
	j := p.queue[0]
	copy(p.queue, p.queue[1:])
	p.queue = p.queue[:len(p.queue)-1]
	p.finish(j)
	p.held = j
	return j
}

// releaseHeld frees the held job.
func (p *packing) releaseHeld() {
	if p.held != nil {
		p.free = append(p.free, p.held)
		p.held = nil
	}
}

// drain waits for the planned jobs and frees them and the held one: the position of planning
// is about to move.
func (p *packing) drain() {
	for _, j := range p.queue {
		if j.sent && !j.claim(j.seq) {
			<-j.done
		}
		j.sent = false
		p.free = append(p.free, j)
	}
	p.queue = p.queue[:0]
	p.releaseHeld()
	p.cc.clearRetired()
}
