package arrowmap

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/half"
)

// Decoder turns record batches into chunks following a Plan.
//
// Fixed-width values (and int32 sparse indices) are handed out without a copy: the chunk's
// buffers alias the batch's, which the caller must keep valid (a memory-mapped file, or the
// Go-allocated buffers of a batch no one else holds). What the decoder computes itself
// (offsets, unpacked booleans, text, dictionary lookups) goes into a previous chunk's memory
// when one is given and that memory is not read-only (Shared).
type Decoder struct {
	// Plan maps columns to streams.
	Plan *Plan
	// Shared reports whether b lies in memory that must not be written (a read-only file
	// mapping). Nil means no memory is shared.
	Shared func(b []byte) bool
}

// locator is where a value of a column sits, for messages.
type locator struct {
	column string
	base   int64               // file row of the batch's first row
	row    func(i int64) int64 // index at the current level -> batch row
}

func (l locator) errorf(i int64, format string, args ...any) error {
	return fmt.Errorf("column %q, row %d: %s", l.column, l.base+l.row(i), fmt.Sprintf(format, args...))
}

// down returns the locator of the child level of a list level with the given offsets.
func (l locator) down(offsets []int64, base int64) locator {
	up := l.row
	return locator{column: l.column, base: l.base, row: func(i int64) int64 {
		k := sort.Search(len(offsets)-1, func(k int) bool { return offsets[k+1]+base > i })
		return up(int64(k))
	}}
}

func identity(i int64) int64 { return i }

// Learn sets the dimension of the streams Plan.NeedsDim lists from the first row of rec (for a
// column of lists of samples, from the first sample of the first row that has one); a first
// list of no values makes the stream's samples variable-size.
func (p *Plan) Learn(rec arrow.RecordBatch) error {
	for _, i := range p.NeedsDim() {
		c := &p.Columns[i]
		name := p.Schema.Streams[i].Name
		arr, err := p.column(rec, i, locator{column: name, row: identity})
		if err != nil {
			return err
		}
		if arr.Len() == 0 {
			return fmt.Errorf("%w: column %q: no row to learn the list length from (declare the stream's dim in the mlfeed.dim field metadata)", ErrFormat, name)
		}
		if c.Seq {
			// The first sample of the first row that has one.
			off, child, base, err := listOffsets(arr, arr.Len(), nil)
			if err != nil {
				return fmt.Errorf("%w: column %q: %v", ErrFormat, name, err)
			}
			if off[arr.Len()] == 0 {
				return fmt.Errorf("%w: column %q: no row of the first batch has a sample to learn the list length from", ErrFormat, name)
			}
			arr = array.NewSlice(child, base, base+1)
		}
		off, _, _, err := listOffsets(arr, 1, nil)
		if err != nil {
			return fmt.Errorf("%w: column %q: %v", ErrFormat, name, err)
		}
		c.Dim, c.learn = int(off[1]), false
		if c.Dim == 0 {
			// No length to learn from an empty list: variable-size samples (as DuckDB
			// reads an all-empty list column: a list of its type).
			c.Kind = Variable
		}
		p.Schema.Streams[i].Dim = c.Dim
	}
	return nil
}

// Decode returns rec's rows as a chunk. base is the file row of rec's first row, for
// messages. prev, if not nil, is a chunk this decoder returned earlier that the caller no
// longer uses.
func (dec *Decoder) Decode(rec arrow.RecordBatch, base int64, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	p := dec.Plan
	n := int(rec.NumRows())
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(p.Columns))}
	if prev != nil && len(prev.Streams) == len(p.Columns) {
		c.Streams = prev.Streams
		c.IDs = prev.IDs
	}
	if p.IDField >= 0 {
		loc := locator{column: p.Arrow.Field(p.IDField).Name, base: base, row: identity}
		b, err := dec.leaf(unwrap(rec.Column(p.IDField)), 0, int64(n), mlfeed.String, mlfeed.Buffer{Type: mlfeed.String, Strings: c.IDs}, loc)
		if err != nil {
			return nil, err
		}
		c.IDs = b.Strings
	} else {
		c.IDs = nil
	}
	for i := range p.Columns {
		col := &p.Columns[i]
		st := &p.Schema.Streams[i]
		d := &c.Streams[i]
		loc := locator{column: st.Name, base: base, row: identity}
		arr, err := p.column(rec, i, loc)
		if err != nil {
			return nil, err
		}
		if arr.Len() != n {
			return nil, fmt.Errorf("%w: column %q has %d rows, the batch %d", ErrFormat, loc.column, arr.Len(), n)
		}
		var samples int64
		if col.Seq {
			if err := noNulls(arr, 0, int64(n), loc); err != nil {
				return nil, err
			}
			off, child, cbase, err := listOffsets(arr, n, dec.own(d.SeqStart))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "%v", err))
			}
			d.SeqStart = off
			samples = off[n]
			loc = loc.down(off, cbase)
			arr = array.NewSlice(unwrap(child), cbase, cbase+samples)
		} else {
			d.SeqStart = identitySeq(dec.own(d.SeqStart), n)
			samples = int64(n)
		}
		if err := dec.samples(arr, samples, col, st, d, loc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// own returns s for reuse when it may be written, else nil.
func (dec *Decoder) own(s []int64) []int64 {
	if len(s) == 0 || dec.Shared != nil && dec.Shared(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8)) {
		return nil
	}
	return s
}

func identitySeq(dst []int64, n int) []int64 {
	dst = grow(dst, n+1)
	for i := range dst {
		dst[i] = int64(i)
	}
	return dst
}

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// samples decodes the n samples of arr (rows of the sample level) into d.
func (dec *Decoder) samples(arr arrow.Array, n int64, col *Column, st *mlfeed.Stream, d *mlfeed.StreamData, loc locator) error {
	if err := noNulls(arr, 0, n, loc); err != nil {
		return err
	}
	switch col.Kind {
	case Scalar:
		d.SampleStart, d.Indices = nil, nil
		v, err := dec.leaf(arr, 0, n, col.Type, d.Values, loc)
		d.Values = v
		return err
	case Fixed:
		d.SampleStart, d.Indices = nil, nil
		var child arrow.Array
		var from int64
		dim := int64(col.Dim)
		if fl, ok := arr.(*array.FixedSizeList); ok {
			if int64(fl.DataType().(*arrow.FixedSizeListType).Len()) != dim {
				return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "fixed-size list of %d, the stream's dim is %d", fl.DataType().(*arrow.FixedSizeListType).Len(), dim))
			}
			child = unwrap(fl.ListValues())
			from = int64(fl.Data().Offset()) * dim
			if from+n*dim > int64(child.Len()) {
				return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "fixed-size list values end at %d, past their %d", from+n*dim, child.Len()))
			}
		} else {
			off, c, base, err := listOffsets(arr, int(n), nil)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "%v", err))
			}
			for k := int64(0); k < n; k++ {
				if l := off[k+1] - off[k]; l != dim {
					return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(k, "a list of %d values where the stream's samples have %d (lists of unequal lengths read as variable-size samples with the lists=variable option)", l, dim))
				}
			}
			child, from = unwrap(c), base
		}
		v, err := dec.leaf(child, from, from+n*dim, col.Type, d.Values, fixedLoc(loc, dim, from))
		d.Values = v
		return err
	case Variable:
		off, child, base, err := listOffsets(arr, int(n), dec.own(d.SampleStart))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "%v", err))
		}
		d.SampleStart, d.Indices = off, nil
		v, err := dec.leaf(unwrap(child), base, base+off[n], col.Type, d.Values, loc.down(off, base))
		d.Values = v
		return err
	}
	// Sparse.
	s, ok := arr.(*array.Struct)
	if !ok {
		return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "column is %s, not the sparse struct", arr.DataType()))
	}
	ix, vals := unwrap(s.Field(0)), unwrap(s.Field(1))
	if s.Data().Offset() != 0 {
		ix = array.NewSlice(ix, int64(s.Data().Offset()), int64(s.Data().Offset())+n)
		vals = array.NewSlice(vals, int64(s.Data().Offset()), int64(s.Data().Offset())+n)
	}
	if int64(ix.Len()) < n || int64(vals.Len()) < n {
		return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "sparse struct fields shorter than the column"))
	}
	if err := noNulls(ix, 0, n, loc); err != nil {
		return err
	}
	if err := noNulls(vals, 0, n, loc); err != nil {
		return err
	}
	off, vchild, vbase, err := listOffsets(vals, int(n), dec.own(d.SampleStart))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "values: %v", err))
	}
	ioff, ichild, ibase, err := listOffsets(ix, int(n), nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "indices: %v", err))
	}
	for k := int64(0); k < n; k++ {
		if ioff[k+1] != off[k+1] {
			return fmt.Errorf("%w: %v", ErrFormat, loc.errorf(k, "a sample with %d indices and %d values", ioff[k+1]-ioff[k], off[k+1]-off[k]))
		}
	}
	d.SampleStart = off
	v, err := dec.leaf(unwrap(vchild), vbase, vbase+off[n], col.Type, d.Values, loc.down(off, vbase))
	if err != nil {
		return err
	}
	d.Values = v
	idx, err := dec.indices(unwrap(ichild), ibase, ibase+off[n], d.Indices, st.Dim, loc.down(off, ibase))
	d.Indices = idx
	return err
}

// fixedLoc returns the locator of the values of fixed-size samples: value i belongs to
// sample (i-from)/dim of up.
func fixedLoc(up locator, dim, from int64) locator {
	return locator{column: up.column, base: up.base, row: func(i int64) int64 {
		if dim == 0 {
			return up.row(0)
		}
		return up.row((i - from) / dim)
	}}
}

// indices returns the integers of arr in [from, to) as int32, checked against dim (when not
// zero).
func (dec *Decoder) indices(arr arrow.Array, from, to int64, prev []int32, dim int, loc locator) ([]int32, error) {
	b, err := dec.leaf(arr, from, to, elemType(arr.DataType()), mlfeed.Buffer{}, loc)
	if err != nil {
		return nil, err
	}
	var out []int32
	if b.Type == mlfeed.Int32 {
		out = b.Int32s()
	} else {
		if len(prev) > 0 && dec.Shared != nil && dec.Shared(unsafe.Slice((*byte)(unsafe.Pointer(&prev[0])), 4)) {
			prev = nil
		}
		out = grow(prev, b.Len())
		for k := range out {
			v := b.Int64At(k)
			if b.Type == mlfeed.Uint64 && v < 0 || v < 0 || v > 1<<31-1 {
				return nil, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from+int64(k), "sparse index %d out of range", v))
			}
			out[k] = int32(v)
		}
	}
	for k, v := range out {
		if v < 0 || dim > 0 && int(v) >= dim {
			return nil, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from+int64(k), "sparse index %d outside [0, %d)", v, dim))
		}
	}
	return out, nil
}

// unwrap returns the storage of an extension array.
func unwrap(a arrow.Array) arrow.Array {
	if e, ok := a.(array.ExtensionArray); ok {
		return e.Storage()
	}
	return a
}

// noNulls refuses a null among elements [from, to) of arr.
// column returns the array stream i reads in rec: its column, or the struct field
// Column.Path names, whose structs must not be null where the stream reads them (a null struct
// leaves its fields' values undefined).
func (p *Plan) column(rec arrow.RecordBatch, i int, loc locator) (arrow.Array, error) {
	c := &p.Columns[i]
	arr := unwrap(rec.Column(c.Field))
	for _, k := range c.Path {
		s, ok := arr.(*array.Struct)
		if !ok || k >= s.NumField() {
			return nil, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(0, "%s where a struct was expected", arr.DataType()))
		}
		if err := noNulls(s, 0, int64(s.Len()), loc); err != nil {
			return nil, err
		}
		arr = unwrap(s.Field(k))
	}
	return arr, nil
}

func noNulls(arr arrow.Array, from, to int64, loc locator) error {
	if arr.NullN() == 0 {
		return nil
	}
	for i := from; i < to; i++ {
		if arr.IsNull(int(i)) {
			return fmt.Errorf("%w: %v", ErrUnsupported, loc.errorf(i, "null value (mlfeed holds no nulls: fill or drop them first, or read the other columns with the option columns=NAME,...)"))
		}
	}
	return nil
}

// listOffsets returns the offsets of the first n rows of a List or LargeList array, rebased
// to start at 0 (into dst when it is large enough), the child array and the child index of
// the first row's first value. It checks that the offsets increase and stay within the
// child.
func listOffsets(arr arrow.Array, n int, dst []int64) ([]int64, arrow.Array, int64, error) {
	dst = grow(dst, n+1)
	var child arrow.Array
	switch a := arr.(type) {
	case *array.List:
		raw := a.Offsets()
		o := a.Data().Offset()
		if o+n+1 > len(raw) || n > a.Len() {
			return nil, nil, 0, fmt.Errorf("list offsets buffer too short")
		}
		for i := range dst {
			dst[i] = int64(raw[o+i])
		}
		child = a.ListValues()
	case *array.LargeList:
		raw := a.Offsets()
		o := a.Data().Offset()
		if o+n+1 > len(raw) || n > a.Len() {
			return nil, nil, 0, fmt.Errorf("list offsets buffer too short")
		}
		copy(dst, raw[o:o+n+1])
		child = a.ListValues()
	case *array.FixedSizeList:
		d := int64(a.DataType().(*arrow.FixedSizeListType).Len())
		base := int64(a.Data().Offset()) * d
		for i := range dst {
			dst[i] = base + int64(i)*d
		}
		child = a.ListValues()
	default:
		return nil, nil, 0, fmt.Errorf("%s where a list was expected", arr.DataType())
	}
	base := dst[0]
	for i := range dst {
		dst[i] -= base
		if i > 0 && dst[i] < dst[i-1] {
			return nil, nil, 0, fmt.Errorf("list offsets decrease at row %d", i)
		}
	}
	if base < 0 || base+dst[n] > int64(child.Len()) {
		return nil, nil, 0, fmt.Errorf("list offsets [%d, %d) outside the %d values", base, base+dst[n], child.Len())
	}
	return dst, child, base, nil
}

// leaf returns elements [from, to) of a leaf array as values of type t: fixed-width values
// without a copy, others into prev's memory when it may be written.
func (dec *Decoder) leaf(arr arrow.Array, from, to int64, t mlfeed.ElemType, prev mlfeed.Buffer, loc locator) (mlfeed.Buffer, error) {
	if err := noNulls(arr, from, to, loc); err != nil {
		return mlfeed.Buffer{}, err
	}
	n := int(to - from)
	off := int64(arr.Data().Offset())
	if prev.Type != t || prev.Bytes != nil && dec.Shared != nil && dec.Shared(prev.Bytes) {
		prev = mlfeed.Buffer{}
	}
	if _, _, _, ok := temporal(arr.DataType()); ok {
		return dec.ticks(arr, from, to, t, prev, loc)
	}
	switch a := arr.(type) {
	case *array.Boolean:
		if n == 0 {
			return mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, 0)}, nil
		}
		bits := a.Data().Buffers()[1]
		if bits == nil || (off+to+7)/8 > int64(bits.Len()) {
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "boolean buffer too short"))
		}
		out := mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, n)}
		bb := bits.Bytes()
		for k := range out.Bytes {
			j := off + from + int64(k)
			out.Bytes[k] = bb[j/8] >> (j % 8) & 1
		}
		return out, nil
	case *array.Float16:
		if t != mlfeed.Float32 {
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "float16 values read as %s", t))
		}
		bufs := a.Data().Buffers()
		if n == 0 {
			return mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, 0)}, nil
		}
		if len(bufs) < 2 || bufs[1] == nil || 2*(off+to) > int64(bufs[1].Len()) {
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "float16 value buffer too short"))
		}
		out := mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, 4*n)}
		half.Widen(out.Bytes, bufs[1].Bytes()[2*(off+from):2*(off+to)], false)
		return out, nil
	case *array.String:
		offs := a.ValueOffsets()
		return strs(t, func(i int) (int64, int64) { return int64(offs[i]), int64(offs[i+1]) }, len(offs), a.ValueBytes(), from, to, prev, loc)
	case *array.LargeString:
		offs := a.ValueOffsets()
		return strs(t, func(i int) (int64, int64) { return offs[i], offs[i+1] }, len(offs), a.ValueBytes(), from, to, prev, loc)
	case *array.Binary:
		offs := a.ValueOffsets()
		return strs(t, func(i int) (int64, int64) { return int64(offs[i]), int64(offs[i+1]) }, len(offs), a.ValueBytes(), from, to, prev, loc)
	case *array.LargeBinary:
		offs := a.ValueOffsets()
		return strs(t, func(i int) (int64, int64) { return offs[i], offs[i+1] }, len(offs), a.ValueBytes(), from, to, prev, loc)
	case *array.FixedSizeBinary:
		if t == mlfeed.Bytes {
			w := int64(a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth)
			bufs := a.Data().Buffers()
			if len(bufs) < 2 || bufs[1] == nil {
				return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "no value buffer"))
			}
			return strs(t, func(i int) (int64, int64) { return (off + int64(i)) * w, (off + int64(i) + 1) * w }, a.Len()+1, bufs[1].Bytes(), from, to, prev, loc)
		}
	case *array.Dictionary:
		return dec.dictionary(a, from, to, t, prev, loc)
	}
	sz := t.Size()
	if sz == 0 || arr.DataType().ID() == arrow.FIXED_SIZE_BINARY && arr.DataType().(*arrow.FixedSizeBinaryType).ByteWidth != sz {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "%s values read as %s", arr.DataType(), t))
	}
	bufs := arr.Data().Buffers()
	if len(bufs) < 2 || bufs[1] == nil && n > 0 {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "no value buffer"))
	}
	if n == 0 {
		return mlfeed.Buffer{Type: t, Bytes: []byte{}}, nil
	}
	b := bufs[1].Bytes()
	lo, hi := (off+from)*int64(sz), (off+to)*int64(sz)
	if hi > int64(len(b)) {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "value buffer of %d bytes, %d needed", len(b), hi))
	}
	return mlfeed.Buffer{Type: t, Bytes: b[lo:hi:hi]}, nil
}

// strs decodes text or binary values (t String or Bytes) as strings over the array's bytes.
func strs(t mlfeed.ElemType, at func(int) (int64, int64), nOffs int, data []byte, from, to int64, prev mlfeed.Buffer, loc locator) (mlfeed.Buffer, error) {
	if to >= int64(nOffs) && to > from {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "text offsets buffer too short"))
	}
	if !t.IsVarLen() {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "variable-length values read as %s", t))
	}
	out := mlfeed.Buffer{Type: t, Strings: grow(prev.Strings, int(to-from))}
	for k := range out.Strings {
		lo, hi := at(int(from) + k)
		if lo < 0 || hi < lo || hi > int64(len(data)) {
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from+int64(k), "text offsets [%d, %d) outside %d bytes", lo, hi, len(data)))
		}
		out.Strings[k] = unsafe.String(unsafe.SliceData(data[lo:hi]), hi-lo)
	}
	return out, nil
}

// dictionary decodes a dictionary-encoded range into plain values.
func (dec *Decoder) dictionary(a *array.Dictionary, from, to int64, t mlfeed.ElemType, prev mlfeed.Buffer, loc locator) (mlfeed.Buffer, error) {
	dict := a.Dictionary()
	vals, err := dec.leaf(dict, 0, int64(dict.Len()), t, mlfeed.Buffer{}, fixedLoc(loc, 0, 0))
	if err != nil {
		return mlfeed.Buffer{}, err
	}
	ixArr := a.Indices()
	ix, err := dec.leaf(ixArr, from, to, elemType(ixArr.DataType()), mlfeed.Buffer{}, loc)
	if err != nil {
		return mlfeed.Buffer{}, err
	}
	n := ix.Len()
	out := mlfeed.Buffer{Type: t}
	if t.IsVarLen() {
		out.Strings = grow(prev.Strings, n)
	} else {
		out.Bytes = grow(prev.Bytes, n*t.Size())
	}
	sz := t.Size()
	for k := 0; k < n; k++ {
		j := ix.Int64At(k)
		if j < 0 || j >= int64(vals.Len()) {
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from+int64(k), "dictionary index %d outside the %d values", j, vals.Len()))
		}
		if t.IsVarLen() {
			out.Strings[k] = vals.Strings[j]
		} else {
			copy(out.Bytes[k*sz:(k+1)*sz], vals.Bytes[int(j)*sz:])
		}
	}
	return out, nil
}

// Samples returns the sample count of rec (Chunk.SequenceLength summed over its rows) from
// the offsets of its columns of lists of samples alone, without decoding values.
func (p *Plan) Samples(rec arrow.RecordBatch) (int64, error) {
	n := int(rec.NumRows())
	lens := make([]int64, n)
	lists := false
	for i, c := range p.Columns {
		if !c.Seq {
			for k := range lens {
				lens[k] = max(lens[k], 1)
			}
			continue
		}
		lists = true
		arr, err := p.column(rec, i, locator{column: p.Schema.Streams[i].Name, row: identity})
		if err != nil {
			return 0, err
		}
		if arr.Len() < n {
			return 0, fmt.Errorf("%w: column %q has %d rows, the batch %d", ErrFormat, p.Schema.Streams[i].Name, arr.Len(), n)
		}
		off, _, _, err := listOffsets(arr, n, nil)
		if err != nil {
			return 0, fmt.Errorf("%w: column %q: %v", ErrFormat, p.Schema.Streams[i].Name, err)
		}
		for k := range lens {
			lens[k] = max(lens[k], off[k+1]-off[k])
		}
	}
	var total int64
	for _, l := range lens {
		total += l
	}
	if !lists {
		return int64(n), nil
	}
	return total, nil
}
