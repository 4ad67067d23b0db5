package minibatch

import "time"

// Ready waits up to d for Next to be able to return at once, and reports whether it can: the
// next minibatch is packed (or failed), or there are no more. While it waits it packs, on the
// calling goroutine, minibatches no packer has started whose chunks are loaded, as Next would:
// the caller's thread is one of the scheduler's, so a caller that waited idle would leave a
// core unused. It reports false without waiting when Next has more to do than take what is
// packed: pack a minibatch whose chunks are still being read, or plan one from chunks whose
// sequence lengths it has not read (the first minibatches, with Config.Packers -1 or one
// thread, after an error of planning). A caller that must stay responsive while data is read
// (the Python package, where Ctrl-C is handled between calls) calls Next directly when Ready
// reports true, and on a goroutine of its own otherwise. Call Ready where Next is called, never
// at the same time.
func (r *Reader) Ready(d time.Duration) bool {
	switch {
	case r.done:
		return true
	case len(r.queue) == 0:
		return r.planEnd
	case len(r.free) > 0 && !r.planEnd || r.known < len(r.lengths) || r.sched.Threads() <= 1:
		return false
	}
	wait := r.queue[:1]
	if !r.planEnd && r.drainsNow() {
		wait = r.queue // Next packs the sweep's last minibatches before planning the next
	}
	var t *time.Timer
	for _, j := range wait {
		for !r.packedYet(j) {
			if j.err != nil && !j.sent { // an error of planning: Next returns it
				break
			}
			if !j.sent && j.state.Load() != j.seq<<1 {
				return false // Next packs it: there are no packers
			}
			if r.packLoaded(j) || r.packAheadLoaded() {
				continue
			}
			// A packer packs j, or j's chunks are still being read.
			if d <= 0 {
				return false
			}
			if t == nil {
				t = time.NewTimer(d)
				defer t.Stop()
			}
			var packed, loaded chan struct{}
			if j.sent {
				packed = j.done
			}
			if s := unloaded(j); s != nil {
				loaded = s.done
			}
			select {
			case <-packed:
				j.sent, j.packed = false, true
			case <-loaded:
			case <-t.C:
				return false
			}
		}
	}
	return true
}

// packLoaded packs job j on this goroutine if no packer has started it and every chunk it reads
// is loaded, so that packing it waits for nothing. It reports whether it did.
func (r *Reader) packLoaded(j *job) bool {
	if j.state.Load() != j.seq<<1 || unloaded(j) != nil || !j.claim(j.seq) {
		return false // claimed or packed already, or waiting for a chunk
	}
	r.pack(j)
	j.sent, j.packed = false, true
	return true
}

// unloaded returns the first slot job j reads that is not loaded yet, or nil.
func unloaded(j *job) *slot {
	var last *slot
	for _, x := range j.refs {
		if x.s != last {
			if !x.s.loaded.Load() {
				return x.s
			}
			last = x.s
		}
	}
	return nil
}

// packAheadLoaded packs the oldest queued job that packLoaded can pack. It reports whether
// there was one.
func (r *Reader) packAheadLoaded() bool {
	for _, q := range r.queue {
		if !q.packed && q.err == nil && r.packLoaded(q) {
			return true
		}
	}
	return false
}
