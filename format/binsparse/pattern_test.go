package binsparse_test

import (
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
)

// boolChunk returns one sparse bool stream's data: rows of (index, value) pairs.
func boolChunk(rows [][][2]int) mlfeed.StreamData {
	d := sparseChunk(rows)
	b := mlfeed.NewBuffer(mlfeed.Bool, d.Values.Len())
	for i := range b.Bytes {
		if d.Values.Float64At(i) != 0 {
			b.Bytes[i] = 1
		}
	}
	d.Values = b
	return d
}

// TestSinkPattern: a bool stream whose values are all true is a pattern matrix, written as
// iso[bint8] (streamed HDF5, gathered HDF5 and NPZ alike); one false value keeps every value.
func TestSinkPattern(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "p", Storage: mlfeed.Sparse, Type: mlfeed.Bool, Dim: 9}}}
	ones := [][][2]int{{{1, 1}, {4, 1}}, {}, {{8, 1}}}
	mixed := [][][2]int{{{0, 1}}, {{2, 0}, {3, 1}}}
	for _, ext := range []string{".bsp.h5", ".bsp.npz"} {
		for _, opts := range []*binsparse.WriteOptions{nil, {Minimize: true}} {
			for _, chunks := range [][][][][2]int{{ones, ones}, {ones, mixed}} {
				p := filepath.Join(t.TempDir(), "p"+ext)
				s, err := binsparse.NewSink(p, schema, "", opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, rows := range chunks {
					if err := s.WriteChunk(&mlfeed.Chunk{Sequences: len(rows), Streams: []mlfeed.StreamData{boolChunk(rows)}}); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				m := read(t, p)
				vt := m.Descriptor.DataTypes["values"]
				pattern := len(chunks[1]) == len(ones)
				if vt.Type != mlfeed.Bool || vt.Iso != pattern {
					t.Errorf("%s %+v pattern=%v: values %v", ext, opts, pattern, vt)
				}
				if m.NNZ() != 6 {
					t.Errorf("%s: %d stored values", ext, m.NNZ())
				}
				got, err := m.Convert(binsparse.COOR, &binsparse.ConvertOptions{})
				if err != nil {
					t.Fatal(err)
				}
				vals := got.Arrays["values"]
				if !pattern && string(vals.Bytes) != "\x01\x01\x01\x01\x00\x01" {
					t.Errorf("%s: values %v", ext, vals.Bytes)
				}
			}
		}
	}
}

// TestMinimizeIndexTypes: minimize=true stores every index and pointer array of a CSR matrix
// in one type, the smallest that holds max(rows, cols, nnz), as mtx2bsp does.
func TestMinimizeIndexTypes(t *testing.T) {
	// 20x20 with 300 stored values: pointers reach 300 (uint16), indices stay below 20
	rows := make([][][2]int, 20)
	for r := range rows {
		for c := 0; c < 15; c++ {
			rows[r] = append(rows[r], [2]int{c, r + c + 1})
		}
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 20}}}
	for _, ext := range []string{".bsp.h5", ".bsp.npz"} {
		p := filepath.Join(t.TempDir(), "m"+ext)
		s, err := binsparse.NewSink(p, schema, "", &binsparse.WriteOptions{Minimize: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteChunk(&mlfeed.Chunk{Sequences: 20, Streams: []mlfeed.StreamData{sparseChunk(rows)}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		dt := read(t, p).Descriptor.DataTypes
		if dt["pointers_to_1"].Type != mlfeed.Uint16 || dt["indices_1"].Type != mlfeed.Uint16 || dt["values"].Type != mlfeed.Float32 {
			t.Errorf("%s: types %v", ext, dt)
		}
	}
}
