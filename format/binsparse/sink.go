package binsparse

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Sink writes an mlfeed data set as Binsparse matrices: each stream becomes one matrix whose
// rows are the stream's samples in order, CSR for sparse streams and DMATR for dense ones
// (WriteOptions.Format converts them). One stream is written to the root group (or Group);
// several streams each to a group named after the stream. The stream's name (and a dense
// sample's Shape) is kept in the user key "mlfeed".
//
// In HDF5 files with no Format, Minimize or Expand option the rows are written as they arrive
// (growable chunked datasets; indices of the smallest unsigned type that holds the stream's
// Dim, pointers of the smallest that holds the count, or uint64 beyond 4 million rows), so
// memory stays bounded; otherwise, and for NPZ, the data is
// gathered in memory and written by Close. The file is complete only after Close.
type Sink struct {
	w       *Writer
	schema  mlfeed.Schema
	group   string
	acc     []*Collector
	streams []*streamWriter
	closed  bool
}

// StructureAnnotation is the name of the stream annotation that carries a matrix's structure
// through the data model when a reader keeps only the stored triangle (SourceOptions.
// KeepStructure), so that Binsparse and Matrix Market writers restore it. Its value is one
// string, such as "symmetric_lower".
const StructureAnnotation = "binsparse.structure"

func structureAnnotation(st Structure) mlfeed.Annotation {
	return mlfeed.Annotation{
		Name: StructureAnnotation,
		Desc: mlfeed.Stream{Type: mlfeed.String, Storage: mlfeed.Dense, Dim: 1},
		Data: mlfeed.StreamData{SeqStart: []int64{0, 1}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{string(st)}}},
	}
}

// streamStructure returns the structure a stream's annotation declares (General if none).
func streamStructure(st *mlfeed.Stream) (Structure, error) {
	for _, a := range st.Metadata {
		if a.Name != StructureAnnotation {
			continue
		}
		if a.Data.Values.Type != mlfeed.String || len(a.Data.Values.Strings) != 1 {
			return General, fmt.Errorf("%w: stream %q: annotation %s must hold one string", ErrFormat, st.Name, StructureAnnotation)
		}
		s, ok := parseStructure(a.Data.Values.Strings[0])
		if !ok {
			return General, fmt.Errorf("%w: stream %q: unknown structure %q", ErrFormat, st.Name, a.Data.Values.Strings[0])
		}
		return s, nil
	}
	return General, nil
}

// Collector gathers one stream's samples as the rows of a matrix (see Sink).
type Collector struct {
	st     mlfeed.Stream
	rows   int64
	ptr    []int64
	idx    []int64
	maxIdx int64
	vals   mlfeed.Buffer
}

// NewSink creates the file name and returns a Sink writing schema's streams into it. group
// ("" for the default) places a single stream's matrix. The file is NPZ when name ends in
// ".npz", HDF5 otherwise.
func NewSink(name string, schema mlfeed.Schema, group string, opts *WriteOptions) (*Sink, error) {
	return newSink(name, strings.HasSuffix(strings.ToLower(name), ".npz"), schema, group, opts)
}

func newSink(name string, npz bool, schema mlfeed.Schema, group string, opts *WriteOptions) (*Sink, error) {
	if len(schema.Streams) == 0 {
		return nil, fmt.Errorf("%w: no streams to write", ErrUnsupported)
	}
	w, err := create(name, npz, opts)
	if err != nil {
		return nil, err
	}
	if w.npz != nil && len(schema.Streams) > 1 {
		w.Close()
		return nil, fmt.Errorf("%w: an NPZ file holds one matrix; the data set has %d streams", ErrUnsupported, len(schema.Streams))
	}
	s := &Sink{w: w, schema: schema, group: group}
	streamed := w.h != nil && w.opts.Format == "" && !w.opts.Minimize && !w.opts.Expand
	for _, st := range schema.Streams {
		g := group
		if len(schema.Streams) > 1 {
			g = "/" + st.Name
		}
		if g == "" {
			g = "/"
		}
		if streamed {
			sw, err := newStreamWriter(w, st, g)
			if err != nil {
				w.Close()
				return nil, err
			}
			s.streams = append(s.streams, sw)
			continue
		}
		c, err := NewCollector(st)
		if err != nil {
			w.Close()
			return nil, err
		}
		s.acc = append(s.acc, c)
	}
	return s, nil
}

// NewCollector returns a Collector for samples of stream st.
func NewCollector(st mlfeed.Stream) (*Collector, error) {
	if !validValueType(st.Type) {
		return nil, fmt.Errorf("%w: stream %q holds %s values, which Binsparse cannot store", ErrUnsupported, st.Name, st.Type)
	}
	if st.Storage == mlfeed.Dense && st.Dim == 0 {
		return nil, fmt.Errorf("%w: stream %q has variable-size dense samples; a matrix needs rows of one length", ErrUnsupported, st.Name)
	}
	return &Collector{st: st, ptr: []int64{0}, vals: mlfeed.Buffer{Type: st.Type}, maxIdx: -1}, nil
}

// WriteChunk appends the chunk's samples as rows.
func (s *Sink) WriteChunk(c *mlfeed.Chunk) error {
	if err := c.Validate(&s.schema); err != nil {
		return err
	}
	for i, sw := range s.streams {
		if err := sw.add(&c.Streams[i]); err != nil {
			return err
		}
	}
	for i, a := range s.acc {
		a.Add(&c.Streams[i])
	}
	return nil
}

// Add appends the samples of d, one stream's data of a valid chunk, as rows.
func (a *Collector) Add(d *mlfeed.StreamData) {
	n := d.Samples()
	a.rows += n
	a.vals.Append(d.Values)
	if a.st.Storage == mlfeed.Dense {
		return
	}
	base := a.ptr[len(a.ptr)-1]
	for k := int64(1); k <= n; k++ {
		a.ptr = append(a.ptr, base+d.SampleStart[k])
	}
	for _, ix := range d.Indices {
		a.idx = append(a.idx, int64(ix))
		a.maxIdx = max(a.maxIdx, int64(ix))
	}
}

// Matrix returns the rows gathered so far as a matrix: CSR for a sparse stream (its columns
// are the stream's Dim, or the largest index + 1 when Dim is 0), DMATR for a dense one, with
// the structure the stream's StructureAnnotation declares.
func (a *Collector) Matrix() (*Matrix, error) {
	var m *Matrix
	var err error
	if a.st.Storage == mlfeed.Dense {
		m, err = New(DMATR, []int64{a.rows, int64(a.st.Dim)}, map[string]mlfeed.Buffer{"values": a.vals}, false)
	} else {
		cols := int64(a.st.Dim)
		if cols == 0 {
			cols = a.maxIdx + 1
		}
		// Sort each row's indices: mlfeed samples need not be sorted, Binsparse rows must be.
		if err := sortRows(a.ptr, a.idx, a.vals); err != nil {
			return nil, fmt.Errorf("stream %q: %w", a.st.Name, err)
		}
		m, err = New(CSR, []int64{a.rows, cols}, map[string]mlfeed.Buffer{
			"pointers_to_1": fromInt64s(a.ptr, MinIndexType(a.ptr[len(a.ptr)-1])),
			"indices_1":     fromInt64s(a.idx, MinIndexType(max(cols, a.rows))),
			"values":        a.vals,
		}, false)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", a.st.Name, err)
	}
	m = patternIso(m)
	if m.Descriptor.Structure, err = streamStructure(&a.st); err != nil {
		return nil, err
	}
	if m.Descriptor.Structure != General {
		if err := m.Descriptor.check(); err != nil {
			return nil, fmt.Errorf("stream %q: %w", a.st.Name, err)
		}
		if err := m.checkTriangle(); err != nil {
			return nil, fmt.Errorf("stream %q: %w", a.st.Name, err)
		}
	}
	key := mlfeedKey{Stream: a.st.Name}
	if len(a.st.Shape) > 1 {
		key.Shape = a.st.Shape
	}
	js, _ := json.Marshal(key)
	m.Descriptor.User = map[string]json.RawMessage{"mlfeed": js}
	return m, nil
}

// sortRows sorts the indices (and values) of each row and rejects repeated indices.
func sortRows(ptr, idx []int64, vals mlfeed.Buffer) error {
	sz := vals.Type.Size()
	tmp := make([]byte, sz)
	for r := 0; r+1 < len(ptr); r++ {
		lo, hi := ptr[r], ptr[r+1]
		sorted := true
		for k := lo + 1; k < hi; k++ {
			if idx[k] < idx[k-1] {
				sorted = false
				break
			}
		}
		if !sorted {
			sortRow(idx[lo:hi], vals.Bytes[int(lo)*sz:int(hi)*sz], sz, tmp)
		}
		for k := lo + 1; k < hi; k++ {
			if idx[k] == idx[k-1] {
				return fmt.Errorf("%w: sample %d holds index %d twice", ErrFormat, r, idx[k])
			}
		}
	}
	return nil
}

// sortRow sorts one row's indices and moves its values (sz bytes each) along.
func sortRow(idx []int64, vals []byte, sz int, tmp []byte) {
	if len(idx) <= 32 { // insertion sort: most rows are short
		for k := 1; k < len(idx); k++ {
			x := idx[k]
			copy(tmp, vals[k*sz:(k+1)*sz])
			j := k - 1
			for ; j >= 0 && idx[j] > x; j-- {
				idx[j+1] = idx[j]
				copy(vals[(j+1)*sz:(j+2)*sz], vals[j*sz:(j+1)*sz])
			}
			idx[j+1] = x
			copy(vals[(j+1)*sz:(j+2)*sz], tmp)
		}
		return
	}
	perm := make([]int, len(idx))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool { return idx[perm[a]] < idx[perm[b]] })
	oi := append([]int64(nil), idx...)
	ov := append([]byte(nil), vals...)
	for i, p := range perm {
		idx[i] = oi[p]
		copy(vals[i*sz:(i+1)*sz], ov[p*sz:(p+1)*sz])
	}
}

// Close writes the matrices and finishes the file.
func (s *Sink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for _, sw := range s.streams {
		if err := sw.finish(); err != nil {
			s.w.Close()
			return err
		}
	}
	for _, a := range s.acc {
		m, err := a.Matrix()
		if err != nil {
			s.w.Close()
			return err
		}
		g := s.group
		if len(s.acc) > 1 {
			g = "/" + a.st.Name
		}
		if err := s.w.WriteMatrix(g, m); err != nil {
			s.w.Close()
			return err
		}
	}
	return s.w.Close()
}
