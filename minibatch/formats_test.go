package minibatch_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/minibatch"
)

// TestEveryFormat writes one data set (57 rows of 3 float64 values, in chunks of 10) in every
// format mlfeed writes, reads it back through the format, and runs two randomized sweeps with
// two workers and packers: each sweep delivers every row exactly once, with its own values.
func TestEveryFormat(t *testing.T) {
	const n, dim = 57, 3
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: dim}}}
	var chunks []*mlfeed.Chunk
	for first := 0; first < n; first += 10 {
		k := min(10, n-first)
		d := mlfeed.StreamData{SeqStart: make([]int64, k+1), Values: mlfeed.NewBuffer(mlfeed.Float64, k*dim)}
		for q := range k {
			d.SeqStart[q+1] = int64(q + 1)
			for j := range dim {
				d.Values.Float64s()[q*dim+j] = float64((first+q)*10 + j)
			}
		}
		chunks = append(chunks, &mlfeed.Chunk{Sequences: k, Streams: []mlfeed.StreamData{d}})
	}
	mem, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"idx", "ctf", "cbf", "idv", "binsparse", "mtx", "webdataset"} {
		t.Run(name, func(t *testing.T) {
			ft, ok := format.Lookup(name)
			if !ok {
				t.Fatalf("format %s is not registered", name)
			}
			out := filepath.Join(dir, "data"+ft.Ext())
			if err := convert.File(context.Background(), mem, out, &convert.Options{Format: ft}); err != nil {
				if errors.Is(err, mlfeed.ErrUnsupported) {
					t.Skipf("%s: %v", name, err)
				}
				t.Fatal(err)
			}
			src, err := dataset.OpenFiles([]string{out}, name, &format.Options{Inputs: schema.Streams})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if err := mlfeed.Diff(context.Background(), mem, src); err != nil {
				t.Fatalf("read back: %v", err)
			}
			seen := map[[2]int64]int{}
			for rank := range 2 {
				r, err := minibatch.New(src, minibatch.Config{MinibatchSize: 8, RandomizationSeed: 9, MaxSweeps: 2, Workers: 2, Rank: rank, Packers: 2})
				if err != nil {
					t.Fatal(err)
				}
				for r.Next() {
					b := r.Batch()
					v := b.Dense(0).Float64s()
					for q := range b.Sequences {
						row := v[q*dim : (q+1)*dim]
						if row[1] != row[0]+1 || row[2] != row[0]+2 || int(row[0])%10 != 0 {
							t.Fatalf("sequence with values %v", row)
						}
						seen[[2]int64{b.Sweep, int64(row[0]) / 10}]++
					}
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				r.Close()
			}
			for s := range int64(2) {
				for g := range int64(n) {
					if c := seen[[2]int64{s, g}]; c != 1 {
						t.Fatalf("sweep %d: row %d delivered %d times", s, g, c)
					}
				}
			}
			if len(seen) != 2*n {
				t.Fatalf("%d (sweep, row) pairs", len(seen))
			}
		})
	}
}
