package minibatch

import "math"

// seqRef names one sequence: its chunk (the source's chunk index) and its index in the chunk.
type seqRef struct {
	chunk int32
	idx   int32
}

// plan is one sweep's order: the chunk order, and the sequence order CNTK's block randomizer
// produces from it (or file order without randomization).
type plan struct {
	sweep      int64
	chunkOrder []int32  // randomized position -> chunk
	chunkPos   []int32  // chunk -> randomized position
	chunkStart []int64  // randomized position -> first sample, in chunk order
	order      []seqRef // sequence position in the sweep -> sequence
}

// window is a range [begin, end) of randomized chunk positions.
type window struct{ begin, end int32 }

// randomizer computes sweep plans for a chunk table.
type randomizer struct {
	chunks      []chunkCounts
	randomize   bool
	seed        uint64
	window      int64 // in chunks or samples; 0: everything
	sampleBased bool
	sequences   int

	// scratch reused from plan to plan
	seqStart, posChunk, home []int32
	wins                     []window
}

type chunkCounts struct {
	sequences int
	samples   int64
}

// planFirst computes the order of sweep s into p, reusing p's memory. It calls first (when
// not nil and the order is not empty) with the sequences of the first chunk in the order, in
// their final order, as soon as they are known: before the shuffle of the positions after them
// is done.
func (rz *randomizer) planFirst(s int64, p *plan, first func([]seqRef)) {
	n := len(rz.chunks)
	p.sweep = s
	p.chunkOrder = resize(p.chunkOrder, n)
	p.chunkPos = resize(p.chunkPos, n)
	p.chunkStart = resize(p.chunkStart, n+1)
	p.order = resize(p.order, rz.sequences)
	for i := range p.chunkOrder {
		p.chunkOrder[i] = int32(i)
	}
	var rng mt64
	if rz.randomize {
		// Chunk shuffle: for each i, swap with a position drawn over the whole range (CNTK's
		// RandomShuffle; not Fisher-Yates).
		rng.seed(rz.seed + uint64(s))
		for i := 0; i < n; i++ {
			j := rng.between(0, n)
			p.chunkOrder[i], p.chunkOrder[j] = p.chunkOrder[j], p.chunkOrder[i]
		}
	}
	rz.seqStart = resize(rz.seqStart, n+1)
	seqStart := rz.seqStart
	t := 0
	for k, c := range p.chunkOrder {
		p.chunkPos[c] = int32(k)
		p.chunkStart[k+1] = p.chunkStart[k] + rz.chunks[c].samples
		seqStart[k] = int32(t)
		for i := 0; i < rz.chunks[c].sequences; i++ {
			p.order[t] = seqRef{c, int32(i)}
			t++
		}
	}
	seqStart[n] = int32(t)
	if !rz.randomize || t == 0 {
		if first != nil && t > 0 {
			first(p.order[:seqStart[1]])
		}
		return
	}
	wins := rz.windows(p)
	rng.seed(rz.seed + uint64(s))
	if whole(wins, n) {
		// Every window is the whole sweep: every draw is accepted, and a position's chunk
		// and a sequence's home are never asked for.
		for q := 0; q < t; q++ {
			j := rng.between(0, t)
			p.order[q], p.order[j] = p.order[j], p.order[q]
		}
		if first != nil {
			first(p.order[:seqStart[1]])
		}
		return
	}
	// posChunk[t] is the randomized chunk that position t belongs to; home[t] the randomized
	// chunk the sequence now at t came from.
	rz.posChunk, rz.home = resize(rz.posChunk, t), resize(rz.home, t)
	posChunk, home := rz.posChunk, rz.home
	for k := 0; k < n; k++ {
		for q := seqStart[k]; q < seqStart[k+1]; q++ {
			posChunk[q] = int32(k)
			home[q] = int32(k)
		}
	}
	// The first chunk's positions are final once every position whose window holds that chunk
	// has drawn: the first position of a chunk whose window begins after it, and every one
	// after (windows begin in order), draw from later positions only.
	final := t
	for k := 1; k < n && first != nil; k++ {
		if wins[k].begin > 0 {
			final = int(seqStart[k])
			break
		}
	}
	for q := 0; q < t; q++ {
		if q == final {
			first(p.order[:seqStart[1]])
			first = nil
		}
		w := wins[posChunk[q]]
		lo, hi := int(seqStart[w.begin]), int(seqStart[w.end])
		var j int
		for {
			j = rng.between(lo, hi)
			if in(home[j], w) && in(home[q], wins[posChunk[j]]) {
				break
			}
		}
		p.order[q], p.order[j] = p.order[j], p.order[q]
		home[q], home[j] = home[j], home[q]
	}
	if first != nil {
		first(p.order[:seqStart[1]])
	}
}

func in(k int32, w window) bool { return k >= w.begin && k < w.end }

// whole reports whether each of the n windows is every chunk.
func whole(wins []window, n int) bool {
	for _, w := range wins {
		if w.begin != 0 || int(w.end) != n {
			return false
		}
	}
	return true
}

// windows returns each randomized chunk's window.
func (rz *randomizer) windows(p *plan) []window {
	n := len(rz.chunks)
	rz.wins = resize(rz.wins, n)
	wins := rz.wins
	if !rz.sampleBased {
		w := rz.window
		if w <= 0 || w > int64(n) {
			w = int64(n)
		}
		half := w / 2
		for i := 0; i < n; i++ {
			begin := int64(0)
			if int64(i) > half {
				begin = int64(i) - half
			}
			end := begin + max(w, 1)
			if end > int64(n) {
				end = int64(n)
				begin = max(0, int64(n)-w)
			}
			wins[i] = window{int32(begin), int32(end)}
		}
		return wins
	}
	half := rz.window / 2
	if rz.window <= 0 {
		half = math.MaxInt64 / 2
	}
	start := p.chunkStart
	var b, e int
	for i := 0; i < n; i++ {
		if i == 0 {
			b, e = 0, 1
		}
		for start[i]-start[b] > half {
			b++
		}
		if b > i {
			b = i
		}
		if e <= i {
			e = i + 1
		}
		for e < n && start[e+1]-start[i] < half {
			e++
		}
		wins[i] = window{int32(b), int32(e)}
	}
	return wins
}

// resize returns s with length n, reusing its memory when large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
