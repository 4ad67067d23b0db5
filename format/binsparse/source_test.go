package binsparse

import (
	"context"
	"errors"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// readAll returns every chunk of s.
func readAll(t *testing.T, s *Source) ([]*mlfeed.Chunk, error) {
	t.Helper()
	var out []*mlfeed.Chunk
	for i := range s.Chunks() {
		c, err := s.ReadChunk(context.Background(), i)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Streamed from the file and read whole, a matrix gives the same chunks, and either source
// is safe to read from several goroutines at once.
func TestStreamingMatchesWholeRead(t *testing.T) {
	old := valuesPerChunk
	valuesPerChunk = 50
	defer func() { valuesPerChunk = old }()
	r := rand.New(rand.NewSource(4))
	base := randomCOO(t, r, 40, 30, 0.3)
	files := map[string]string{}
	// complex values too: two stored floats per value
	cbase := &Matrix{Descriptor: base.Descriptor, Arrays: map[string]mlfeed.Buffer{}}
	cbase.Descriptor.DataTypes = map[string]DataType{}
	for k, v := range base.Arrays {
		cbase.Arrays[k], cbase.Descriptor.DataTypes[k] = v, base.Descriptor.DataTypes[k]
	}
	bv := base.Arrays["values"]
	cv := mlfeed.NewBuffer(mlfeed.Complex128, bv.Len())
	parts := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: cv.Bytes}.Float64s()
	for i := 0; i < bv.Len(); i++ {
		parts[2*i], parts[2*i+1] = bv.Float64At(i), -bv.Float64At(i)/3
	}
	cbase.Arrays["values"], cbase.Descriptor.DataTypes["values"] = cv, DataType{Type: mlfeed.Complex128}
	for _, f := range []Format{CSR, DMATR} {
		for _, b := range []*Matrix{base, cbase} {
			m, err := b.Convert(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := t.TempDir() + "/m.bsp.h5"
			if err := WriteFile(p, m, &WriteOptions{Chunk: 64, Shuffle: f == CSR}); err != nil {
				t.Fatal(err)
			}
			files[string(f)+"-"+m.Values().Type.String()] = p
		}
	}
	if d := testutil.SharedDir(); d != "" {
		// h5py's chunks of 100 (deflate, shuffle, Fletcher32): ranges cross chunk edges.
		for _, n := range []string{"chunked_gzip", "chunked_gzip_shuffle", "chunked_fletcher32", "latest_extensible_array_index"} {
			files[n] = filepath.Join(d, "testdata", "binsparse", "layouts", n+".bsp.h5")
		}
	}
	for f, p := range files {
		var got [2][]*mlfeed.Chunk
		for k, streaming := range []bool{true, false} {
			file, err := OpenFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s, err := file.Source("/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.streaming != streaming {
				if streaming {
					t.Fatalf("%s: not streamed", f)
				}
				s.streaming = false
			}
			if len(s.Chunks()) < 3 {
				t.Fatalf("%s: %d chunks", f, len(s.Chunks()))
			}
			if got[k], err = readAll(t, s); err != nil {
				t.Fatal(err)
			}
			testutil.ConcurrentReads(t, s) // Matrix Market's reader is the source read whole
			file.Close()
		}
		for i := range got[0] {
			a, b := got[0][i].Streams[0], got[1][i].Streams[0]
			if !reflect.DeepEqual(a.SampleStart, b.SampleStart) || !reflect.DeepEqual(a.Indices, b.Indices) ||
				!reflect.DeepEqual(a.Values.Bytes, b.Values.Bytes) || !reflect.DeepEqual(a.SeqStart, b.SeqStart) {
				t.Errorf("%s chunk %d: streamed and whole reads differ", f, i)
			}
		}
	}
}

func TestStreamingChecksRows(t *testing.T) {
	old := valuesPerChunk
	valuesPerChunk = 2
	defer func() { valuesPerChunk = old }()
	desc := `{"binsparse": {"version": "0.1", "format": "CSR", "shape": [4, 5], "number_of_stored_values": 6,
		"data_types": {"pointers_to_1": "uint8", "indices_1": "uint8", "values": "float64"}}}`
	open := func(idx mlfeed.Buffer) *Source {
		p := writeRaw(t, map[string]mlfeed.Buffer{"pointers_to_1": u8(0, 2, 3, 3, 6), "indices_1": idx, "values": f64(1, 2, 3, 4, 5, 6)}, desc)
		f, err := OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		s, err := f.Source("/", nil)
		if err != nil || !s.streaming {
			t.Fatalf("%v, streaming %v", err, s != nil && s.streaming)
		}
		return s
	}
	// An unsorted row is sorted (values move along).
	cs, err := readAll(t, open(u8(0, 4, 2, 4, 1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	last := cs[len(cs)-1].Streams[0]
	if !reflect.DeepEqual(last.Indices, []int32{1, 3, 4}) || !reflect.DeepEqual(last.Values.Float64s(), []float64{5, 6, 4}) {
		t.Errorf("row 3: %v %v", last.Indices, last.Values.Float64s())
	}
	// An index out of bounds in the last row is named with its position in the array.
	_, err = readAll(t, open(u8(0, 4, 2, 1, 7, 3)))
	var ae *ArrayError
	if !errors.As(err, &ae) || ae.Array != "indices_1" || ae.Index != 4 {
		t.Errorf("err = %v, want indices_1[4]", err)
	}
	// A repeated column is an error.
	if _, err = readAll(t, open(u8(0, 4, 2, 3, 1, 3))); !errors.Is(err, errDuplicate) {
		t.Errorf("err = %v, want a duplicate", err)
	}
}

func TestSinkStreamsPointers(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: 7}}}
	d := mlfeed.StreamData{SeqStart: []int64{0}, SampleStart: []int64{0}}
	var vals []float64
	for r := 0; r < 10; r++ {
		for c := 0; c < r%4; c++ {
			d.Indices = append(d.Indices, int32(c*2))
			vals = append(vals, float64(10*r+c))
		}
		d.SeqStart = append(d.SeqStart, int64(r+1))
		d.SampleStart = append(d.SampleStart, int64(len(d.Indices)))
	}
	d.Values = f64(vals...)
	chunk := &mlfeed.Chunk{Sequences: 10, Streams: []mlfeed.StreamData{d}}
	var got [2]*Matrix
	for k, held := range []int{1 << 22, 3} {
		old := maxHeldPointers
		maxHeldPointers = held
		p := t.TempDir() + "/p.bsp.h5"
		s, err := NewSink(p, schema, "", &WriteOptions{Chunk: 16})
		if err == nil {
			err = s.WriteChunk(chunk)
		}
		if err == nil {
			err = s.WriteChunk(chunk)
		}
		if err == nil {
			err = s.Close()
		}
		maxHeldPointers = old
		if err != nil {
			t.Fatal(err)
		}
		if got[k], err = ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if tp := got[0].Arrays["pointers_to_1"].Type; tp != mlfeed.Uint8 {
		t.Errorf("held pointers stored as %s, want uint8", tp)
	}
	if tp := got[1].Arrays["pointers_to_1"].Type; tp != mlfeed.Uint64 {
		t.Errorf("streamed pointers stored as %s, want uint64", tp)
	}
	a, _ := toInt64s("p", got[0].Arrays["pointers_to_1"])
	b, _ := toInt64s("p", got[1].Arrays["pointers_to_1"])
	if len(a) != 21 || !reflect.DeepEqual(a, b) || !reflect.DeepEqual(got[0].Values(), got[1].Values()) {
		t.Errorf("pointers %v and %v", a, b)
	}
}
