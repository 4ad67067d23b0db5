package stats

import (
	"encoding/binary"
	"math"
	"sort"
)

// The fine grid: every finite value falls in one of 1<<16 cells whose edges are the numbers
// with 8 significant bits (bfloat16's values), so a cell is at most 1/128 of its value wide.
// A histogram is made at the end by merging cells into bins whose edges are cell edges, so
// its counts are exact for the edges it reports.
//
// A magnitude |v| has the key m: 0 for |v| < 2^-126 (zero and the tiny), e<<7 | (the top 7
// bits of the mantissa) for a float32 exponent e in [1, 254], and maxMag above. A positive
// value (or zero) sits in cell half+m, which covers [L(m), L(next(m))); a negative value in
// cell half-1-m', where m' is the key whose cell (L(m'), L(next(m'))] holds |v|, covering
// [-L(next(m')), -L(m')).
const (
	fineCells = 1 << 16
	half      = fineCells / 2
	maxMag    = 255 << 7
)

// fine counts values on the fine grid, in pages of 256 cells (two binary orders of magnitude
// of one sign) allocated when a value first falls in them: data spanning a few orders of
// magnitude holds a few KiB, not the 512 KiB of every cell.
type fine struct {
	pages [fineCells / 256]*[256]int64
}

// add counts n values in cell i.
func (f *fine) add(i int, n int64) {
	p := f.pages[i>>8&255]
	if p == nil {
		p = new([256]int64)
		f.pages[i>>8&255] = p
	}
	p[i&255] += n
}

// at returns the count of cell i.
func (f *fine) at(i int) int64 {
	if p := f.pages[i>>8&255]; p != nil {
		return p[i&255]
	}
	return 0
}

// clone returns a copy of f.
func (f *fine) clone() *fine {
	c := &fine{}
	for k, p := range f.pages {
		if p != nil {
			q := *p
			c.pages[k] = &q
		}
	}
	return c
}

// magKey returns the key of the cell [L(m), L(next(m))) that holds the magnitude whose
// float64 bits are mag.
func magKey(mag uint64) int {
	e := int(mag>>52) - 1023 + 127
	switch {
	case e <= 0:
		return 0
	case e >= 255:
		return maxMag
	}
	return e<<7 | int(mag>>45&127)
}

// magLower returns L(m), the lower edge of magnitude cell m.
func magLower(m int) float64 {
	if m == 0 {
		return 0
	}
	return math.Float64frombits(uint64(m>>7-127+1023)<<52 | uint64(m&127)<<45)
}

// magNext and magPrev step between the keys magKey returns (1..127 are never used).
func magNext(m int) int {
	if m == 0 {
		return 128
	}
	return m + 1
}

func magPrev(m int) int {
	if m == 128 {
		return 0
	}
	return m - 1
}

// cellOf returns the fine cell of the finite value v.
func cellOf(v float64) int {
	b := math.Float64bits(v)
	mag := b &^ (1 << 63)
	m := magKey(mag)
	if b>>63 == 0 || mag == 0 {
		return half + m
	}
	if m != 0 && math.Float64bits(magLower(m)) == mag {
		m = magPrev(m)
	}
	return half - 1 - m
}

// cellEdges returns the edges [lo, hi) of fine cell i.
func cellEdges(i int) (lo, hi float64) {
	if i >= half {
		m := i - half
		return magLower(m), magLower(magNext(m))
	}
	m := half - 1 - i
	return -magLower(magNext(m)), -magLower(m)
}

// Histogram counts values in bins: bin i holds the values v with Edges[i] <= v < Edges[i+1].
// Every value counted lies below the last edge.
type Histogram struct {
	Edges  []float64 `json:"edges"`
	Counts []int64   `json:"counts"`
}

// Total returns the number of values the histogram counts.
func (h *Histogram) Total() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// fineHistogram merges the fine cells of f into about bins bins spanning [lo, hi], the
// smallest and largest value counted. Target edges are equally spaced; one that falls inside
// an occupied cell moves to the nearer edge of that cell, so the counts are exact.
func fineHistogram(f *fine, lo, hi float64, bins int) Histogram {
	var occ []int
	for k, p := range f.pages {
		if p == nil {
			continue
		}
		for j, n := range p {
			if n != 0 {
				occ = append(occ, k<<8|j)
			}
		}
	}
	if len(occ) == 0 {
		return Histogram{Edges: []float64{}, Counts: []int64{}}
	}
	first, _ := cellEdges(occ[0])
	_, last := cellEdges(occ[len(occ)-1])
	edges := []float64{first}
	for k := 1; k < bins; k++ {
		t := lo + (hi-lo)*float64(k)/float64(bins)
		// The occupied cell holding t, if any: the last whose lower edge is <= t.
		j := sort.Search(len(occ), func(j int) bool { a, _ := cellEdges(occ[j]); return a > t }) - 1
		if j >= 0 {
			if a, b := cellEdges(occ[j]); t > a && t < b {
				t = a
				if b-t < t-a {
					t = b
				}
			}
		}
		if t > edges[len(edges)-1] && t < last {
			edges = append(edges, t)
		}
	}
	edges = append(edges, last)
	h := Histogram{Edges: edges, Counts: make([]int64, len(edges)-1)}
	bin := 0
	for _, i := range occ {
		a, _ := cellEdges(i)
		for bin+1 < len(h.Counts) && a >= edges[bin+1] {
			bin++
		}
		h.Counts[bin] += f.at(i)
	}
	return h
}

// intHistogram makes a histogram of integers from (value, count) pairs sorted by value, with
// bins of equal integer width, at most bins of them.
func intHistogram(vals []int64, counts []int64, bins int) Histogram {
	if len(vals) == 0 {
		return Histogram{Edges: []float64{}, Counts: []int64{}}
	}
	lo, hi := vals[0], vals[len(vals)-1]
	span := uint64(hi-lo) + 1
	w := (span + uint64(bins) - 1) / uint64(bins)
	n := (span + w - 1) / w
	h := Histogram{Edges: make([]float64, n+1), Counts: make([]int64, n)}
	for k := range h.Edges {
		h.Edges[k] = float64(lo) + float64(uint64(k)*w)
	}
	for i, v := range vals {
		h.Counts[uint64(v-lo)/w] += counts[i]
	}
	return h
}

// moments accumulates the exact counts and the compensated sums of finite values, and the
// fine grid for the histogram.
type moments struct {
	n                          int64 // finite values
	sum, comp                  float64
	mean, m2                   float64 // Chan et al.'s running mean and sum of squared deviations
	min, max                   float64
	zeros, nan, posInf, negInf int64
	cells                      *fine
	// Float32 values are counted by the top 16 bits of their bits (raw32), which are their
	// cell's key but for two cases that settle sorts out: tiny magnitudes (cell 0) and
	// negative values on a cell's edge (the cell before), counted by key in edges32.
	raw32, edges32 *fine
	nonZero        []uint32  // addFiniteFloat32s' scratch: a block's non-zero values' bits
	narrow32       []float32 // addAsFloat32s' scratch
	zeroRich       bool      // a quarter or more of the last finite float32 block was zeros
}

func newMoments() *moments {
	return &moments{min: math.Inf(1), max: math.Inf(-1), cells: new(fine)}
}

// blockSize is how many values addBlock takes at once: small enough to stay in the first
// level cache for its second pass.
const blockSize = 1024

// addBlock adds the values of x (at most blockSize; x is overwritten).
func (m *moments) addBlock(x []float64) {
	j := 0
	lo, hi := m.min, m.max
	cells := m.cells
	for _, v := range x {
		if v-v != 0 { // NaN or an infinity
			switch {
			case v != v:
				m.nan++
			case v > 0:
				m.posInf++
			default:
				m.negInf++
			}
			continue
		}
		x[j] = v
		j++
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		if v == 0 {
			m.zeros++
		}
		cells.add(cellOf(v), 1)
	}
	m.min, m.max = lo, hi
	m.addFinite(x[:j])
}

// addFinite adds the sum and the deviations of the finite values x: the block's sum, then its
// sum of squared deviations from its own mean, each over four accumulators so that the
// additions do not wait on each other.
func (m *moments) addFinite(x []float64) {
	if len(x) == 0 {
		return
	}
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
	}
	for _, v := range x[i:] {
		s0 += v
	}
	s := (s0 + s1) + (s2 + s3)
	m.addSum(s)
	mb := s / float64(len(x))
	var d0, d1, d2, d3 float64
	i = 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		a, b, c, d := v[0]-mb, v[1]-mb, v[2]-mb, v[3]-mb
		d0 += a * a
		d1 += b * b
		d2 += c * c
		d3 += d * d
	}
	for _, v := range x[i:] {
		d0 += (v - mb) * (v - mb)
	}
	m.merge(int64(len(x)), mb, (d0+d1)+(d2+d3))
}

// addSum adds s to the sum with Neumaier's compensation.
func (m *moments) addSum(s float64) {
	t := m.sum + s
	if math.Abs(m.sum) >= math.Abs(s) {
		m.comp += (m.sum - t) + s
	} else {
		m.comp += (s - t) + m.sum
	}
	m.sum = t
}

// merge adds a group of n values of mean mb and sum of squared deviations d2.
func (m *moments) merge(n int64, mb, d2 float64) {
	tot := m.n + n
	delta := mb - m.mean
	m.mean += delta * float64(n) / float64(tot)
	m.m2 += d2 + delta*delta*float64(m.n)*float64(n)/float64(tot)
	m.n = tot
}

// keyCell returns the fine cell of a finite non-zero float32 whose bits have key (their top
// 16 bits) and lie on the cell's edge (edge: negative with the low 16 bits zero): cellOf,
// on float32 bits.
func keyCell(key int, edge bool) int {
	m := key & 0x7FFF // the magnitude's key
	if key < 0x8000 {
		if m < 128 { // zero and the tiny: cell 0
			m = 0
		}
		return half + m
	}
	if edge {
		m-- // magPrev
	}
	if m < 128 {
		m = 0
	}
	return half - 1 - m
}

// addFloat32s adds float32 values, reading the cells from their bits, a block at a time.
func (m *moments) addFloat32s(vals []float32, scratch []float64) {
	if m.raw32 == nil {
		m.raw32, m.edges32 = new(fine), new(fine)
	}
	for len(vals) > 0 {
		k := min(len(vals), blockSize)
		if !m.addFiniteFloat32s(vals[:k]) {
			m.addMixedFloat32s(vals[:k], scratch)
		}
		vals = vals[k:]
	}
}

// addFiniteFloat32s adds a block of float32 values (at most blockSize) and returns true, or
// returns false having added nothing when one of them is a NaN or an infinity. It does what
// addMixedFloat32s and addFinite do, with the same arithmetic in the same order, without
// copying the values: the block's sum and range first (in float64, where a block of finite
// float32 values cannot overflow, so a sum that is not finite means a value that is not),
// then the zeros and cells, then the deviations from the block's mean (for a block whose
// non-zero values were gathered, summed over those, the zeros' added as one product: the
// same figure but for rounding in its last bits).
func (m *moments) addFiniteFloat32s(x []float32) bool {
	var s float64
	var lo, hi float32
	var nz []uint32 // the non-zero values' bits, gathered with the sum where zeros abound
	if m.zeroRich {
		if m.nonZero == nil {
			m.nonZero = make([]uint32, blockSize)
		}
		var j int
		s, lo, hi, j = sumRangeGather(x, m.nonZero)
		nz = m.nonZero[:j]
	} else {
		s, lo, hi = sumRange(x)
	}
	if s-s != 0 {
		return false
	}
	// The zeros and cells. Zeros are counted in their cell once a block, so that
	// their runs (an image's background) do not wait on each other's increments. Where the
	// last block had many zeros, mixed with other values as in images, the non-zero values'
	// bits are first gathered without a branch on zero, whose outcome is then unpredictable;
	// otherwise a branch that is rarely taken costs less than the gathering.
	var zeros int64
	if m.zeroRich {
		binBits(nz, m.raw32, m.edges32)
		zeros = int64(len(x) - len(nz))
	} else {
		zeros = binEach(x, m.raw32, m.edges32)
	}
	m.zeroRich = 4*zeros >= int64(len(x))
	if zeros > 0 {
		m.cells.add(half, zeros)
	}
	m.zeros += zeros
	if float64(lo) < m.min {
		m.min = float64(lo)
	}
	if float64(hi) > m.max {
		m.max = float64(hi)
	}
	m.addSum(s)
	mb := s / float64(len(x))
	if nz != nil {
		// The zeros' squared deviations are one product, the others' summed from their bits.
		m.merge(int64(len(x)), mb, float64(zeros)*mb*mb+deviations(nz, mb))
		return true
	}
	var d0, d1, d2, d3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		a, b, c, d := float64(v[0])-mb, float64(v[1])-mb, float64(v[2])-mb, float64(v[3])-mb
		d0 += a * a
		d1 += b * b
		d2 += c * c
		d3 += d * d
	}
	for _, v := range x[i:] {
		d0 += (float64(v) - mb) * (float64(v) - mb)
	}
	m.merge(int64(len(x)), mb, (d0+d1)+(d2+d3))
	return true
}

// sumRange returns the sum of the float32 values x (at least one), in float64 over four
// accumulators, and their smallest and largest value (of two zeros the first seen, as in
// addMixedFloat32s; meaningless when a value is NaN, which the sum then shows). The
// comparisons ride along the additions, which wait on each other.
func sumRange(x []float32) (s float64, lo, hi float32) {
	var s0, s1, s2, s3 float64
	lo, hi = x[0], x[0]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
		lo = lower(lower(lower(lower(lo, v[0]), v[1]), v[2]), v[3])
		hi = higher(higher(higher(higher(hi, v[0]), v[1]), v[2]), v[3])
	}
	for _, f := range x[i:] {
		s0 += float64(f)
		if f < lo {
			lo = f
		}
		if f > hi {
			hi = f
		}
	}
	return (s0 + s1) + (s2 + s3), lo, hi
}

// lower returns f when it is below lo, else lo; higher, f when above hi.
func lower(lo, f float32) float32 {
	if f < lo {
		return f
	}
	return lo
}

func higher(hi, f float32) float32 {
	if f > hi {
		return f
	}
	return hi
}

// binEach returns the zeros of finite float32 values x and counts the others by key (raw)
// and, for negative values on a cell's edge, in edges.
func binEach(x []float32, raw, edges *fine) (zeros int64) {
	for _, f := range x {
		b := math.Float32bits(f)
		if b<<1 == 0 {
			zeros++
			continue
		}
		raw.add(int(b>>16), 1)
		if b&0x8000FFFF == 0x80000000 {
			edges.add(int(b>>16&0x7FFF), 1) // negative, on a cell's edge
		}
	}
	return zeros
}

// sumRangeGather is sumRange, gathering the bits of the values other than ±0 in nz (as long
// as x) too, without a branch on zero, and returning how many there are.
func sumRangeGather(x []float32, nz []uint32) (s float64, lo, hi float32, j int) {
	var s0, s1, s2, s3 float64
	lo, hi = x[0], x[0]
	nz = nz[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
		lo = lower(lower(lower(lower(lo, v[0]), v[1]), v[2]), v[3])
		hi = higher(higher(higher(higher(hi, v[0]), v[1]), v[2]), v[3])
		for _, f := range v {
			b := math.Float32bits(f)
			nz[j] = b
			z := b << 1
			j += int((z | -z) >> 31) // 1 unless the value is ±0
		}
	}
	for _, f := range x[i:] {
		s0 += float64(f)
		lo, hi = lower(lo, f), higher(hi, f)
		b := math.Float32bits(f)
		nz[j] = b
		z := b << 1
		j += int((z | -z) >> 31)
	}
	return (s0 + s1) + (s2 + s3), lo, hi, j
}

// deviations returns the sum of the squared deviations from mb of the float32 values whose
// bits are nz, over four accumulators.
func deviations(nz []uint32, mb float64) float64 {
	var d0, d1, d2, d3 float64
	i := 0
	for ; i+4 <= len(nz); i += 4 {
		v := nz[i : i+4 : i+4]
		a := float64(math.Float32frombits(v[0])) - mb
		b := float64(math.Float32frombits(v[1])) - mb
		c := float64(math.Float32frombits(v[2])) - mb
		d := float64(math.Float32frombits(v[3])) - mb
		d0 += a * a
		d1 += b * b
		d2 += c * c
		d3 += d * d
	}
	for _, b := range nz[i:] {
		a := float64(math.Float32frombits(b)) - mb
		d0 += a * a
	}
	return (d0 + d1) + (d2 + d3)
}

// binBits counts the bits of non-zero finite float32 values as binEach does.
func binBits(nz []uint32, raw, edges *fine) {
	for _, b := range nz {
		raw.add(int(b>>16), 1)
		if b&0x8000FFFF == 0x80000000 {
			edges.add(int(b>>16&0x7FFF), 1)
		}
	}
}

// addMixedFloat32s adds a block of float32 values (at most blockSize) some of which are NaN
// or infinite: those are counted, and the finite ones go through scratch to addFinite.
func (m *moments) addMixedFloat32s(vals []float32, scratch []float64) {
	raw, edges := m.raw32, m.edges32
	x := scratch[:len(vals)]
	j := 0
	lo, hi := m.min, m.max
	var zeros int64
	for _, f := range vals {
		b := math.Float32bits(f)
		if b&0x7F800000 == 0x7F800000 {
			switch {
			case f != f:
				m.nan++
			case f > 0:
				m.posInf++
			default:
				m.negInf++
			}
			continue
		}
		v := float64(f)
		x[j] = v
		j++
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		if b<<1 == 0 {
			zeros++
			continue
		}
		raw.add(int(b>>16), 1)
		if b&0x8000FFFF == 0x80000000 {
			edges.add(int(b>>16&0x7FFF), 1)
		}
	}
	m.min, m.max, m.zeros = lo, hi, m.zeros+zeros
	if zeros > 0 {
		m.cells.add(half, zeros)
	}
	m.addFinite(x[:j])
}

// settle moves the counts of float32 keys to the cells (keyCell), a key at a time.
func (m *moments) settle() {
	if m.raw32 == nil {
		return
	}
	for pg, p := range m.raw32.pages {
		if p == nil {
			continue
		}
		for j, c := range p {
			if c == 0 {
				continue
			}
			key := pg<<8 | j
			e := int64(0)
			if key >= 0x8000 {
				e = m.edges32.at(key & 0x7FFF)
			}
			m.cells.add(keyCell(key, false), c-e)
			if e > 0 {
				m.cells.add(keyCell(key, true), e)
			}
		}
	}
	m.raw32, m.edges32 = nil, nil
}

// addFloat64s adds float64 values a block at a time: a block that float32 holds exactly
// (values written as float64 that were float32, or small integers) as float32 values, which
// gives the same figures faster, others through scratch.
func (m *moments) addFloat64s(vals []float64, scratch []float64) {
	for len(vals) > 0 {
		k := min(len(vals), blockSize)
		if !m.addAsFloat32s(vals[:k], scratch) {
			copy(scratch, vals[:k])
			m.addBlock(scratch[:k])
		}
		vals = vals[k:]
	}
}

// addAsFloat32s adds the float64 values x (at most blockSize) as float32 values and returns
// true when each one's bits come back from float32 unchanged (NaN with a payload float32
// holds included), else adds nothing and returns false. The float32 path does the same arithmetic, in float64, in the same
// order, and finds the same cells (cellOf), so the figures are those addBlock gives.
func (m *moments) addAsFloat32s(x []float64, scratch []float64) bool {
	if m.narrow32 == nil {
		m.narrow32 = make([]float32, blockSize)
	}
	y := m.narrow32[:len(x)]
	var diff uint64 // the bits in which some value differs from its float32 and back
	for i, v := range x {
		f := float32(v)
		y[i] = f
		diff |= math.Float64bits(float64(f)) ^ math.Float64bits(v)
	}
	if diff != 0 {
		return false
	}
	m.addFloat32s(y, scratch)
	return true
}

// window counts integer values exactly in an array over a range of at most windowSize
// values, which moves while the values seen fit in it; once they do not, the counts go to
// the moments (exactly: each value with its count) and the window is dropped.
type window struct {
	lo     int64
	counts []int64 // nil: not started or dropped
	seen   bool
	vmin   int64
	vmax   int64
}

const windowSize = 1 << 16

// fits reports whether v lies in the window.
func (w *window) fits(v int64) bool { return uint64(v-w.lo) < uint64(len(w.counts)) }

// grow moves or widens the window so that it holds v as well, if the values seen and v span
// at most windowSize values; it returns false when they do not. The window starts at 64
// values and doubles, so that labels of a few classes hold a few hundred bytes.
func (w *window) grow(v int64) bool {
	lo, hi := v, v
	if w.counts != nil {
		lo, hi = min(w.vmin, v), max(w.vmax, v)
	}
	span := uint64(hi-lo) + 1
	if span > windowSize || span == 0 {
		return false
	}
	size := max(64, uint64(len(w.counts)))
	for size < span {
		size *= 2
	}
	if w.counts != nil && size == uint64(len(w.counts)) {
		size = min(2*size, windowSize) // the window moves: widen it too, against moving again
	}
	// Center the values in the new window, within the int64 range.
	nlo := int64(math.MinInt64)
	if pad := int64(size-span) / 2; lo > math.MinInt64+pad {
		nlo = lo - pad
	}
	nlo = min(nlo, math.MaxInt64-int64(size)+1)
	moved := make([]int64, size)
	for i, c := range w.counts {
		if c != 0 {
			moved[w.lo+int64(i)-nlo] = c
		}
	}
	w.counts, w.lo = moved, nlo
	return true
}

// spill moves the window's counts into m and drops the window.
func (w *window) spill(m *moments) {
	vals, counts := w.pairs()
	addCounted(m, vals, counts)
	w.counts = nil
}

// pairs returns the values the window holds and their counts, by value.
func (w *window) pairs() (vals, counts []int64) {
	for i, c := range w.counts {
		if c != 0 {
			vals = append(vals, w.lo+int64(i))
			counts = append(counts, c)
		}
	}
	return vals, counts
}

// addCounted adds each value vals[i] counts[i] times to m, exactly.
func addCounted(m *moments, vals, counts []int64) {
	var n int64
	var s, comp float64
	for i, v := range vals {
		c := counts[i]
		f := float64(v)
		n += c
		x := f * float64(c)
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			comp += (s - t) + x
		} else {
			comp += (x - t) + s
		}
		s = t
		if f < m.min {
			m.min = f
		}
		if f > m.max {
			m.max = f
		}
		if v == 0 {
			m.zeros += c
		}
		m.cells.add(cellOf(f), c)
	}
	if n == 0 {
		return
	}
	mb := (s + comp) / float64(n)
	var d2 float64
	for i, v := range vals {
		d := float64(v) - mb
		d2 += d * d * float64(counts[i])
	}
	m.addSum(s)
	m.addSum(comp)
	m.merge(n, mb, d2)
}

// ints counts an integer-valued stream: in a window while its values span at most
// windowSize, then in moments. Bytes (uint8, int8, bool), and blocks of wider integers that
// lie within 256 values of a base, are counted first in a table of their own (countBytes),
// and moved to the window when a figure is asked for or a block does not fit.
type ints struct {
	w      window
	m      *moments // nil while the window holds everything
	bytes  *[8][256]int64
	signed bool  // the bytes are int8
	based  bool  // the table counts wider integers: column i is the value base+i
	base   int64 // (the table holds bytes or based values, never both: a stream has one type)
	narrow []byte
}

// add adds one value.
func (a *ints) add(v int64) { a.addN(v, 1) }

// addN adds the value v n times. The byte table must be settled.
func (a *ints) addN(v, n int64) {
	w := &a.w
	if w.counts != nil && w.fits(v) {
		w.counts[v-w.lo] += n
	} else if a.m == nil && w.grow(v) {
		w.counts[v-w.lo] += n
	} else {
		a.spill()
		addCounted(a.m, []int64{v}, []int64{n})
		return
	}
	if !w.seen {
		w.vmin, w.vmax, w.seen = v, v, true
	} else if v < w.vmin {
		w.vmin = v
	} else if v > w.vmax {
		w.vmax = v
	}
}

// addBytes counts bytes (as int8 when signed).
func (a *ints) addBytes(vals []byte, signed bool) {
	if a.bytes == nil {
		a.bytes = new([8][256]int64)
	}
	a.signed = signed
	countBytes(a.bytes, vals)
}

// countBytes counts the bytes of vals in c: 64 of one repeated byte (the background of an
// image, runs of a label) with one addition, others in eight rows used in turn, so that
// increments of one value (the zeros about a digit) do not wait on each other, and without
// a branch on their values, whose outcome would be unpredictable.
func countBytes(c *[8][256]int64, vals []byte) {
	n := len(vals) &^ 63
	for i := 0; i < n; i += 64 {
		v := vals[i : i+64 : i+64]
		rep := uint64(v[0]) * 0x0101010101010101
		var diff uint64
		for k := 0; k < 64; k += 8 {
			diff |= binary.LittleEndian.Uint64(v[k:]) ^ rep
		}
		if diff == 0 {
			c[0][v[0]] += 64
			continue
		}
		countRows(c, v)
	}
	countRows(c, vals[n:])
}

// countRows counts the bytes of vals in c, byte i in row i%8.
func countRows(c *[8][256]int64, vals []byte) {
	n := len(vals) &^ 7
	for i := 0; i < n; i += 8 {
		v := vals[i : i+8 : i+8]
		c[0][v[0]]++
		c[1][v[1]]++
		c[2][v[2]]++
		c[3][v[3]]++
		c[4][v[4]]++
		c[5][v[5]]++
		c[6][v[6]]++
		c[7][v[7]]++
	}
	for _, v := range vals[n:] {
		c[0][v]++
	}
}

// settle moves the byte table's counts to the window.
func (a *ints) settle() {
	if a.bytes == nil {
		return
	}
	t := a.bytes
	a.bytes = nil
	for i := range 256 {
		var n int64
		for _, row := range t {
			n += row[i]
		}
		if n == 0 {
			continue
		}
		v := int64(i)
		switch {
		case a.based:
			v += a.base
		case a.signed:
			v = int64(int8(uint8(i)))
		}
		a.addN(v, n)
	}
	a.based = false
}

// spill moves the window into moments, from which on every value goes.
func (a *ints) spill() {
	if a.m == nil {
		a.m = newMoments()
		a.w.spill(a.m)
	}
}

// exact reports whether every value is still counted by value.
func (a *ints) exact() bool { a.settle(); return a.m == nil }

// integer is the integer types wider than a byte.
type integer interface {
	int16 | int32 | int64 | uint16 | uint32 | uint64
}

// addInts adds integer values (uint64 ones at most math.MaxInt64 while the window holds
// them): a block at a time in the byte table when the block lies within its 256 values, else
// one by one through the window while it holds them, else in blocks to the moments.
func addInts[T integer](a *ints, vals []T, scratch []float64) {
	w := &a.w
	for len(vals) > 0 && a.m == nil {
		k := min(len(vals), blockSize)
		if addBased(a, vals[:k]) {
			vals = vals[k:]
			continue
		}
		a.settle()
		lo, n := w.lo, uint64(len(w.counts))
		counts := w.counts
		vmin, vmax := w.vmin, w.vmax
		i := 0
		for ; i < k && counts != nil; i++ {
			v := int64(vals[i])
			if uint64(v-lo) >= n {
				break
			}
			counts[v-lo]++
			if v < vmin {
				vmin = v
			}
			if v > vmax {
				vmax = v
			}
		}
		if counts != nil {
			w.vmin, w.vmax = vmin, vmax
		}
		vals = vals[i:]
		if len(vals) > 0 {
			a.add(int64(vals[0]))
			vals = vals[1:]
		}
	}
	for len(vals) > 0 {
		k := min(len(vals), blockSize)
		x := scratch[:k]
		for i, v := range vals[:k] {
			x[i] = float64(v)
		}
		a.m.addBlock(x)
		vals = vals[k:]
	}
}

// addBased counts the block x (at most blockSize values, none above math.MaxInt64) in the
// byte table when its values lie within the 256 from the table's base, choosing the base if
// the table has none, and reports whether it did. A table of bytes, or one whose base does
// not suit the block, is settled first.
func addBased[T integer](a *ints, x []T) bool {
	if a.narrow == nil {
		a.narrow = make([]byte, blockSize)
	}
	if a.based {
		// The common case: the block fits the base of the blocks before.
		base := a.base
		nb := a.narrow[:len(x)]
		var or uint64
		for i, v := range x {
			d := uint64(int64(v) - base)
			or |= d
			nb[i] = byte(d)
		}
		if or <= 255 {
			countWords(a.bytes, nb)
			return true
		}
	}
	lo, hi := int64(x[0]), int64(x[0])
	for _, v := range x {
		lo = min(lo, int64(v))
		hi = max(hi, int64(v))
	}
	if uint64(hi-lo) > 255 {
		return false
	}
	if a.bytes != nil && (!a.based || lo < a.base || uint64(hi-a.base) > 255) {
		a.settle()
	}
	if a.bytes == nil {
		a.bytes, a.based = new([8][256]int64), true
		// The block centred in the table, but not below 0 for values that are not (pixels
		// and labels then share one base).
		pad := int64(255-uint64(hi-lo)) / 2
		switch {
		case lo >= 0:
			a.base = max(0, lo-pad)
		case lo >= math.MinInt64+pad:
			a.base = lo - pad
		default:
			a.base = math.MinInt64
		}
	}
	nb, base := a.narrow[:len(x)], a.base
	for i, v := range x {
		nb[i] = byte(int64(v) - base)
	}
	countWords(a.bytes, nb)
	return true
}

// countWords counts the bytes nb in c, eight at a time in four of c's rows, a word of one
// repeated byte with one addition: for integers narrowed to bytes (addBased), where
// countBytes, whose eight rows serve bytes read from a chunk best, is slower.
func countWords(c *[8][256]int64, nb []byte) {
	n := len(nb) &^ 7
	for i := 0; i < n; i += 8 {
		v := nb[i : i+8 : i+8]
		if binary.LittleEndian.Uint64(v) == uint64(v[0])*0x0101010101010101 {
			c[0][v[0]] += 8
			continue
		}
		c[0][v[0]]++
		c[1][v[1]]++
		c[2][v[2]]++
		c[3][v[3]]++
		c[0][v[4]]++
		c[1][v[5]]++
		c[2][v[6]]++
		c[3][v[7]]++
	}
	for _, v := range nb[n:] {
		c[0][v]++
	}
}

// addUint64s adds uint64 values; one above math.MaxInt64 moves everything to moments.
func addUint64s(a *ints, vals []uint64, scratch []float64) {
	for len(vals) > 0 {
		k := min(len(vals), blockSize)
		big := false
		for _, v := range vals[:k] {
			if v > math.MaxInt64 {
				big = true
				break
			}
		}
		if big || a.m != nil {
			a.settle()
			a.spill()
			x := scratch[:k]
			for i, v := range vals[:k] {
				x[i] = float64(v)
			}
			a.m.addBlock(x)
		} else {
			addInts(a, vals[:k], scratch)
		}
		vals = vals[k:]
	}
}

// numbers is what a numeric stream reports (see Numeric).
func (a *ints) numeric(bins int) *Numeric {
	a.settle()
	if a.m != nil {
		return a.m.numeric(bins)
	}
	vals, counts := a.w.pairs()
	m := newMoments()
	addCounted(m, vals, counts)
	out := m.numeric(bins)
	out.Histogram = intHistogram(vals, counts, bins)
	return out
}

// numeric returns the figures m holds.
func (m *moments) numeric(bins int) *Numeric {
	out := &Numeric{Count: m.n + m.nan + m.posInf + m.negInf, Finite: m.n, NaN: m.nan,
		PosInf: m.posInf, NegInf: m.negInf, Zeros: m.zeros}
	if m.n == 0 {
		out.Histogram = Histogram{Edges: []float64{}, Counts: []int64{}}
		return out
	}
	out.Min, out.Max = m.min, m.max
	out.Mean = (m.sum + m.comp) / float64(m.n)
	out.Std = math.Sqrt(m.m2 / float64(m.n))
	m.settle()
	out.Histogram = fineHistogram(m.cells, m.min, m.max, bins)
	return out
}

// countDist counts non-negative integers (lengths, sizes): exactly by value below
// windowSize, on the fine grid above.
type countDist struct {
	small []int64 // counts of the values below windowSize, grown as needed
	large *moments
}

func (c *countDist) add(v int64) {
	if v >= 0 && v < windowSize {
		if int(v) >= len(c.small) {
			n := min(max(int(v)+1, 2*len(c.small)), windowSize)
			c.small = append(c.small, make([]int64, n-len(c.small))...)
		}
		c.small[v]++
		return
	}
	if c.large == nil {
		c.large = newMoments()
	}
	c.large.addBlock([]float64{float64(v)})
}

// histogram returns the distribution as a histogram: of integers when every value is below
// windowSize, on the fine grid otherwise.
func (c *countDist) histogram(bins int) Histogram {
	var vals, counts []int64
	for v, n := range c.small {
		if n != 0 {
			vals = append(vals, int64(v))
			counts = append(counts, n)
		}
	}
	if c.large == nil {
		return intHistogram(vals, counts, bins)
	}
	m := *c.large
	m.cells = c.large.cells.clone()
	addCounted(&m, vals, counts)
	return fineHistogram(m.cells, m.min, m.max, bins)
}

// summary returns the count, smallest, largest and mean value.
func (c *countDist) summary() (n int64, lo, hi int64, mean float64) {
	var sum float64
	lo = -1
	for v, k := range c.small {
		if k != 0 {
			if lo < 0 {
				lo = int64(v)
			}
			hi = int64(v)
			n += k
			sum += float64(v) * float64(k)
		}
	}
	if c.large != nil && c.large.n > 0 {
		if lo < 0 {
			lo = int64(c.large.min)
		}
		hi = int64(c.large.max)
		n += c.large.n
		sum += c.large.sum + c.large.comp
	}
	if n == 0 {
		return 0, 0, 0, 0
	}
	return n, lo, hi, sum / float64(n)
}
