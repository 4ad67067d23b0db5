package hdf5_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/hdf5"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// h5pyRead returns what h5py reads from the datasets of file: name -> shape, dtype, values as
// float64 (flattened).
func h5pyRead(t *testing.T, file string) map[string]pyArray {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skip("python3 with h5py not available")
	}
	script := `
import sys, json, h5py, numpy as np
out = {}
def visit(name, obj):
    if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "iuf" and obj.shape != () and not name.startswith("#"):
        a = obj[()]
        out[name] = {"shape": list(a.shape), "dtype": a.dtype.newbyteorder("<").str.replace("|", "<"), "values": a.astype("f8").ravel().tolist()}
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
print(json.dumps(out))
`
	b, err := exec.Command(py, "-c", script, file).Output()
	if err != nil {
		t.Fatalf("h5py: %v", err)
	}
	var res map[string]pyArray
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

type pyArray struct {
	Shape  []int     `json:"shape"`
	Dtype  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

// readAll reads every chunk of r, checking ReadChunkReuse against ReadChunk, and returns each
// stream's values as float64.
func readAll(t *testing.T, r *hdf5.Reader) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	var prev *mlfeed.Chunk
	for i := range r.Chunks() {
		c, err := r.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(ptr(r.Schema())); err != nil {
			t.Fatal(err)
		}
		lens, err := r.SequenceLengths(i)
		if err != nil || len(lens) != c.Sequences {
			t.Fatalf("SequenceLengths: %v %v", lens, err)
		}
		reused, err := r.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatal(err)
		}
		for k, st := range r.Schema().Streams {
			if !reflect.DeepEqual(c.Streams[k].Values.Bytes, reused.Streams[k].Values.Bytes) {
				t.Errorf("chunk %d stream %s: ReadChunkReuse differs", i, st.Name)
			}
			v := c.Streams[k].Values
			for j := 0; j < v.Len(); j++ {
				out[st.Name] = append(out[st.Name], v.Float64At(j))
			}
		}
		prev = reused
	}
	return out
}

func ptr(s mlfeed.Schema) *mlfeed.Schema { return &s }

func TestReadMatchesH5py(t *testing.T) {
	for _, c := range []struct {
		file   string
		shapes map[string][]int // stream name -> sample shape (nil: Dim only)
	}{
		{"testdata/keras_xy.h5", map[string][]int{"X": {4, 3}, "y": nil}},
		{"testdata/matlab73.h5", map[string][]int{"X": {3, 4, 4}, "y": {1}}},
	} {
		for _, rows := range []int{0, 3, 7} {
			r, err := hdf5.Open(c.file, &hdf5.ReaderOptions{ChunkRows: rows})
			if err != nil {
				t.Fatal(err)
			}
			want := h5pyRead(t, c.file)
			got := readAll(t, r)
			if len(got) != len(want) {
				t.Errorf("%s: streams %v, h5py %d datasets", c.file, r.Schema().Streams, len(want))
			}
			for _, st := range r.Schema().Streams {
				w := want[st.Name]
				if !reflect.DeepEqual(got[st.Name], w.Values) {
					t.Errorf("%s %s: values differ from h5py", c.file, st.Name)
				}
				if !reflect.DeepEqual(st.Shape, c.shapes[st.Name]) {
					t.Errorf("%s %s: shape %v", c.file, st.Name, st.Shape)
				}
			}
			r.Close()
		}
	}
}

func TestDatasetsOption(t *testing.T) {
	r, err := hdf5.Open("testdata/keras_xy.h5", &hdf5.ReaderOptions{Datasets: []string{"y", "/X"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s := r.Schema().Streams; len(s) != 2 || s[0].Name != "y" || s[1].Name != "X" || s[1].Dim != 12 {
		t.Errorf("streams %+v", s)
	}
	if _, err := hdf5.Open("testdata/keras_xy.h5", &hdf5.ReaderOptions{Datasets: []string{"nope"}}); err == nil {
		t.Error("a missing dataset was accepted")
	}
}

func TestNoSharedFirstDimension(t *testing.T) {
	_, err := hdf5.Open("testdata/mixed.h5", nil)
	if !errors.Is(err, mlfeed.ErrFormat) {
		t.Errorf("err = %v", err)
	}
	r, err := hdf5.Open("testdata/mixed.h5", &hdf5.ReaderOptions{Datasets: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r)["a"]; !reflect.DeepEqual(got, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("big-endian a = %v", got)
	}
	if _, err := hdf5.Open("testdata/mixed.h5", &hdf5.ReaderOptions{Datasets: []string{"s"}}); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("scalar: %v", err)
	}
}

// TestWriteRoundTrip writes each test file's data set as HDF5 (several options) and checks that
// this package and h5py read it back equal, shapes included.
func TestWriteRoundTrip(t *testing.T) {
	for _, file := range []string{"testdata/keras_xy.h5", "testdata/matlab73.h5"} {
		for _, o := range []*hdf5.WriterOptions{nil, {Level: 6, Shuffle: true, ChunkRows: 7}, {ChunkRows: 1}} {
			r, err := hdf5.Open(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, r)
			p := filepath.Join(t.TempDir(), "out.h5")
			if err := write(p, r, o); err != nil {
				t.Fatal(err)
			}
			r.Close()
			back, err := hdf5.Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, back); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: values differ after the round trip", file, o)
			}
			if !reflect.DeepEqual(back.Schema(), r.Schema()) {
				t.Errorf("%s: schema %+v, was %+v", file, back.Schema(), r.Schema())
			}
			back.Close()
			orig := h5pyRead(t, file)
			for name, a := range h5pyRead(t, p) {
				if !reflect.DeepEqual(a, orig[name]) {
					t.Errorf("%s %+v: h5py reads %s as %v %s, was %v %s", file, o, name, a.Shape, a.Dtype, orig[name].Shape, orig[name].Dtype)
				}
			}
		}
	}
}

func write(p string, src mlfeed.Source, o *hdf5.WriterOptions) error {
	w, err := hdf5.Create(p, src.Schema(), o)
	if err != nil {
		return err
	}
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			return err
		}
		if err := w.WriteChunk(c); err != nil {
			return err
		}
	}
	return w.Close()
}

func TestWriteRefuses(t *testing.T) {
	for _, st := range []mlfeed.Stream{
		{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10},
		{Name: "t", Storage: mlfeed.Dense, Type: mlfeed.String, Dim: 1},
		{Name: "v", Storage: mlfeed.Dense, Type: mlfeed.Float32},
	} {
		_, err := hdf5.Create(filepath.Join(t.TempDir(), "x.h5"), mlfeed.Schema{Streams: []mlfeed.Stream{st}}, nil)
		if !errors.Is(err, mlfeed.ErrUnsupported) {
			t.Errorf("%+v: %v", st, err)
		}
	}
}

// TestWriteParallel writes the same file serially and with a scheduler in
// WriterOptions.Context: the same bytes, compressed by the scheduler's helpers.
func TestWriteParallel(t *testing.T) {
	s := sched.New(3, 0)
	var files [2][]byte
	for i, ctx := range []context.Context{nil, sched.WithContext(context.Background(), s)} {
		r, err := hdf5.Open("testdata/keras_xy.h5", nil)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "out.h5")
		if err := write(p, r, &hdf5.WriterOptions{Level: 6, Shuffle: true, ChunkRows: 7, Context: ctx}); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if files[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(files[0]) == 0 || !bytes.Equal(files[0], files[1]) {
		t.Error("the files differ")
	}
	if s.PeakHelpers() == 0 {
		t.Error("no helper thread compressed")
	}
}
