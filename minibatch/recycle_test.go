package minibatch_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

// TestMNISTPairRecycles checks that the README's pair, float32 MNIST images and their labels
// zipped into one source, gets chunk recycling through mlfeed.Zip: after the first sweep, a
// sweep decodes into the memory of the last one's chunks instead of allocating the images
// again. The source's RawSamples are hidden, so that the engine decodes the chunks rather than
// packing straight from the mapped files (which allocates no images at all).
func TestMNISTPairRecycles(t *testing.T) {
	images := filepath.Join(t.TempDir(), "images.idx")
	in, err := format.Open([]string{testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte.gz")}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := convert.File(context.Background(), in, images, &convert.Options{Type: mlfeed.Float32}); err != nil {
		t.Fatal(err)
	}
	in.Close()
	src, err := format.Open([]string{images, testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src = decodedOnly{src}
	if len(src.Chunks()) < 2 {
		t.Fatalf("%d chunks: the test needs several", len(src.Chunks()))
	}
	const dataBytes = 10000 * 784 * 4
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
		if len(perSweep) != 4 || perSweep[0] < dataBytes/2 {
			t.Fatalf("keep %v: allocations per sweep %v: the first sweep should decode the images", keep, perSweep)
		}
		for s, n := range perSweep[1:] {
			if n > dataBytes/4 {
				t.Fatalf("keep %v: sweep %d allocated %d bytes (images: %d): chunks were not recycled", keep, s+1, n, dataBytes)
			}
		}
	}
}

// decodedOnly is a source without RawSamples: the engine decodes its chunks.
type decodedOnly struct{ mlfeed.Source }
