package minibatch

import (
	"fmt"
	"math"
	"slices"
)

// The planner decides, from the chunk table and the sequences' lengths alone, what every
// minibatch holds: each sweep's order (randomizer.go), which of its sequences are this
// worker's, the chunks this worker needs in order of first use, and where each minibatch
// starts and ends on the global timeline of samples. It reads no data, holds no chunks and
// starts no goroutines; the cursor (cursor.go) walks it, and the chunk cache (chunkcache.go)
// and the packers (packers.go) fetch and pack what it names.

// planner is the pure part of a Reader: its settings, and the lengths of the sequences.
type planner struct {
	rz           randomizer
	mbSize       int64 // samples per minibatch, over all workers
	samples      int64 // samples per sweep
	workers      int
	rank         int
	distribution Distribution
	frameMode    bool
	epochSize    int64 // 0: no epochs
	maxSamples   int64 // 0: no limit
	maxSweeps    int64 // 0: no limit
	// unit says every sequence is one sample long: minibatch counts (unitMinibatch) rather
	// than walk the lengths.
	unit bool
	// lengths returns the lengths of chunk c's sequences: the defining stream's sample
	// counts, or each sequence's longest stream's.
	lengths func(c int32) ([]int32, error)
	// mix plans a mixture's segments in place of sweeps (mix.go), or is nil.
	mix *mixPlanner
}

// sweepPlan is a sweep's order plus what this worker needs from it. For a mixture it is a
// segment of the mixture's timeline (plan.sweep numbers the segments; mix.go).
type sweepPlan struct {
	plan
	own     []bool      // per sequence position: this worker's
	need    []needEntry // this worker's chunks in order of first use
	lastUse []int32     // per chunk: position of its last use by this worker, or -1
	// start and end are the global sample positions of the first sequence and after the
	// last; userSweep is the sweep the minibatches report (Batch.Sweep), which endsSweep says
	// the plan ends (always, for a sweep of one data set).
	start, end int64
	userSweep  int64
	endsSweep  bool
	// A mixture's segment: the data set of each sequence and that data set's sweep, the end
	// of the use of its chunk that each position belongs to (see needEntry), and the point
	// where the segment starts.
	src      []uint16
	srcSweep []uint32
	ends     []int32
	open     []int32 // scratch: per chunk, its need entry being filled, or -1
	mixAt    mixPoint
}

// useEnd returns the position of the last use of chunk c, in the use that position t belongs
// to.
func (p *sweepPlan) useEnd(t int, c int32) int32 {
	if p.ends != nil {
		return p.ends[t]
	}
	return p.lastUse[c]
}

// needEntry is a chunk this worker needs, and the positions in the sweep of its first and
// last use. (A mixture's segment may need a chunk in several sweeps of its data set: an entry
// for each, so that it is held from first to last use within each, as a sweep holds it.)
type needEntry struct {
	chunk, first, last int32
}

// step is where a planned minibatch ends.
type step struct {
	next       int   // position in the sweep's order of the sequence after the minibatch
	pos        int64 // global sample position of that sequence
	global     int64 // samples in the minibatch, over all workers
	endOfSweep bool
	endOfEpoch bool
}

// finished reports whether reading ends before a minibatch that would start at global sample
// position pos of plan p.
func (pl *planner) finished(p *sweepPlan, pos int64) bool {
	return pl.maxSamples > 0 && pos >= pl.maxSamples || pl.maxSweeps > 0 && p.userSweep >= pl.maxSweeps
}

// lastSweep reports whether sweep s is the last one reading may reach.
func (pl *planner) lastSweep(s int64) bool { return pl.maxSweeps > 0 && s+1 >= pl.maxSweeps }

// lastPlan reports whether plan p is the last one reading may reach.
func (pl *planner) lastPlan(p *sweepPlan) bool { return p.endsSweep && pl.lastSweep(p.userSweep) }

// minibatch plans the minibatch that starts at position next of sweep p's order, at global
// sample position pos: whole sequences while their samples add up to at most the minibatch
// size (at least one), stopping at the sweep's end, an epoch's end and MaxSamples. It calls
// own, in order, for each of this worker's sequences in the minibatch with its position t in
// the order, the sequence and its length.
func (pl *planner) minibatch(p *sweepPlan, next int, pos int64, own func(t int, ref seqRef, n int64) error) (step, error) {
	if pl.unit {
		st := pl.unitMinibatch(p, next, pos)
		for t := next; t < st.next; t++ {
			if p.own[t] {
				if err := own(t, p.order[t], 1); err != nil {
					return st, err
				}
			}
		}
		return st, nil
	}
	limit, epochEnd := pl.ends(pos)
	st := step{next: next, pos: pos}
	for st.next < len(p.order) {
		t := st.next
		ref := p.order[t]
		lens, err := pl.lengths(ref.chunk)
		if err != nil {
			return st, err
		}
		n := int64(lens[ref.idx])
		if st.global > 0 && st.global+n > pl.mbSize {
			break
		}
		if pl.frameMode && n != 1 {
			return st, fmt.Errorf("%w: frame mode: sequence %d of chunk %d has %d samples", ErrFrameMode, ref.idx, ref.chunk, n)
		}
		if p.own[t] {
			if err := own(t, ref, n); err != nil {
				return st, err
			}
		}
		st.global += n
		st.pos += n
		st.next++
		if st.next == len(p.order) {
			// A sweep ends at its table's sample count even if decoded lengths disagree.
			st.pos = p.end
		}
		if st.pos >= limit {
			break
		}
	}
	st.endOfSweep = st.next == len(p.order)
	st.endOfEpoch = st.pos >= epochEnd
	return st, nil
}

// ends returns where a minibatch that starts at global sample position pos must end: the
// sample position it may reach (the epoch's end or MaxSamples, whichever comes first) and the
// epoch's end (math.MaxInt64 for each that does not apply).
func (pl *planner) ends(pos int64) (limit, epochEnd int64) {
	limit, epochEnd = math.MaxInt64, math.MaxInt64
	if e := pl.epochSize; e > 0 {
		epochEnd = (pos/e + 1) * e
		limit = epochEnd
	}
	if m := pl.maxSamples; m > 0 && m < limit {
		limit = m
	}
	return limit, epochEnd
}

// unitMinibatch is minibatch when every sequence is one sample long: the same step, found
// by counting. (Sample positions are then sequence positions, so a sweep ends at its table's
// count; the minibatch size is at least one, and pos is before MaxSamples, or planning ended.)
func (pl *planner) unitMinibatch(p *sweepPlan, next int, pos int64) step {
	limit, epochEnd := pl.ends(pos)
	k := min(int64(len(p.order)-next), pl.mbSize, limit-pos)
	st := step{next: next + int(k), pos: pos + k, global: k}
	st.endOfSweep = st.next == len(p.order)
	st.endOfEpoch = st.pos >= epochEnd
	return st
}

// seek returns the position in sweep p's order of the first sequence that starts at or after
// global sample position pos, and that sequence's sample position.
func (pl *planner) seek(p *sweepPlan, pos int64) (next int, at int64, err error) {
	at = p.start
	for next < len(p.order) && at < pos {
		ref := p.order[next]
		lens, err := pl.lengths(ref.chunk)
		if err != nil {
			return 0, 0, err
		}
		at += int64(lens[ref.idx])
		next++
	}
	if next == len(p.order) {
		at = p.end
	}
	return next, at, nil
}

// firstChunks appends to dst the chunks, in order of first use, of the sequences of seqs (the
// start of a sweep's order) that the sweep's first minibatch takes, as minibatch takes them:
// all of its chunks when it ends within seqs. It needs workers == 1 (every sequence this
// worker's).
func (pl *planner) firstChunks(seqs []seqRef, dst []int32) ([]int32, error) {
	limit := int64(math.MaxInt64)
	if e := pl.epochSize; e > 0 {
		limit = e
	}
	if m := pl.maxSamples; m > 0 {
		limit = min(limit, m)
	}
	var samples int64
	for _, ref := range seqs {
		lens, err := pl.lengths(ref.chunk)
		if err != nil {
			return dst, err
		}
		n := int64(lens[ref.idx])
		if samples > 0 && samples+n > pl.mbSize {
			break
		}
		if !slices.Contains(dst, ref.chunk) {
			dst = append(dst, ref.chunk)
		}
		if samples += n; samples >= limit {
			break
		}
	}
	return dst, nil
}

// planSweep computes sweep s's order and this worker's part of it into p.
func (pl *planner) planSweep(s int64, p *sweepPlan) error { return pl.planSweepFirst(s, p, nil) }

// planSweepFirst is planSweep, calling first as randomizer.planFirst does.
func (pl *planner) planSweepFirst(s int64, p *sweepPlan, first func([]seqRef)) error {
	if pl.mix != nil {
		if err := pl.mix.segment(pl, s, p); err != nil {
			return err
		}
		pl.planNeedMix(p)
		return nil
	}
	pl.rz.planFirst(s, &p.plan, first)
	p.start, p.end, p.userSweep, p.endsSweep = s*pl.samples, (s+1)*pl.samples, s, true
	q := len(p.order)
	p.own = resize(p.own, q)
	switch {
	case pl.workers == 1:
		for t := range p.own {
			p.own[t] = true
		}
	case pl.distribution == CNTKCompatible && pl.rz.randomize:
		for t, ref := range p.order {
			p.own[t] = int(p.chunkPos[ref.chunk])%pl.workers == pl.rank
		}
	case pl.distribution == CNTKCompatible:
		for t := range p.own {
			p.own[t] = t%pl.workers == pl.rank
		}
	default:
		if err := pl.balanced(p); err != nil {
			return err
		}
	}
	return pl.planNeed(p)
}

// planNeed computes the chunks this worker needs from plan p, and their last uses.
func (pl *planner) planNeed(p *sweepPlan) error {
	p.lastUse = resize(p.lastUse, len(pl.rz.chunks))
	for c := range p.lastUse {
		p.lastUse[c] = -1
	}
	p.need = p.need[:0]
	for t, ref := range p.order {
		if !p.own[t] {
			continue
		}
		if p.lastUse[ref.chunk] < 0 {
			p.need = append(p.need, needEntry{ref.chunk, int32(t), 0})
		}
		p.lastUse[ref.chunk] = int32(t)
	}
	for k := range p.need {
		p.need[k].last = p.lastUse[p.need[k].chunk]
	}
	return nil
}

// planNeedMix is planNeed for a mixture's segment: a chunk's uses within one sweep of its
// data set make one need entry, and each position's use ends at its entry's last.
func (pl *planner) planNeedMix(p *sweepPlan) {
	p.open = resize(p.open, len(pl.rz.chunks))
	for c := range p.open {
		p.open[c] = -1
	}
	p.ends = resize(p.ends, len(p.order))
	p.need = p.need[:0]
	for t, ref := range p.order {
		if !p.own[t] {
			continue
		}
		k := p.open[ref.chunk]
		if k < 0 || p.srcSweep[p.need[k].first] != p.srcSweep[t] {
			k = int32(len(p.need))
			p.need = append(p.need, needEntry{ref.chunk, int32(t), int32(t)})
			p.open[ref.chunk] = k
		}
		p.need[k].last = int32(t)
		p.ends[t] = k
	}
	for t := range p.order {
		if p.own[t] {
			p.ends[t] = p.need[p.ends[t]].last
		}
	}
}

// balanced marks the sequences whose first sample, in the sweep's chunk order, falls in this
// worker's equal share [lo, hi) of the sweep's samples.
func (pl *planner) balanced(p *sweepPlan) error {
	n, k := int64(pl.workers), int64(pl.rank)
	share := func(k int64) int64 { return pl.samples/n*k + pl.samples%n*k/n }
	lo, hi := share(k), share(k+1)
	// straddling[c] holds the ownership of each sequence of a chunk that straddles lo or hi.
	var straddling map[int32][]bool
	for pos, c := range p.chunkOrder {
		a, e := p.chunkStart[pos], p.chunkStart[pos+1]
		if a >= lo && e <= hi || e <= lo || a >= hi || a == e {
			continue
		}
		lens, err := pl.lengths(c)
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
