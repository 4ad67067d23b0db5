package hdf5

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// datasets returns every dataset of f below the root, by path.
func datasets(t *testing.T, f *File) map[string]*Dataset {
	out := map[string]*Dataset{}
	var walk func(o *Object)
	walk = func(o *Object) {
		if o.IsDataset() {
			d, err := o.Dataset()
			if err != nil {
				t.Fatal(err)
			}
			out[o.Path()] = d
			return
		}
		kids, err := o.Children()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			c, err := o.Child(k)
			if err != nil {
				t.Fatal(err)
			}
			walk(c)
		}
	}
	root, err := f.Root()
	if err != nil {
		t.Fatal(err)
	}
	walk(root)
	return out
}

// TestParallelRead reads every dataset (and row ranges of it) serially and with a scheduler of
// four threads: the same bytes, and the scheduler's helpers did work.
func TestParallelRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "w.h5")
	writeTestFile(t, name)
	s := sched.New(4, 0)
	ctx := sched.WithContext(context.Background(), s)
	files := append([]string{name}, generatedOrNone(t)...)
	for _, p := range files {
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for path, d := range datasets(t, f) {
			if d.Type.Class == VarString || d.Len() == 0 {
				continue
			}
			rl := d.RowLen() * uint64(d.Type.Size)
			rows := d.Rows()
			for _, r := range [][2]uint64{{0, rows}, {rows / 3, rows / 2}, {rows - 1, 1}} {
				want := make([]byte, r[1]*rl)
				got := make([]byte, r[1]*rl)
				if err := d.ReadRows(want, r[0], r[1]); err != nil {
					t.Fatalf("%s %s: %v", p, path, err)
				}
				if err := d.ReadRowsContext(ctx, got, r[0], r[1]); err != nil {
					t.Fatalf("%s %s: %v", p, path, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s %s rows %v: parallel read differs", filepath.Base(p), path, r)
				}
			}
		}
		f.Close()
	}
	if s.PeakHelpers() == 0 {
		t.Error("no helper thread ran")
	}
}

// generatedOrNone returns the h5py-written test files (big-endian, every chunk index), or none
// without h5py.
func generatedOrNone(t *testing.T) []string {
	if exec.Command("/usr/bin/python3", "-c", "import h5py").Run() != nil {
		return nil
	}
	return generated(t)
}

// TestParallelWrite writes the same datasets with and without a scheduler: the files are the
// same bytes.
func TestParallelWrite(t *testing.T) {
	dir := t.TempDir()
	s := sched.New(3, 0)
	ctx := sched.WithContext(context.Background(), s)
	for i, c := range []context.Context{context.Background(), ctx} {
		w, err := Create(filepath.Join(dir, []string{"a.h5", "b.h5"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		for _, c2 := range writeCases {
			n := 1
			for _, d := range c2.dims {
				n *= int(d)
			}
			if err := w.WriteDatasetContext(c, c2.path, c2.name, c2.t, c2.dims, testData(c2.t, n), c2.o); err != nil {
				t.Fatal(err)
			}
		}
		// odd sizes: a partial last chunk after parallel batches
		if err := w.WriteDatasetContext(c, "/", "odd", mlfeed.Float32, []uint64{12345}, testData(mlfeed.Float32, 12345), DatasetOptions{ChunkRows: 1000, Level: 1}); err != nil {
			t.Fatal(err)
		}
		// appended in pieces that start and end inside chunks
		d, err := w.CreateDataset("/", "appended", mlfeed.Float32, nil, DatasetOptions{ChunkRows: 1000, Level: 1})
		if err != nil {
			t.Fatal(err)
		}
		data := testData(mlfeed.Float32, 9000)
		for _, n := range []int{700, 2500, 1, 4000, 799, 1000} {
			if err := d.WriteContext(c, data[:4*n]); err != nil {
				t.Fatal(err)
			}
			data = data[4*n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.h5"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.h5"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the files differ (%d and %d bytes)", len(a), len(b))
	}
	if s.PeakHelpers() == 0 {
		t.Error("no helper thread ran")
	}
}
