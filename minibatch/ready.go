package minibatch

import "time"

// Ready waits up to d for Next to be able to return at once, and reports whether it can: the
// next minibatch is packed (or failed), or there are no more. It reports false without waiting
// when Next has more to do than take what the packers packed: pack a minibatch itself, or plan
// one from chunks whose sequence lengths it has not read (the first minibatches, with
// Config.Packers -1 or one thread, after an error of planning). A caller that must stay
// responsive while data is read (the Python package, where Ctrl-C is handled between calls)
// calls Next directly when Ready reports true, and on a goroutine of its own otherwise. Call
// Ready where Next is called, never at the same time.
func (r *Reader) Ready(d time.Duration) bool {
	switch {
	case r.done:
		return true
	case len(r.queue) == 0:
		return r.planEnd
	case len(r.free) > 0 || r.known < len(r.lengths) || r.sched.Threads() <= 1:
		return false
	}
	wait := r.queue[:1]
	if r.recycling && !r.planEnd && r.planned && r.next >= len(r.cur.order) {
		wait = r.queue // Next packs the sweep's last minibatches before planning the next
	}
	var t *time.Timer
	for _, j := range wait {
		if r.packedYet(j) {
			continue
		}
		if !j.sent {
			if j.err != nil { // an error of planning: Next returns it
				continue
			}
			return false
		}
		if d <= 0 {
			return false
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-j.done:
			j.sent, j.packed = false, true
		case <-t.C:
			return false
		}
	}
	return true
}
