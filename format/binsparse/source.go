package binsparse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// SourceOptions control how a matrix becomes an mlfeed.Source. The zero value expands
// symmetric structures and names the stream after the file's "mlfeed" user key, the group, or
// "values".
type SourceOptions struct {
	// KeepStructure delivers only the stored triangle of a symmetric, hermitian or
	// skew-symmetric matrix (the default delivers the logical matrix, both triangles).
	KeepStructure bool
	// Name, if set, names the stream.
	Name string
	// Log receives warnings (a fill value that sparse samples cannot carry). Nil discards them.
	Log io.Writer
}

// valuesPerChunk is the number of stored values a chunk aims at (a variable for tests).
var valuesPerChunk = 1 << 20

// Source delivers a matrix as an mlfeed.Source: each row is a sequence of one sample, sparse
// for the sparse formats (indices are columns) and dense for the dense formats. A vector is one
// row; a tensor of rank > 2 has shape[0] rows whose samples have the remaining dimensions as
// their Shape. The matrix is read from the file on the first ReadChunk and held in memory,
// row-major, until Close.
type Source struct {
	f      *File   // the file, or nil for a matrix in memory
	m      *Matrix // the matrix in memory, or nil
	where  string
	ownsF  bool
	group  string
	desc   *Descriptor
	opts   SourceOptions
	schema mlfeed.Schema
	chunks []mlfeed.ChunkInfo
	starts []int64 // first row of each chunk, plus the total
	ncols  int64

	once sync.Once
	err  error
	ptr  []int64 // sparse: row pointers
	idx  []int32 // sparse: column indices
	vals mlfeed.Buffer

	// Streaming (CSR, DMATR and DVEC in HDF5): only ptr is held; each chunk reads its rows.
	streaming bool
	infos     map[string]arrayInfo
}

// Open opens the matrix at name ("file.bsp.h5", "file.bsp.h5:/group") as a Source. Only the
// descriptor is read until the first ReadChunk.
func Open(name string, opts *SourceOptions) (*Source, error) {
	f, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	g, err := f.pick(name)
	if err == nil {
		var s *Source
		if s, err = f.Source(g, opts); err == nil {
			s.ownsF = true
			return s, nil
		}
	}
	f.Close()
	return nil, err
}

// Source returns the matrix in group as a Source. Closing it does not close f.
func (f *File) Source(group string, opts *SourceOptions) (*Source, error) {
	d, err := f.Descriptor(group)
	if err != nil {
		return nil, err
	}
	s := &Source{f: f, group: group, desc: d, where: f.where(group)}
	if opts != nil {
		s.opts = *opts
	}
	return s, s.init()
}

// NewSource returns a Source delivering the matrix m, which it validates.
func NewSource(m *Matrix, opts *SourceOptions) (*Source, error) {
	if _, err := m.check(func(error) bool { return true }); err != nil {
		return nil, err
	}
	s := &Source{m: m, desc: &m.Descriptor, where: "<matrix>"}
	if opts != nil {
		s.opts = *opts
	}
	return s, s.init()
}

// init computes the schema and the chunk table from the descriptor.
func (s *Source) init() error {
	d := s.desc
	st := mlfeed.Stream{Name: s.streamName(), Type: d.ValueType().Type, Storage: mlfeed.Sparse}
	if d.IsDense() {
		st.Storage = mlfeed.Dense
	}
	rows := d.Rows()
	var shape []int64
	switch len(d.Shape) {
	case 1:
		shape = d.Shape
	default:
		shape = d.Shape[1:]
	}
	s.ncols = 1
	for _, v := range shape {
		if v != 0 && s.ncols > math.MaxInt32/v {
			return fmt.Errorf("%s: %w: rows of %v elements exceed mlfeed's 32-bit sample indices", s.where, ErrUnsupported, shape)
		}
		s.ncols *= v
	}
	st.Dim = int(s.ncols)
	if len(shape) > 1 {
		for _, v := range shape {
			st.Shape = append(st.Shape, int(v))
		}
	} else if sh := s.userShape(); sh != nil && st.Storage == mlfeed.Dense {
		st.Shape = sh
	}
	if st.Storage == mlfeed.Dense && st.Dim == 0 {
		st.Storage = mlfeed.Sparse // a dense row of no values: keep samples well defined
	}
	s.schema = mlfeed.Schema{Streams: []mlfeed.Stream{st}}
	nnz := d.NumberOfStoredValues
	if nnz < 0 || st.Storage == mlfeed.Dense {
		nnz = rows * s.ncols
	}
	per := rows
	if nnz > 0 {
		per = max(1, int64(float64(rows)*float64(valuesPerChunk)/float64(nnz)))
	}
	for r := int64(0); r < rows; r += per {
		n := min(per, rows-r)
		s.starts = append(s.starts, r)
		s.chunks = append(s.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: n})
	}
	s.starts = append(s.starts, rows)
	if d.Fill && st.Storage == mlfeed.Sparse && s.opts.Log != nil && s.fillNonZero() {
		fmt.Fprintf(s.opts.Log, "binsparse: %s: warning: the fill value does not carry over to sparse samples, whose missing entries are 0\n", s.where)
	}
	if s.opts.KeepStructure && d.Structure != General {
		s.schema.Streams[0].Metadata = []mlfeed.Annotation{structureAnnotation(d.Structure)}
	}
	if s.f != nil {
		_, h5 := s.f.c.(*h5container)
		s.streaming = h5 && (d.Format == CSR || d.Format == DMATR || d.Format == DVEC) &&
			(d.Structure == General || s.opts.KeepStructure)
	}
	return nil
}

// fillNonZero reports whether the matrix has a fill value other than zero (reading the
// one-element fill_value array).
func (s *Source) fillNonZero() bool {
	dt, ok := s.desc.DataTypes["fill_value"]
	if !ok {
		return false
	}
	if s.m != nil {
		return string(s.m.fillBytes()) != string(make([]byte, len(s.m.fillBytes())))
	}
	b, err := s.f.readArray(context.Background(), s.group, "fill_value", dt)
	if err != nil || b.Len() != 1 {
		return true
	}
	for _, c := range b.Bytes {
		if c != 0 {
			return true
		}
	}
	return false
}

// mlfeedKey is the user key mlfeed writes: the stream's name and sample shape.
type mlfeedKey struct {
	Stream string `json:"stream,omitempty"`
	Shape  []int  `json:"shape,omitempty"`
}

func (s *Source) userKey() mlfeedKey {
	var k mlfeedKey
	if raw, ok := s.desc.User["mlfeed"]; ok {
		json.Unmarshal(raw, &k) // a foreign "mlfeed" key of another shape is ignored
	}
	return k
}

func (s *Source) userShape() []int {
	sh := s.userKey().Shape
	p := 1
	for _, v := range sh {
		if v <= 0 {
			return nil
		}
		p *= v
	}
	if len(sh) < 2 || int64(p) != s.ncols {
		return nil
	}
	return sh
}

func (s *Source) streamName() string {
	switch {
	case s.opts.Name != "":
		return s.opts.Name
	case s.userKey().Stream != "":
		return s.userKey().Stream
	case s.group != "" && s.group != "/":
		return path.Base(s.group)
	}
	return "values"
}

// Schema describes the one stream.
func (s *Source) Schema() mlfeed.Schema { return s.schema }

// Chunks returns the chunk table, computed from the shape and number_of_stored_values.
func (s *Source) Chunks() []mlfeed.ChunkInfo { return s.chunks }

// Descriptor returns the matrix's descriptor.
func (s *Source) Descriptor() *Descriptor { return s.desc }

// Details returns the descriptor's facts and the arrays' storage for `mlfeed info`.
func (s *Source) Details() map[string]any {
	d := s.desc
	m := map[string]any{"binsparse_format": string(d.Format), "shape": d.Shape,
		"number_of_stored_values": d.NumberOfStoredValues}
	if s.f != nil {
		m["container"] = "hdf5"
		if _, ok := s.f.c.(*npzContainer); ok {
			m["container"] = "npz"
		}
	}
	if d.Version != "" {
		m["version"] = d.Version
	}
	if d.Unwrapped {
		m["descriptor"] = "unwrapped"
	}
	types := map[string]string{}
	arrays := map[string]string{}
	for n, t := range d.DataTypes {
		types[n] = t.String()
		if s.f == nil {
			continue
		}
		if in, ok, err := s.f.c.array(s.group, n); err == nil && ok {
			arrays[n] = fmt.Sprintf("%s[%d] %s", in.Type, in.Len, in.Details)
		}
	}
	m["data_types"] = types
	if s.f != nil {
		m["arrays"] = arrays
	}
	if d.Structure != General {
		m["structure"] = string(d.Structure)
	}
	if d.Fill {
		m["fill"] = true
	}
	if d.Custom != nil {
		var b bytes.Buffer
		d.Custom.marshal(&b)
		m["custom"] = json.RawMessage(b.Bytes())
	}
	if s.group != "" && s.group != "/" {
		m["group"] = s.group
	}
	if s.f != nil {
		if gs, err := s.f.Matrices(); err == nil && len(gs) > 1 {
			m["matrices"] = gs
		}
	}
	if len(d.User) > 0 {
		u := map[string]json.RawMessage{}
		for k, v := range d.User {
			u[k] = v
		}
		m["user"] = u
	}
	return m
}

// load reads the matrix and arranges it row-major.
func (s *Source) load(ctx context.Context) error {
	s.once.Do(func() {
		if s.m != nil {
			s.err = s.arrange(s.m)
			return
		}
		if s.streaming {
			s.err = s.prepareStreaming()
			return
		}
		m, err := s.f.ReadMatrixContext(ctx, s.group)
		if err != nil {
			s.err = err
			return
		}
		s.err = s.arrange(m)
	})
	return s.err
}

// arrange holds m row-major: dense values (DMATR order) or CSR arrays.
func (s *Source) arrange(m *Matrix) error {
	d := &m.Descriptor
	expand := !s.opts.KeepStructure
	if s.schema.Streams[0].Storage == mlfeed.Dense {
		target := DMATR
		if len(d.Shape) == 1 {
			target = DVEC
		}
		if len(d.Shape) > 2 {
			e, err := m.entries(false, false)
			if err != nil {
				return err
			}
			t := &Matrix{Descriptor: Descriptor{Format: DMATR, Shape: []int64{e.nrows, e.ncols}}, Arrays: map[string]mlfeed.Buffer{}}
			if err := t.build(e, m.fillBytes(), 0); err != nil {
				return err
			}
			s.vals = t.Arrays["values"]
			return nil
		}
		c, err := m.Convert(target, &ConvertOptions{Expand: expand})
		if err != nil {
			return err
		}
		s.vals = c.Values()
		return nil
	}
	e, err := m.entries(true, expand)
	if err != nil {
		return err
	}
	if err := e.sortBy(false); err != nil {
		return fmt.Errorf("%s: %w", s.where, err)
	}
	s.ptr = make([]int64, e.nrows+1)
	for _, r := range e.rows {
		s.ptr[r+1]++
	}
	for i := int64(1); i <= e.nrows; i++ {
		s.ptr[i] += s.ptr[i-1]
	}
	s.idx = make([]int32, len(e.cols))
	for i, c := range e.cols {
		s.idx[i] = int32(c)
	}
	if e.iso {
		e.pos = make([]int64, len(e.rows))
		e.iso = false
	}
	s.vals = e.values()
	return nil
}

// prepareStreaming checks the arrays' types and lengths and reads the row pointers, which
// are validated whole; chunks then read and check their own rows.
func (s *Source) prepareStreaming() error {
	d := s.desc
	s.infos = map[string]arrayInfo{}
	for _, n := range d.LevelsOf().arrays() {
		in, err := s.f.checkArray(s.group, n, d.DataTypes[n])
		if err != nil {
			return err
		}
		s.infos[n] = in // Len counts stored elements: two floats per complex value
	}
	rows := d.Rows()
	_, per := storage(d.ValueType().Type)
	nvals := s.infos["values"].Len / int64(per)
	aerr := func(array string, index int64, format string, args ...any) error {
		e := arrayErr(array, index, format, args...)
		e.File = s.where
		return e
	}
	if d.Format != CSR {
		if nvals != rows*s.ncols {
			return aerr("values", -1, "has %d elements, shape %v needs %d", nvals, d.Shape, rows*s.ncols)
		}
		return nil
	}
	pb, err := s.f.readArray(context.Background(), s.group, "pointers_to_1", d.DataTypes["pointers_to_1"])
	if err != nil {
		return err
	}
	if s.ptr, err = toInt64s("pointers_to_1", pb); err != nil {
		err.(*ArrayError).File = s.where
		return err
	}
	nnz := s.infos["indices_1"].Len
	switch {
	case int64(len(s.ptr)) != rows+1:
		return aerr("pointers_to_1", -1, "has %d elements, want %d (rows + 1)", len(s.ptr), rows+1)
	case s.ptr[0] != 0:
		return aerr("pointers_to_1", 0, "first pointer is %d, not 0", s.ptr[0])
	case s.ptr[rows] != nnz:
		return aerr("pointers_to_1", rows, "last pointer is %d, indices_1 has %d elements", s.ptr[rows], nnz)
	case d.ValueType().Iso && nvals != 1:
		return aerr("values", -1, "iso values array has %d elements, not 1", nvals)
	case !d.ValueType().Iso && nvals != nnz:
		return aerr("values", -1, "has %d elements, the format's indices give %d", nvals, nnz)
	case d.NumberOfStoredValues >= 0 && d.NumberOfStoredValues != nnz:
		return fmt.Errorf("%s: %w: number_of_stored_values is %d, the arrays hold %d", s.where, ErrFormat, d.NumberOfStoredValues, nnz)
	}
	for i := 1; i < len(s.ptr); i++ {
		if s.ptr[i] < s.ptr[i-1] {
			return aerr("pointers_to_1", int64(i), "pointer %d is below the previous %d", s.ptr[i], s.ptr[i-1])
		}
	}
	return nil
}

// readStreamed reads rows [r0, r1) from the file.
func (s *Source) readStreamed(r0, r1 int64, out *mlfeed.StreamData) error {
	d := s.desc
	vt := d.ValueType()
	if d.Format != CSR {
		v, err := s.f.readRange(context.Background(), s.group, "values", vt, s.infos["values"], r0*s.ncols, (r1-r0)*s.ncols)
		out.Values = v
		return err
	}
	p0, p1 := s.ptr[r0], s.ptr[r1]
	ib, err := s.f.readRange(context.Background(), s.group, "indices_1", d.DataTypes["indices_1"], s.infos["indices_1"], p0, p1-p0)
	if err != nil {
		return err
	}
	idx, err := toInt64s("indices_1", ib)
	if err != nil {
		e := err.(*ArrayError)
		e.File = s.where
		if e.Index >= 0 {
			e.Index += p0
		}
		return e
	}
	var vals mlfeed.Buffer
	if vt.Iso {
		one, err := s.f.readRange(context.Background(), s.group, "values", vt, s.infos["values"], 0, 1)
		if err != nil {
			return err
		}
		vals = gather(one, make([]int64, len(idx)))
	} else if vals, err = s.f.readRange(context.Background(), s.group, "values", vt, s.infos["values"], p0, p1-p0); err != nil {
		return err
	}
	if vals.Type == mlfeed.Bool {
		for k, c := range vals.Bytes {
			if c > 1 {
				e := arrayErr("values", p0+int64(k), "bint8 value %d is not 0 or 1", int8(c))
				e.File = s.where
				return e
			}
		}
	}
	out.SampleStart = make([]int64, r1-r0+1)
	sz := vals.Type.Size()
	tmp := make([]byte, sz)
	for r := r0; r < r1; r++ {
		lo, hi := s.ptr[r]-p0, s.ptr[r+1]-p0
		out.SampleStart[r-r0+1] = hi
		row := idx[lo:hi]
		sorted := true
		for k, c := range row {
			if c >= s.ncols {
				e := arrayErr("indices_1", p0+lo+int64(k), "index %d is outside [0, %d)", c, s.ncols)
				e.File = s.where
				return e
			}
			if k > 0 && c <= row[k-1] {
				sorted = false
			}
		}
		if !sorted { // tolerated when reading, as for whole matrices
			sortRow(row, vals.Bytes[int(lo)*sz:int(hi)*sz], sz, tmp)
			for k := 1; k < len(row); k++ {
				if row[k] == row[k-1] {
					e := arrayErr("indices_1", p0+lo+int64(k), "%w: column %d appears twice in row %d", errDuplicate, row[k], r)
					e.File = s.where
					return e
				}
			}
		}
	}
	out.Indices = make([]int32, len(idx))
	for k, c := range idx {
		out.Indices[k] = int32(c)
	}
	out.Values = vals
	return nil
}

// ReadChunk returns chunk i: its rows, one sequence of one sample each.
// ReadChunkReuse reads chunk i as ReadChunk does; it does not reuse prev.
func (s *Source) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

// SequenceLengths returns chunk i's sequence lengths: each row is a sequence of one sample.
func (s *Source) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(s.chunks) {
		return nil, fmt.Errorf("binsparse: chunk %d of %d", i, len(s.chunks))
	}
	return mlfeed.Ones(s.chunks[i].Sequences), nil
}

func (s *Source) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(s.chunks) {
		return nil, fmt.Errorf("binsparse: chunk %d of %d", i, len(s.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	r0, r1 := s.starts[i], s.starts[i+1]
	n := r1 - r0
	d := mlfeed.StreamData{SeqStart: make([]int64, n+1)}
	for k := range d.SeqStart {
		d.SeqStart[k] = int64(k)
	}
	if s.streaming {
		if err := s.readStreamed(r0, r1, &d); err != nil {
			return nil, err
		}
	} else if s.ptr == nil {
		d.Values = s.vals.Slice(int(r0*s.ncols), int(r1*s.ncols))
	} else {
		p0, p1 := s.ptr[r0], s.ptr[r1]
		d.SampleStart = make([]int64, n+1)
		for k := range d.SampleStart {
			d.SampleStart[k] = s.ptr[r0+int64(k)] - p0
		}
		d.Indices = s.idx[p0:p1]
		d.Values = s.vals.Slice(int(p0), int(p1))
	}
	return &mlfeed.Chunk{Sequences: int(n), Streams: []mlfeed.StreamData{d}}, nil
}

// Close releases the matrix (and the file when Open opened it).
func (s *Source) Close() error {
	s.ptr, s.idx, s.vals = nil, nil, mlfeed.Buffer{}
	if s.ownsF {
		return s.f.Close()
	}
	return nil
}
