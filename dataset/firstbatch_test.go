package dataset_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/cbf"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

// The first minibatch from a CBF object in object storage fetches the object's first and last
// blocks (its header and chunk table) and the chunks the minibatch reads, nothing more: the
// chunks the reader reads ahead are fetched once it is delivered (the time to the first
// minibatch is the fetches before it).
func TestObjectFirstMinibatch(t *testing.T) {
	bucket, _ := testutil.S3Server(t)
	ctx := context.Background()
	local := filepath.Join(t.TempDir(), "digits.cbf")
	// Chunks of 300 kB: read by one request each, not through the object's cached blocks.
	wo := format.WriteOptions{ChunkSize: 300 << 10}
	if err := convert.File(ctx, demo.Source(3000, 7), local, &convert.Options{Type: mlfeed.Float32, Write: wo}); err != nil {
		t.Fatal(err)
	}
	lr, err := cbf.Open(local, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := lr.Header()
	lr.Close()
	if len(h.Chunks) < 12 {
		t.Fatalf("%d chunks, want at least 12", len(h.Chunks))
	}
	chunkBytes := func(i int) int64 {
		if i+1 < len(h.Chunks) {
			return h.Chunks[i+1].Offset - h.Chunks[i].Offset
		}
		return h.Offset - h.Chunks[i].Offset
	}
	src, err := dataset.OpenFiles([]string{local}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := convert.File(ctx, src, bucket+"/digits.cbf", &convert.Options{Write: wo}); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []minibatch.Config{
		{MinibatchSize: 64, MaxSamples: 64, RandomizationWindow: 4, RandomizationSeed: 5, Prefetch: 4, Threads: 4},
		{MinibatchSize: 64, MaxSamples: 64, NoRandomize: true, Prefetch: 4, Threads: 4},
	} {
		obj, err := dataset.OpenFiles([]string{bucket + "/digits.cbf"}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := minibatch.New(obj, cfg)
		if err != nil {
			t.Fatal(err)
		}
		used := map[int]bool{}
		for r.Next() {
			for _, o := range r.Batch().Origins {
				used[o.Chunk] = true
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		var need int64
		for c := range used {
			need += chunkBytes(c)
		}
		d := obj.(mlfeed.Detailer).Details()
		fetched, size := d["fetched_bytes"].(int64), d["object_bytes"].(int64)
		const blocks = 2 * 256 << 10 // the first and last blocks, fetched on opening
		if fetched < need || fetched > need+blocks {
			t.Errorf("randomized %v: the first minibatch (%d chunks, %d bytes) fetched %d of the object's %d bytes, want at most %d", !cfg.NoRandomize, len(used), need, fetched, size, need+blocks)
		}
		obj.Close()
	}
}
