package all_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
)

// Every writable format declares truthfully whether it keeps a multi-axis sample shape: a
// stream of shape 2x3 written and read back is 2x3 again exactly when Format.KeepsShape says
// so (package convert logs a notice for the others).
func TestKeepsShape(t *testing.T) {
	dir := t.TempDir()
	for _, ft := range format.All() {
		if !ft.Writable() {
			continue
		}
		t.Run(ft.Name, func(t *testing.T) {
			schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 6, Shape: []int{2, 3}}}}
			c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: mlfeed.NewBuffer(mlfeed.Float32, 12)}}}
			src, err := mlfeed.NewMemorySource(schema, c)
			if err != nil {
				t.Fatal(err)
			}
			out := outName(dir, "shape", ft)
			if err := convert.File(context.Background(), src, out, &convert.Options{Format: ft}); err != nil {
				t.Skipf("cannot write the stream: %v", err)
			}
			back, err := dataset.OpenFiles([]string{out}, ft.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			st := back.Schema().Streams[0]
			kept := slices.Equal(st.SampleShape(), []int{2, 3})
			if kept != ft.KeepsShape {
				t.Errorf("read back as %v; KeepsShape is %v", st, ft.KeepsShape)
			}
			if !kept && st.Dim != 6 {
				t.Errorf("read back as %v, not flat with dim 6", st)
			}
		})
	}
}

// Detection tells plain HDF5 data sets (format hdf5) from Binsparse files in HDF5 by their
// content, whatever their names: both have the HDF5 signature, and only Binsparse files hold
// a Binsparse descriptor.
func TestDetectHDF5OrBinsparse(t *testing.T) {
	dir := t.TempDir()
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3}}}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: mlfeed.NewBuffer(mlfeed.Float32, 6)}}}
	for _, name := range []string{"hdf5", "binsparse"} {
		ft, ok := format.Lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		src, err := mlfeed.NewMemorySource(schema, c)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".data") // no extension that names a format
		if err := convert.File(context.Background(), src, out, &convert.Options{Format: ft}); err != nil {
			t.Fatal(err)
		}
		got, err := format.Detect(out)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != name {
			t.Errorf("a file written as %s is detected as %s", name, got.Name)
		}
		back, err := dataset.OpenFiles([]string{out}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		back.Close()
	}
}
