package minibatch_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

// TestMNISTPairRecycles checks that the README's pair, float32 MNIST images and their labels
// zipped into one source, gets chunk recycling through mlfeed.Zip: read with ReadAt (mmap=false),
// after the first sweep a sweep decodes into the memory of the last one's chunks instead of
// allocating the images again. Mapped, the images are gathered straight from the file, kept
// in memory or not: no sweep allocates them, the first included (a batch's buffers are sized
// once, not grown by doubling).
func TestMNISTPairRecycles(t *testing.T) {
	images := filepath.Join(t.TempDir(), "images.idx")
	in, err := dataset.OpenFiles([]string{testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte.gz")}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := convert.File(context.Background(), in, images, &convert.Options{Type: mlfeed.Float32}); err != nil {
		t.Fatal(err)
	}
	seqs, _ := mlfeed.Totals(in.Chunks()) // 10000 in MNIST's file, 2000 in the repository's cut
	in.Close()
	dataBytes := uint64(seqs) * 784 * 4
	// The first sweep's allocations, by mapped and keep: the images are decoded (allocated)
	// only when they are not mapped; the rest (the plan, the engine's buffers) is the same.
	first := map[bool]map[bool]uint64{false: {}, true: {}}
	for _, mapped := range []bool{false, true} {
		opts := &format.Options{Params: map[string]string{"mmap": strconv.FormatBool(mapped)}}
		src, err := dataset.OpenFiles([]string{images, testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")}, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if len(src.Chunks()) < 2 {
			t.Fatalf("%d chunks: the test needs several", len(src.Chunks()))
		}
		for _, keep := range []bool{false, true} {
			r, err := minibatch.New(src, minibatch.Config{MinibatchSize: 250, MaxSweeps: 4, RandomizationSeed: 2, KeepDataInMemory: keep})
			if err != nil {
				t.Fatal(err)
			}
			var ms runtime.MemStats
			var perSweep []uint64
			runtime.ReadMemStats(&ms)
			last := ms.TotalAlloc
			for r.Next() {
				if r.Batch().EndOfSweep {
					runtime.ReadMemStats(&ms)
					perSweep = append(perSweep, ms.TotalAlloc-last)
					last = ms.TotalAlloc
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if len(perSweep) != 4 {
				t.Fatalf("mapped %v, keep %v: %d sweeps", mapped, keep, len(perSweep))
			}
			first[mapped][keep] = perSweep[0]
			for s, n := range perSweep[1:] {
				if n > dataBytes/4 {
					t.Fatalf("mapped %v, keep %v: sweep %d allocated %d bytes (images: %d): chunks were not recycled", mapped, keep, s+1, n, dataBytes)
				}
			}
		}
	}
	for _, keep := range []bool{false, true} {
		if d := int64(first[false][keep]) - int64(first[true][keep]); d < int64(dataBytes)/2 {
			t.Errorf("keep %v: the first sweep allocated %d bytes unmapped, %d mapped: the images (%d bytes) should be decoded only when not mapped", keep, first[false][keep], first[true][keep], dataBytes)
		}
	}
}
