package hdf5_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/format/hdf5"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// FuzzReader opens arbitrary bytes as an HDF5 data set and reads every chunk, then writes what
// it read and reads that back: no panic, no hang, no allocation the input does not justify.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.h5")
	// and internal/hdf5's small files: object graphs with cycles, soft links, a gzip bomb
	hostile, _ := filepath.Glob("../../internal/hdf5/testdata/*.h5")
	// and its compound datasets (h5py's and PyTables' records)
	compound, _ := filepath.Glob("../../internal/hdf5/testdata/compound/*.h5")
	for _, name := range append(append(files, hostile...), compound...) {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 24<<10 {
			f.Add(b)
		}
	}
	// a budget of 8 MiB, as --memory 8M: a chunk that decodes to more is refused, not inflated
	ctx := sched.WithContext(context.Background(), sched.New(1, 8<<20))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := hdf5.NewReader(bytes.NewReader(data), int64(len(data)), &hdf5.ReaderOptions{ChunkRows: 64, Context: ctx})
		if err != nil {
			return
		}
		var total int64
		for _, st := range r.Schema().Streams {
			total += int64(st.Dim) * int64(st.Type.Size())
		}
		if total*int64(len(r.Chunks()))*64 > 64<<20 {
			return // a large (valid) claim: reading it is not what this target tests
		}
		for i := range r.Chunks() {
			if _, err := r.ReadChunk(ctx, i); err != nil {
				return
			}
		}
	})
}
