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
	in.Close()
	const dataBytes = 10000 * 784 * 4
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
			if len(perSweep) != 4 || !mapped && perSweep[0] < dataBytes/2 || mapped && perSweep[0] > dataBytes/4 {
				t.Fatalf("mapped %v, keep %v: allocations per sweep %v: the first sweep should decode the images only if they are not mapped", mapped, keep, perSweep)
			}
			for s, n := range perSweep[1:] {
				if n > dataBytes/4 {
					t.Fatalf("mapped %v, keep %v: sweep %d allocated %d bytes (images: %d): chunks were not recycled", mapped, keep, s+1, n, dataBytes)
				}
			}
		}
	}
}
