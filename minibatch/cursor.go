package minibatch

import (
	"fmt"
	"io"
)

// The cursor walks the pure planner (planner.go) forward, one minibatch at a time, on the
// caller's goroutine: it keeps the position up to which minibatches are planned, and tells the
// chunk cache (chunkcache.go) which chunks to request ahead and when each chunk's last use
// has been planned.

// cursor is the planning position of a Reader.
type cursor struct {
	pl       planner
	cc       *chunkCache
	cur, nxt *sweepPlan // the current sweep, and the next one once planned ahead
	next     int        // position of the next sequence in cur.order
	pos      int64      // global sample position of that sequence
	used     int        // entries of cur.need whose first use has come
	req      int        // entries of cur.need requested (in the next sweep's need once reqNext)
	reqNext  bool       // requests have moved on to nxt
	planned  bool
	planEnd  bool    // planning has reached the end or an error
	seq      uint64  // number of the last job planned
	early    []int32 // chunks requestFirst requested, whose slots' until planning then sets
	// readAhead is set once a minibatch is delivered: until then only the chunks of the
	// minibatches planned are requested, not Prefetch more, which would compete with them for
	// the CPU and, from object storage, for the network (the time to the first minibatch).
	readAhead bool
	heldBack  int // used+1 when read-ahead found the budget spent (spent)
	// taken counts, for a mixture, the sequences each data set has given up to next.
	taken []int64
	// trace receives a line per sweep (Config.TraceLevel 2 and above), or is nil.
	trace io.Writer
}

// position is a point of the reader's progress: the sweep, the position of the next sequence
// in its order, and the global sample position of that sequence.
type position struct {
	sweep   int64
	next    int
	pos     int64
	planned bool
}

// planNext plans the next minibatch into j: its sequences, and the chunks they come from,
// requested ahead. It returns false at the end; an error is planned as a job carrying it.
func (p *cursor) planNext(j *job) bool {
	j.refs, j.err, j.packed = j.refs[:0], nil, false
	if p.planEnd {
		return false
	}
	p.seq++
	j.seq = p.seq
	if p.pl.rz.sequences == 0 {
		p.planEnd = true
		return false
	}
	if !p.planned {
		if err := p.startSweep(0); err != nil {
			return p.planFail(j, err)
		}
	}
	if p.next >= len(p.cur.order) {
		if p.pl.lastPlan(p.cur) {
			p.planEnd = true
			return false
		}
		if err := p.startSweep(p.cur.sweep + 1); err != nil {
			return p.planFail(j, err)
		}
	}
	if p.pl.finished(p.cur, p.pos) {
		p.planEnd = true
		return false
	}
	st, err := p.pl.minibatch(p.cur, p.next, p.pos, func(t int, ref seqRef, n int64) error {
		s, err := p.take(t, ref)
		if err != nil {
			return err
		}
		j.refs = append(j.refs, jobRef{s, ref.chunk, ref.idx, n})
		return nil
	})
	if err != nil {
		return p.planFail(j, err)
	}
	if p.pl.mix != nil {
		for _, i := range p.cur.src[p.next:st.next] {
			p.taken[i]++
		}
		j.mix.pos, j.mix.sweep = st.pos, p.cur.userSweep
		j.mix.taken = append(j.mix.taken[:0], p.taken...)
		j.mix.start = append(j.mix.start[:0], p.cur.mixAt.start...)
	}
	p.next, p.pos = st.next, st.pos
	m := &j.batch // packing leaves these fields alone
	m.Sweep = p.cur.userSweep
	m.Position = st.pos
	m.GlobalSamples = st.global
	m.EndOfSweep = st.endOfSweep && p.cur.endsSweep
	m.EndOfEpoch = st.endOfEpoch
	j.at = position{p.cur.sweep, p.next, p.pos, true}
	return true
}

// requestFirst starts loading the chunks of the first minibatch of the first sweep, given the
// sequences it begins with (in their final order), while the rest of the sweep is planned:
// chunks that are decoded, or fetched from object storage, are then read while the planner
// shuffles (1.5 ms for 60000 sequences), not after.
func (p *cursor) requestFirst(seqs []seqRef) {
	chunks, err := p.pl.firstChunks(seqs, nil)
	if err != nil {
		return // met again, and reported, when the minibatch is planned
	}
	for _, c := range chunks {
		if p.cc.slots[c] == nil {
			p.cc.startLoad(c, [2]int64{})
			p.early = append(p.early, c)
		}
	}
}

// planFail plans j as the error err and ends planning.
func (p *cursor) planFail(j *job, err error) bool {
	j.err = err
	p.planEnd = true
	return true
}

// startSweep makes sweep s current, at its start.
func (p *cursor) startSweep(s int64) error {
	cc := p.cc
	if p.planned && p.reqNext && p.nxt.sweep == s {
		p.cur, p.nxt = p.nxt, p.cur
		p.reqNext = false
	} else {
		var first func([]seqRef)
		if !p.planned && s == 0 && cc.raw == nil && cc.sched.Threads() > 1 && p.pl.workers == 1 && p.pl.mix == nil {
			first = p.requestFirst
		}
		err := p.pl.planSweepFirst(s, p.cur, first)
		// The chunks requested early are held until their last use, as requested chunks are.
		for _, c := range p.early {
			if sl := cc.slots[c]; err == nil && p.cur.lastUse[c] >= 0 {
				sl.until = [2]int64{s, int64(p.cur.lastUse[c])}
			} else {
				cc.drop(sl)
				cc.setSlot(c, nil)
			}
		}
		p.early = p.early[:0]
		if err != nil {
			return err
		}
		p.req, p.reqNext = 0, false
	}
	for c, sl := range cc.slots {
		if sl != nil && sl.until[0] < s {
			cc.drop(sl)
			cc.setSlot(int32(c), nil)
		}
	}
	p.planned = true
	p.next, p.used = 0, 0
	p.pos = p.cur.start
	if p.pl.mix != nil {
		p.taken = append(p.taken[:0], p.cur.mixAt.taken...)
	}
	if p.trace != nil && p.pl.mix != nil {
		fmt.Fprintf(p.trace, "minibatch: mixture sweep %d: segment %d from sample %d: %d sequences, %d of %d chunks for worker %d of %d\n",
			p.cur.userSweep, s, p.cur.start, len(p.cur.order), len(p.cur.need), len(cc.infos), p.pl.rank, p.pl.workers)
	} else if p.trace != nil {
		fmt.Fprintf(p.trace, "minibatch: sweep %d: %d sequences, %d samples, %d of %d chunks for worker %d of %d\n",
			s, len(p.cur.order), p.pl.samples, len(p.cur.need), len(cc.infos), p.pl.rank, p.pl.workers)
	}
	return nil
}

// take returns the slot of this worker's sequence at position t, requesting the chunk if
// needed and chunks ahead of it, and lets the slot go after the chunk's last use.
func (p *cursor) take(t int, ref seqRef) (*slot, error) {
	cur := p.cur
	for p.used < len(cur.need) && int(cur.need[p.used].first) <= t {
		p.used++
	}
	if err := p.pump(); err != nil {
		return nil, err
	}
	cc := p.cc
	s := cc.slots[ref.chunk]
	if s == nil {
		s = cc.request(ref.chunk, [2]int64{cur.sweep, int64(cur.useEnd(t, ref.chunk))})
	}
	s.lastJob = p.seq
	if int(cur.useEnd(t, ref.chunk)) == t && s.until == [2]int64{cur.sweep, int64(t)} {
		cc.letGo(ref.chunk, s)
	}
	return s, nil
}

// pump requests chunks ahead of use, into the next sweep when this one's are all requested:
// Config.Prefetch of them once a minibatch is delivered, while the memory budget is not spent.
func (p *cursor) pump() error {
	cc := p.cc
	for {
		ahead := p.req - p.used
		if p.reqNext {
			ahead = len(p.cur.need) - p.used + p.req
		}
		if ahead >= cc.prefetch || !p.readAhead && ahead >= 0 {
			return nil
		}
		plan, need := p.cur, p.cur.need
		if p.reqNext {
			plan, need = p.nxt, p.nxt.need
		}
		if p.req >= len(need) {
			if p.reqNext || p.pl.lastPlan(p.cur) {
				return nil
			}
			if err := p.pl.planSweep(p.cur.sweep+1, p.nxt); err != nil {
				return err
			}
			p.reqNext, p.req = true, 0
			continue
		}
		if ahead >= 0 && p.spent() {
			return nil
		}
		e := need[p.req]
		cc.request(e.chunk, [2]int64{plan.sweep, int64(e.last)})
		p.req++
	}
}

// spent reports whether the memory budget is spent, so that no chunk is read ahead; it asks
// the scheduler once per chunk first used (heldBack), not once per sequence planned.
func (p *cursor) spent() bool {
	if p.heldBack == p.used+1 {
		return true
	}
	if p.cc.full() {
		p.heldBack = p.used + 1
		return true
	}
	return false
}

// skipUsed accounts for the chunks first used before the current position: they are loaded on
// demand, and prefetching continues after them.
func (p *cursor) skipUsed() {
	for p.used < len(p.cur.need) && int(p.cur.need[p.used].first) < p.next {
		p.used++
	}
	p.req = p.used
}
