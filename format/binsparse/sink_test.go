package binsparse_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
)

// chunk builds a chunk of one sparse stream from rows of (index, value) pairs.
func sparseChunk(rows [][][2]int) mlfeed.StreamData {
	d := mlfeed.StreamData{SeqStart: []int64{0}, SampleStart: []int64{0}, Values: mlfeed.Buffer{Type: mlfeed.Float32}}
	var vals []float64
	for i, r := range rows {
		for _, e := range r {
			d.Indices = append(d.Indices, int32(e[0]))
			vals = append(vals, float64(e[1]))
		}
		d.SeqStart = append(d.SeqStart, int64(i+1))
		d.SampleStart = append(d.SampleStart, int64(len(d.Indices)))
	}
	d.Values = mlfeed.NewBuffer(mlfeed.Float32, len(vals))
	for i, v := range vals {
		d.Values.SetFloat64(i, v)
	}
	return d
}

func TestSinkSortsRows(t *testing.T) {
	long := make([][2]int, 40)
	for i := range long {
		long[i] = [2]int{39 - i, i + 1}
	}
	rows := [][][2]int{{{5, 1}, {2, 2}, {9, 3}}, {}, long}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 50}}}
	exts := []string{".bsp.npz", ".bsp.h5"} // .bsp.h5: rows streamed into growable datasets
	for _, ext := range exts {
		p := filepath.Join(t.TempDir(), "s"+ext)
		s, err := binsparse.NewSink(p, schema, "", &binsparse.WriteOptions{Chunk: 16})
		if err != nil {
			t.Fatal(err)
		}
		c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{sparseChunk(rows)}}
		orig := append([]int32(nil), c.Streams[0].Indices...)
		if err := s.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(orig, c.Streams[0].Indices) {
			t.Errorf("%s: the sink changed the chunk", ext)
		}
		if err := s.WriteChunk(c); err != nil { // the same rows again: 6 rows
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		m := read(t, p)
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		d := sparsetest.Dense(t, m)
		if len(d) != 6 || d[3][2] != 2 || d[0][5] != 1 || d[0][9] != 3 || d[5][0] != 40 || d[2][39] != 1 || len(d[1]) != 50 {
			t.Errorf("%s: rows %v", ext, d)
		}
		if ext == ".bsp.h5" {
			if _, err := exec.LookPath("/usr/bin/python3"); err == nil {
				if res := runPython(t, []string{p}); !reflect.DeepEqual(res[p].Dense, d) {
					t.Errorf("python reads the streamed file as %v", res[p].Dense)
				}
			}
		}
		// A repeated index in a sample is refused.
		s, _ = binsparse.NewSink(p, schema, "", nil)
		err = s.WriteChunk(&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{sparseChunk([][][2]int{{{3, 1}, {3, 2}}})}})
		if err == nil {
			err = s.Close()
		}
		if err == nil {
			t.Errorf("%s: a sample with a repeated index was written", ext)
		}
	}
}

func TestSinkSeveralStreams(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10},
		{Name: "labels", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 2, Shape: []int{1, 2}},
	}}
	labels := mlfeed.StreamData{SeqStart: []int64{0, 1, 2}, Values: mlfeed.NewBuffer(mlfeed.Uint8, 4)}
	copy(labels.Values.Bytes, []byte{1, 0, 0, 1})
	p := filepath.Join(t.TempDir(), "two.bsp.h5")
	s, err := binsparse.NewSink(p, schema, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{sparseChunk([][][2]int{{{1, 5}}, {{0, 2}, {7, 3}}}), labels}}
	if err := s.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := dataset.OpenFiles([]string{p}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sc := src.Schema()
	if len(sc.Streams) != 2 || sc.Streams[0].Name != "features" || sc.Streams[1].Name != "labels" || !reflect.DeepEqual(sc.Streams[1].Shape, []int{1, 2}) {
		t.Fatalf("schema %v", sc.Streams)
	}
	got, err := src.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Streams[1].Values.Bytes, []byte{1, 0, 0, 1}) || !reflect.DeepEqual(got.Streams[0].Indices, []int32{1, 0, 7}) {
		t.Errorf("read back %v %v", got.Streams[0].Indices, got.Streams[1].Values.Bytes)
	}
}

// TestSinkParallel writes the same rows serially and with a scheduler in WriteOptions.Context,
// streamed and as whole matrices (Minimize): the files are the same bytes, and the
// scheduler's helpers compressed chunks.
func TestSinkParallel(t *testing.T) {
	rows := make([][][2]int, 600)
	for i := range rows {
		for k := range 200 {
			rows[i] = append(rows[i], [2]int{k * 5, (i*7 + k) % 1000})
		}
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 1000}}}
	for _, minimize := range []bool{false, true} {
		s := sched.New(3, 0)
		var files [2][]byte
		for i, ctx := range []context.Context{nil, sched.WithContext(context.Background(), s)} {
			p := filepath.Join(t.TempDir(), "p.bsp.h5")
			sk, err := binsparse.NewSink(p, schema, "", &binsparse.WriteOptions{Chunk: 16 << 10, Minimize: minimize, Context: ctx})
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < len(rows); k += 150 { // pieces that end inside HDF5 chunks
				c := &mlfeed.Chunk{Sequences: 150, Streams: []mlfeed.StreamData{sparseChunk(rows[k : k+150])}}
				if err := sk.WriteChunk(c); err != nil {
					t.Fatal(err)
				}
			}
			if err := sk.Close(); err != nil {
				t.Fatal(err)
			}
			if files[i], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		if len(files[0]) == 0 || !bytes.Equal(files[0], files[1]) {
			t.Errorf("minimize %v: the files differ", minimize)
		}
		if s.PeakHelpers() == 0 {
			t.Errorf("minimize %v: no helper thread compressed", minimize)
		}
	}
}
