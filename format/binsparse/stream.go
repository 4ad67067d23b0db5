package binsparse

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
)

// streamWriter writes one stream's samples as the rows of a CSR (sparse) or DMATR (dense)
// matrix into an HDF5 group as they arrive: the arrays are growable datasets appended chunk
// by chunk, and the descriptor is written last, so memory stays bounded by a chunk. The row
// pointers are held until Close (and then stored in the smallest unsigned type that holds
// them) unless there are more than maxHeldPointers rows, when they stream as uint64.
type streamWriter struct {
	w         *Writer
	st        mlfeed.Stream
	group     string
	structure Structure
	idxType   mlfeed.ElemType
	ptrs      []uint64     // sparse: row pointers held in memory, while ptr is nil
	ptr       *h5.Appender // sparse: row pointers, once too many to hold
	idx       *h5.Appender // sparse only
	vals      *h5.Appender // nil while a bool sparse stream has held only true (a pattern)
	pattern   bool         // a bool sparse stream: written as iso[bint8] if every value is true
	rows      int64
	nnz       int64
	maxIdx    int64
	// scratch buffers, reused across chunks
	pbuf, ibuf, vbuf []byte
	rowIdx           []int64
}

func newStreamWriter(w *Writer, st mlfeed.Stream, group string) (*streamWriter, error) {
	if !validValueType(st.Type) {
		return nil, fmt.Errorf("%w: stream %q holds %s values, which Binsparse cannot store", ErrUnsupported, st.Name, st.Type)
	}
	if st.Storage == mlfeed.Dense && st.Dim == 0 {
		return nil, fmt.Errorf("%w: stream %q has variable-size dense samples; a matrix needs rows of one length", ErrUnsupported, st.Name)
	}
	structure, err := streamStructure(&st)
	if err != nil {
		return nil, err
	}
	s := &streamWriter{w: w, st: st, group: group, structure: structure, maxIdx: -1, idxType: mlfeed.Uint32}
	if st.Dim > 0 {
		s.idxType = MinIndexType(int64(st.Dim))
	}
	open := func(name string, t mlfeed.ElemType) (*h5.Appender, error) {
		return w.h.Append(group, name, t, w.h5Options(t))
	}
	vt, _ := storage(st.Type)
	if st.Type == mlfeed.Bool {
		vt = mlfeed.Int8
	}
	s.pattern = st.Type == mlfeed.Bool && st.Storage == mlfeed.Sparse
	if !s.pattern {
		if s.vals, err = open("values", vt); err != nil {
			return nil, err
		}
	}
	if st.Storage == mlfeed.Sparse {
		if s.idx, err = open("indices_1", s.idxType); err != nil {
			return nil, err
		}
		s.ptrs = []uint64{0}
	}
	return s, nil
}

// maxHeldPointers is the number of rows up to which the row pointers are held in memory (a
// variable for tests).
var maxHeldPointers = 1 << 22

// addPointers records the row pointers in s.pbuf (little-endian uint64).
func (s *streamWriter) addPointers() error {
	if s.ptr == nil {
		for i := 0; i+8 <= len(s.pbuf); i += 8 {
			s.ptrs = append(s.ptrs, binary.LittleEndian.Uint64(s.pbuf[i:]))
		}
		if len(s.ptrs) <= maxHeldPointers {
			return nil
		}
		var err error
		if s.ptr, err = s.w.h.Append(s.group, "pointers_to_1", mlfeed.Uint64, s.w.h5Options(mlfeed.Uint64)); err != nil {
			return err
		}
		held := make([]byte, 0, 8*len(s.ptrs))
		for _, p := range s.ptrs {
			held = binary.LittleEndian.AppendUint64(held, p)
		}
		s.ptrs = nil
		return s.ptr.Write(s.w.context(), held)
	}
	return s.ptr.Write(s.w.context(), s.pbuf)
}

// add appends the samples of d (one stream of a validated chunk) as rows.
func (s *streamWriter) add(d *mlfeed.StreamData) error {
	n := d.Samples()
	if s.st.Storage == mlfeed.Dense {
		s.rows += n
		return s.vals.Write(s.w.context(), d.Values.Bytes)
	}
	sz := d.Values.Type.Size()
	s.pbuf, s.ibuf, s.vbuf = s.pbuf[:0], s.ibuf[:0], s.vbuf[:0]
	tmp := make([]byte, sz)
	for k := int64(0); k < n; k++ {
		lo, hi := d.SampleStart[k], d.SampleStart[k+1]
		row := s.rowIdx[:0]
		for _, c := range d.Indices[lo:hi] {
			row = append(row, int64(c))
		}
		s.rowIdx = row
		vals := d.Values.Bytes[int(lo)*sz : int(hi)*sz]
		sorted := true
		for i := 1; i < len(row); i++ {
			sorted = sorted && row[i] > row[i-1]
		}
		if !sorted { // sort a copy: the chunk is not ours to change
			vals = append([]byte(nil), vals...)
			sortRow(row, vals, sz, tmp)
			for i := 1; i < len(row); i++ {
				if row[i] == row[i-1] {
					return fmt.Errorf("%w: stream %q: sample %d holds index %d twice", ErrFormat, s.st.Name, s.rows, row[i])
				}
			}
		}
		for _, c := range row {
			if s.structure != General && !inTriangle(s.structure, s.rows, c) {
				return fmt.Errorf("%w: stream %q: entry (%d, %d) lies outside the %s triangle", ErrFormat, s.st.Name, s.rows, c, s.structure)
			}
			s.maxIdx = max(s.maxIdx, c)
			s.ibuf = appendIndex(s.ibuf, c, s.idxType)
		}
		s.vbuf = append(s.vbuf, vals...)
		s.nnz += int64(len(row))
		s.rows++
		s.pbuf = binary.LittleEndian.AppendUint64(s.pbuf, uint64(s.nnz))
	}
	if err := s.addPointers(); err != nil {
		return err
	}
	if err := s.idx.Write(s.w.context(), s.ibuf); err != nil {
		return err
	}
	if s.vals == nil {
		if allOnes(s.vbuf) {
			return nil
		}
		// not a pattern after all: store the values held so far (all true) and go on
		var err error
		if s.vals, err = s.w.h.Append(s.group, "values", mlfeed.Int8, s.w.h5Options(mlfeed.Int8)); err != nil {
			return err
		}
		ones := bytes.Repeat([]byte{1}, 1<<16)
		for held := s.nnz - int64(len(s.vbuf)); held > 0; held -= int64(len(ones)) {
			if err := s.vals.Write(s.w.context(), ones[:min(held, int64(len(ones)))]); err != nil {
				return err
			}
		}
	}
	return s.vals.Write(s.w.context(), s.vbuf)
}

// allOnes reports whether every byte of b is 1 (bool values all true).
func allOnes(b []byte) bool {
	for _, c := range b {
		if c != 1 {
			return false
		}
	}
	return true
}

// inTriangle reports whether (r, c) lies in the stored triangle of structure st.
func inTriangle(st Structure, r, c int64) bool {
	switch st {
	case SkewSymmetricLower:
		return r > c
	case SkewSymmetricUpper:
		return r < c
	}
	if st.Lower() {
		return r >= c
	}
	return r <= c
}

func appendIndex(b []byte, v int64, t mlfeed.ElemType) []byte {
	switch t {
	case mlfeed.Uint8:
		return append(b, byte(v))
	case mlfeed.Uint16:
		return binary.LittleEndian.AppendUint16(b, uint16(v))
	case mlfeed.Uint32:
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(b, uint64(v))
}

// finish closes the arrays and writes the descriptor.
func (s *streamWriter) finish() error {
	var err error
	for _, a := range []*h5.Appender{s.ptr, s.idx, s.vals} {
		if a != nil {
			if cerr := a.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		return err
	}
	ptrType := mlfeed.Uint64
	if s.st.Storage == mlfeed.Sparse && s.ptr == nil {
		ptrType = MinIndexType(s.nnz)
		ptr := make([]int64, len(s.ptrs))
		for i, p := range s.ptrs {
			ptr[i] = int64(p)
		}
		b := fromInt64s(ptr, ptrType)
		if err := s.w.h.Write(s.group, "pointers_to_1", b, s.w.h5Options(ptrType)); err != nil {
			return err
		}
	}
	d := Descriptor{Version: Version, Structure: s.structure, DataTypes: map[string]DataType{"values": {Type: s.st.Type}}}
	if s.pattern && s.vals == nil {
		// every value was true: a pattern matrix, stored as iso[bint8] (or an empty array)
		n := min(s.nnz, 1)
		b := mlfeed.Buffer{Type: mlfeed.Int8, Bytes: bytes.Repeat([]byte{1}, int(n))}
		if err := s.w.h.Write(s.group, "values", b, s.w.h5Options(mlfeed.Int8)); err != nil {
			return err
		}
		d.DataTypes["values"] = DataType{Type: mlfeed.Bool, Iso: n == 1}
	}
	if s.st.Storage == mlfeed.Dense {
		d.Format, d.Shape, d.NumberOfStoredValues = DMATR, []int64{s.rows, int64(s.st.Dim)}, s.rows*int64(s.st.Dim)
	} else {
		cols := int64(s.st.Dim)
		if cols == 0 {
			cols = s.maxIdx + 1
		}
		d.Format, d.Shape, d.NumberOfStoredValues = CSR, []int64{s.rows, cols}, s.nnz
		d.DataTypes["pointers_to_1"] = DataType{Type: ptrType}
		d.DataTypes["indices_1"] = DataType{Type: s.idxType}
	}
	if d.Structure != General && d.Shape[0] != d.Shape[1] {
		return fmt.Errorf("%w: stream %q: structure %s needs a square matrix, the rows make %v", ErrFormat, s.st.Name, d.Structure, d.Shape)
	}
	key := mlfeedKey{Stream: s.st.Name}
	if len(s.st.Shape) > 1 {
		key.Shape = s.st.Shape
	}
	js, _ := json.Marshal(key)
	d.User = map[string]json.RawMessage{"mlfeed": js}
	desc, err := d.Marshal()
	if err != nil {
		return err
	}
	return s.w.h.SetAttr(s.group, "binsparse", string(desc))
}
