package idv

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
)

// items accumulates the values of a block (or the slot values of a vector block) in the form
// they are encoded.
type items struct {
	p      prim
	name   string // the stream, for errors
	n      int
	fixed  []byte  // fixed-width values, DateTimeOffset records, or Bool bytes
	bounds []int32 // text: cumulative UTF-16 end boundaries
	text   []byte  // text: the concatenated UTF-8
	units  int64   // text: UTF-16 units so far
}

// mark is the state of a builder, to undo the last row.
type mark struct {
	n, fixed, bounds, text int
	units                  int64
	rows, lens, counts, ix int
}

func (it *items) add(b mlfeed.Buffer, from, to int) error {
	le := binary.LittleEndian
	switch it.p {
	case pText:
		for _, s := range b.Strings[from:to] {
			if !utf8.ValidString(s) {
				s = validUTF8([]byte(s))
			}
			it.text = append(it.text, s...)
			if isASCII(s) {
				it.units += int64(len(s))
			} else {
				for _, r := range s {
					it.units += int64(utf16.RuneLen(r))
				}
			}
			if it.units > math.MaxInt32 {
				return fmt.Errorf("%w: stream %q: text of one block exceeds 2^31-1 UTF-16 units; lower the rows per block", ErrTooLarge, it.name)
			}
			it.bounds = append(it.bounds, int32(it.units))
		}
	case pBool:
		for _, v := range b.Bytes[from:to] {
			if v != 0 {
				v = 1
			}
			it.fixed = append(it.fixed, v)
		}
	case pDTO:
		for i := from; i < to; i++ {
			rec := b.Bytes[16*i : 16*i+16]
			v, o := int64(le.Uint64(rec)), int16(le.Uint16(rec[8:]))
			utc := v - int64(o)*600000000
			if o < -840 || o > 840 || v < 0 || v > mlfeed.MaxTicks || utc < 0 || utc > mlfeed.MaxTicks {
				return fmt.Errorf("%w: stream %q: DateTimeOffset (ticks %d, offset %d minutes) is outside .NET's range", ErrRange, it.name, v, o)
			}
			it.fixed = append(it.fixed, rec[:10]...)
		}
	default:
		w := primInfo[it.p].width
		p := b.Bytes[from*w : to*w]
		if it.p == pDT {
			for i := 0; i < len(p); i += 8 {
				if v := int64(le.Uint64(p[i:])); v < 0 || v > mlfeed.MaxTicks {
					return fmt.Errorf("%w: stream %q: DateTime ticks %d outside 0..%d", ErrRange, it.name, v, int64(mlfeed.MaxTicks))
				}
			}
		}
		it.fixed = append(it.fixed, p...)
	}
	it.n += to - from
	return nil
}

// estimate is ML.NET's length estimate for the values so far (used for rows per block).
func (it *items) estimate() int64 {
	n := int64(it.n)
	switch it.p {
	case pText:
		return 4*(1+n) + it.units
	case pBool:
		if n == 0 {
			return 0
		}
		return 4 * (((n - 1) >> 4) + 1)
	case pDTO:
		return 10 * n
	}
	return int64(len(it.fixed))
}

// encodedLen is the exact length of the encoded values.
func (it *items) encodedLen() int {
	switch it.p {
	case pText:
		return 4 + 4*it.n + len(appendLEB(nil, uint64(len(it.text)))) + len(it.text)
	case pBool:
		return (it.n + 7) / 8
	case pDTO:
		return 10 * it.n
	}
	return len(it.fixed)
}

func (it *items) encode(b []byte) []byte {
	le := binary.LittleEndian
	switch it.p {
	case pText:
		b = le.AppendUint32(b, uint32(it.n))
		for _, v := range it.bounds {
			b = le.AppendUint32(b, uint32(v))
		}
		b = appendLEB(b, uint64(len(it.text)))
		return append(b, it.text...)
	case pBool:
		start := len(b)
		b = append(b, make([]byte, (it.n+7)/8)...)
		for i, v := range it.fixed {
			b[start+i>>3] |= v << (i & 7)
		}
		return b
	case pDTO:
		for i := 0; i < it.n; i++ {
			b = append(b, it.fixed[10*i+8:10*i+10]...)
		}
		for i := 0; i < it.n; i++ {
			b = append(b, it.fixed[10*i:10*i+8]...)
		}
		return b
	}
	return append(b, it.fixed...)
}

func (it *items) reset() {
	it.n, it.fixed, it.bounds, it.text, it.units = 0, it.fixed[:0], it.bounds[:0], it.text[:0], 0
}

// builder accumulates the rows of one column's block.
type builder struct {
	st      *mlfeed.Stream
	c       *codec
	rows    int
	it      items
	lens    []int32 // vectors: length of each row
	counts  []int32 // vectors: -1 dense, else number of entries
	indices []int32 // vectors: sparse indices
	perm    []int   // scratch for unsorted sparse samples
}

func newBuilder(st *mlfeed.Stream, c *codec) *builder {
	return &builder{st: st, c: c, it: items{p: c.prim, name: st.Name}}
}

func (b *builder) mark() mark {
	return mark{b.it.n, len(b.it.fixed), len(b.it.bounds), len(b.it.text), b.it.units, b.rows, len(b.lens), len(b.counts), len(b.indices)}
}

func (b *builder) undo(m mark) {
	b.it.n, b.it.fixed, b.it.bounds, b.it.text, b.it.units = m.n, b.it.fixed[:m.fixed], b.it.bounds[:m.bounds], b.it.text[:m.text], m.units
	b.rows, b.lens, b.counts, b.indices = m.rows, b.lens[:m.lens], b.counts[:m.counts], b.indices[:m.ix]
}

// add appends samples [from, to) of d.
func (b *builder) add(d *mlfeed.StreamData, from, to int) error {
	if !b.c.vector {
		b.rows += to - from
		return b.it.add(d.Values, from, to)
	}
	for s := from; s < to; s++ {
		if err := b.addVector(d, s); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) addVector(d *mlfeed.StreamData, s int) error {
	st := b.st
	v0, v1 := d.SampleRange(st, int64(s))
	n := v1 - v0
	b.rows++
	if st.Storage == mlfeed.Dense {
		if n > math.MaxInt32 {
			return fmt.Errorf("%w: stream %q: sample %d has %d values", ErrTooLarge, st.Name, s, n)
		}
		b.lens = append(b.lens, int32(n))
		b.counts = append(b.counts, -1)
		return b.it.add(d.Values, v0, v1)
	}
	ix := d.Indices[v0:v1]
	sorted := true
	for k := 1; k < len(ix); k++ {
		if ix[k] <= ix[k-1] {
			sorted = false
			break
		}
	}
	b.lens = append(b.lens, int32(st.Dim))
	if sorted {
		if n == st.Dim {
			b.counts = append(b.counts, -1)
		} else {
			b.counts = append(b.counts, int32(n))
			b.indices = append(b.indices, ix...)
		}
		return b.it.add(d.Values, v0, v1)
	}
	b.perm = b.perm[:0]
	for k := range ix {
		b.perm = append(b.perm, k)
	}
	sort.SliceStable(b.perm, func(i, j int) bool { return ix[b.perm[i]] < ix[b.perm[j]] })
	for k := 1; k < n; k++ {
		if ix[b.perm[k]] == ix[b.perm[k-1]] {
			return fmt.Errorf("%w: stream %q: sample %d lists index %d twice; IDV cannot store it", ErrFormat, st.Name, s, ix[b.perm[k]])
		}
	}
	if n == st.Dim {
		b.counts = append(b.counts, -1)
	} else {
		b.counts = append(b.counts, int32(n))
		for _, k := range b.perm {
			b.indices = append(b.indices, ix[k])
		}
	}
	for _, k := range b.perm {
		if err := b.it.add(d.Values, v0+k, v0+k+1); err != nil {
			return err
		}
	}
	return nil
}

// estimate is ML.NET's length estimate for the block so far.
func (b *builder) estimate() int64 {
	if !b.c.vector {
		return b.it.estimate()
	}
	lens := 0
	if b.c.size() == 0 {
		lens = b.rows
	}
	return 4*int64(2+lens+b.rows+1+len(b.indices)) + b.it.estimate()
}

// encode returns the encoded block and resets the builder.
func (b *builder) encode() ([]byte, error) {
	le := binary.LittleEndian
	var out []byte
	if !b.c.vector {
		out = b.it.encode(make([]byte, 0, b.it.encodedLen()))
	} else {
		s := int32(b.c.size())
		if s == 0 && len(b.lens) > 0 && b.lens[0] > 0 {
			s = b.lens[0]
			for _, l := range b.lens {
				if l != s {
					s = 0
					break
				}
			}
		}
		size := 12 + 4*len(b.counts) + 4*len(b.indices) + b.it.encodedLen()
		if s == 0 {
			size += 4 * len(b.lens)
		}
		out = make([]byte, 0, size)
		out = le.AppendUint32(out, uint32(b.rows))
		out = le.AppendUint32(out, uint32(s))
		if s == 0 {
			for _, l := range b.lens {
				out = le.AppendUint32(out, uint32(l))
			}
		}
		for _, c := range b.counts {
			out = le.AppendUint32(out, uint32(c))
		}
		out = le.AppendUint32(out, uint32(len(b.indices)))
		for _, ix := range b.indices {
			out = le.AppendUint32(out, uint32(ix))
		}
		out = b.it.encode(out)
	}
	if len(out) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: stream %q: a block of %d bytes exceeds IDV's 2 GiB limit; lower the rows per block", ErrTooLarge, b.st.Name, len(out))
	}
	b.rows, b.lens, b.counts, b.indices = 0, b.lens[:0], b.counts[:0], b.indices[:0]
	b.it.reset()
	return out, nil
}
