package minibatch

import (
	"slices"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/prefetch"
)

// Delivery, part two: packing. Each planned minibatch is a job: the sequences the planner
// chose, with the slots of their chunks. Jobs are handed, in order, to Config.Packers packer
// goroutines, which pack each (copy its sequences out of the chunks and lay them out) on a
// thread of the scheduler; Next hands them out in order. When Next needs a job that no packer
// has started, it packs it itself, so the caller's thread works rather than waits, and a
// scheduler of one thread packs everything in Next.

// job is one minibatch: planned (which sequences, from which chunks) on the caller's goroutine,
// then packed into its Batch by a packer or by Next.
type job struct {
	refs  []jobRef
	seq   uint64 // the job's number, counting from 1 in planning order
	batch Batch
	at    position
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

// send hands a planned job to the packers, unless their queue is full: then Next or Ready
// packs it. (Jobs that Next or Ready packed stay queued until a packer skips them, and the
// packers may all wait for threads: a send that waited could wait for the caller itself.)
func (r *Reader) send(j *job) {
	j.state.Store(j.seq << 1)
	select {
	case r.work <- sentJob{j, j.seq}:
		j.sent = true
	default:
	}
}

// packLoop packs the jobs sent to it, on a thread of the scheduler each, until the reader is
// closed.
func (r *Reader) packLoop() {
	defer r.bg.Done()
	for w := range r.work {
		if w.j.state.Load() != w.seq<<1 {
			continue // packed already, by Next or Ready: no thread needed to skip it
		}
		if r.sched.AcquireThread(r.ctx) != nil {
			return
		}
		if w.j.claim(w.seq) {
			r.pack(w.j)
			w.j.done <- struct{}{}
		}
		r.sched.ReleaseThread()
	}
}

// finish makes sure that job j is packed: it packs it on this goroutine unless a packer has
// started it; while a packer packs it, it packs later jobs no packer has started, and waits
// only when there are none.
func (r *Reader) finish(j *job) {
	switch {
	case j.packed:
	case j.sent:
		if j.claim(j.seq) {
			r.pack(j)
			break
		}
		for !r.packedYet(j) {
			if !r.packAhead() {
				<-j.done
				break
			}
		}
	case j.err == nil: // not an error of planning
		r.pack(j)
	}
	j.sent, j.packed = false, true
}

// packAhead packs the oldest queued job that no packer has started, on this goroutine. It
// reports whether there was one.
func (r *Reader) packAhead() bool {
	for _, q := range r.queue {
		if q.sent && q.claim(q.seq) {
			r.pack(q)
			q.sent, q.packed = false, true
			return true
		}
	}
	return false
}

// packedYet reports whether job j is packed, without waiting.
func (r *Reader) packedYet(j *job) bool {
	if j.sent {
		select {
		case <-j.done:
			j.sent, j.packed = false, true
		default:
		}
	}
	return j.packed
}

// drain waits for the planned jobs and frees them and the held one: the position of planning
// is about to move.
func (r *Reader) drain() {
	for _, j := range r.queue {
		if j.sent && !j.claim(j.seq) {
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

// pack copies a planned job's sequences into its batch and lays them out.
func (r *Reader) pack(j *job) {
	defer mmap.Recover(mmap.Catch(), &j.err) // chunks may alias a mapped file that shrinks meanwhile
	b := &j.batch
	b.reset()
	if r.packRaw(j) {
		b.pack()
		return
	}
	b.reserve(j.refs)
	var last *slot
	if len(j.refs) > 0 {
		prefetchSamples(&j.refs[0], b.schema)
	}
	for k, x := range j.refs {
		// Start loading what later sequences will read, so that their cache misses overlap
		// this sequence's copy (a shuffled gather is bound by the latency of those misses):
		// the offsets of the sequence prefetchAhead on, the first values of the one
		// valuesAhead on, and all the samples of the next one, where they are one fixed-size
		// sample.
		if k+prefetchAhead < len(j.refs) {
			prefetchOffsets(&j.refs[k+prefetchAhead])
		}
		if k+valuesAhead < len(j.refs) {
			prefetchValues(&j.refs[k+valuesAhead], b.schema)
		}
		if k+1 < len(j.refs) {
			prefetchSamples(&j.refs[k+1], b.schema)
		}
		if x.s != last {
			r.waitHelping(x.s, j.refs[k+1:])
			if x.s.err != nil {
				j.err = x.s.err
				return
			}
			last = x.s
		}
		if err := b.add(x.s.chunk, x.s.unit, x.s.views, int(x.chunk), int(x.idx), x.n); err != nil {
			j.err = err
			return
		}
	}
	b.pack()
}

// packRaw packs job j as pack does when every chunk it reads is loaded and holds one
// fixed-size sample per sequence in every stream (views: the source's memory, as in a mapped
// file's shuffled sweep, or a decoded chunk's), with nothing to decide per sequence but where
// its samples lie; it reports false, having done nothing, when one is not.
func (r *Reader) packRaw(j *job) bool {
	var last *slot
	for k := range j.refs {
		if s := j.refs[k].s; s != last {
			if !s.loaded.Load() || s.err != nil || s.views == nil {
				return false
			}
			last = s
		}
	}
	b := &j.batch
	sc := b.schema
	n := len(j.refs)
	// Every stream holds one fixed-size sample per sequence: its values and offsets are sized
	// once and filled in place (in the memory the batch has, a caller's included, when it is
	// large enough).
	for i := range b.Data.Streams {
		d := &b.Data.Streams[i]
		size := n * sc.Streams[i].Dim * sc.Streams[i].Type.Size()
		d.Values.Bytes = slices.Grow(d.Values.Bytes[:0], size)[:size]
		d.SeqStart = slices.Grow(d.SeqStart[:0], n+1)[:n+1]
		for q := range d.SeqStart {
			d.SeqStart[q] = int64(q)
		}
	}
	for k := range j.refs {
		x := &j.refs[k]
		if k+valuesAhead < n {
			y := &j.refs[k+valuesAhead]
			for i := range y.s.views {
				prefetch.Bytes(y.s.views[i].sample(int(y.idx)))
			}
		}
		if k+1 < n {
			y := &j.refs[k+1]
			for i := range y.s.views {
				// (A small sample's line was prefetched valuesAhead on.)
				if v := &y.s.views[i]; v.size > smallSample {
					prefetch.Span(v.sample(int(y.idx)))
				}
			}
		}
		for i := range b.Data.Streams {
			v := &x.s.views[i]
			dst := b.Data.Streams[i].Values.Bytes[k*v.size : (k+1)*v.size]
			if v.size <= smallSample && v.swap == 0 {
				// A label or a scalar: a few bytes, copied here rather than by a call.
				for q, c := range v.sample(int(x.idx)) {
					dst[q] = c
				}
				continue
			}
			v.put(dst, int(x.idx))
		}
		if b.Data.IDs != nil && x.s.chunk.IDs != nil {
			b.Data.IDs = append(b.Data.IDs, x.s.chunk.IDs[x.idx])
		}
		b.Origins = append(b.Origins, Origin{int(x.chunk), int(x.idx)})
		b.Samples += x.n
	}
	b.Data.Sequences += n
	b.Sequences += n
	return true
}

// smallSample is the most bytes packRaw copies in its loop, and prefetches with one line.
const smallSample = 8

// prefetchAhead and valuesAhead are how many sequences ahead pack prefetches offsets and
// the first values. The whole of a sample (an MNIST image as float32 is 49 cache lines over
// one or two pages) is prefetched one sequence ahead; two ahead measured no better, and
// without the first-line prefetch four ahead a randomized sweep took about 10% more CPU.
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
		switch {
		case x.s.views != nil:
			prefetch.Bytes(x.s.views[i].sample(int(x.idx)))
			continue
		case x.s.unit[i]:
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

// prefetchSamples prefetches every cache line of x's sample in each stream that holds one
// fixed-size sample per sequence (a raw chunk's views, or a decoded chunk's unit streams), if
// its chunk is loaded: the bytes add will copy.
func prefetchSamples(x *jobRef, sc *mlfeed.Schema) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		if !x.s.unit[i] {
			continue
		}
		if x.s.views != nil {
			prefetch.Span(x.s.views[i].sample(int(x.idx)))
			continue
		}
		size := sc.Streams[i].Dim * x.s.chunk.Streams[i].Values.Type.Size()
		prefetch.Span(x.s.chunk.Streams[i].Values.Bytes[int(x.idx)*size : int(x.idx+1)*size])
	}
}
