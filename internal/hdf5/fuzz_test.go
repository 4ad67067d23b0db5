package hdf5

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// smallBudget carries a scheduler of one thread and 1 MiB of memory.
var smallBudget = sched.WithContext(context.Background(), sched.New(1, 1<<20))

// walkAll reads everything in a file the way a user would, bounding what it asks to read, and
// returns the first error: every object once (Walk), soft links resolved, attributes and
// datasets read.
func walkAll(f *File) error {
	root, err := f.Root()
	if err != nil {
		return err
	}
	visit := func(o *Object) error {
		as, err := o.Attrs()
		if err != nil {
			return err
		}
		for _, a := range as {
			a.String()
		}
		if !o.IsDataset() {
			return nil
		}
		d, err := o.Dataset()
		if err != nil {
			return err
		}
		if d.Type.Class == VarString {
			return nil
		}
		if d.Len()*uint64(d.Type.Size) > 1<<22 {
			// a large claim: read its first row under a budget of 1 MiB, so that a chunk that
			// decodes to more is refused before it is allocated
			if rb := d.RowLen() * uint64(d.Type.Size); d.Rows() > 0 && rb <= 1<<22 {
				return d.ReadRowsContext(smallBudget, make([]byte, rb), 0, 1)
			}
			return nil
		}
		buf := make([]byte, d.Len()*uint64(d.Type.Size))
		return d.ReadRows(buf, 0, d.Rows())
	}
	if err := visit(root); err != nil {
		return err
	}
	n := 0
	return f.Walk(func(e WalkEntry) error {
		if n++; n > 1000 {
			return errors.New("enough")
		}
		if e.Object == nil || e.Kind != HardLink || e.Seen {
			return nil
		}
		return visit(e.Object)
	})
}

func seeds() []string {
	var files []string
	files, _ = filepath.Glob("testdata/*.h5")
	plugins, _ := filepath.Glob("testdata/plugins/*.h5")
	pytables, _ := filepath.Glob("testdata/pytables/*.h5")
	blosc, _ := filepath.Glob("testdata/blosc/*.h5")
	compound, _ := filepath.Glob("testdata/compound/*.h5")
	lzo, _ := filepath.Glob("testdata/lzo/*.h5")
	szip, _ := filepath.Glob("testdata/szip/*.h5")
	files = append(append(append(append(append(append(files, plugins...), pytables...), blosc...), compound...), lzo...), szip...)
	corpus := filepath.Join(testutil.SharedDir(), "testdata")
	if testutil.SharedDir() == "" {
		corpus = "../../testdata" // the repository's copy
	}
	shared, _ := filepath.Glob(filepath.Join(corpus, "binsparse", "*", "*.h5"))
	return append(files, shared...)
}

// FuzzReader opens arbitrary bytes as HDF5 and reads every object: no panic, no hang, and no
// allocation the input's size does not justify.
func FuzzReader(f *testing.F) {
	// small seeds only: the fuzzer minimizes every input that finds new coverage, which takes
	// long on large ones
	for _, name := range seeds() {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 24<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := NewFile(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			return
		}
		walkAll(h)
	})
}

// TestMutations runs FuzzReader's body on deterministic random corruptions of the seeds, with
// and without checksum verification, so that every test run covers some of what the fuzzers
// explore.
func TestMutations(t *testing.T) {
	for _, verify := range []bool{true, false} {
		verifyChecksums = verify
		mutate(t)
	}
	verifyChecksums = true
}

func mutate(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 100
	if testing.Short() {
		n = 10
	}
	for _, name := range seeds() {
		b, err := os.ReadFile(name)
		if err != nil || len(b) < 16 {
			continue
		}
		for it := 0; it < n; it++ {
			c := append([]byte(nil), b...)
			for k := 0; k < 3; k++ {
				p := rng.Intn(len(c) - 8)
				for j := 0; j < 1+rng.Intn(8); j++ {
					c[p+j] = byte(rng.Intn(256))
				}
			}
			if h, err := NewFile(bytes.NewReader(c), int64(len(c)), "mutated"); err == nil {
				walkAll(h)
			}
		}
	}
}

// FuzzReaderNoChecksums is FuzzReader with metadata checksums ignored, so that mutations reach
// the parsers of the structures that checksums guard (version 2 object headers, fractal heaps,
// v2 B-trees, fixed and extensible arrays).
func FuzzReaderNoChecksums(f *testing.F) {
	for _, name := range seeds() {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 24<<10 {
			f.Add(b)
		}
	}
	verifyChecksums = false
	defer func() { verifyChecksums = true }()
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := NewFile(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			return
		}
		walkAll(h)
	})
}
