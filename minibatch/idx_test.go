package minibatch_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/idx"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

func openMNIST(t *testing.T) mlfeed.Source {
	t.Helper()
	images := testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte")
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")
	src, err := dataset.OpenFiles([]string{images, labels}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestMNIST reads the MNIST test set through IDX: every sweep delivers each image once, with
// its own label, in an order that changes per sweep; restoring mid-way continues identically.
func TestMNIST(t *testing.T) {
	src := openMNIST(t)
	// The labels in file order, to check that images and labels stay together.
	var labels []byte
	var firstPixels []byte
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		labels = append(labels, c.Streams[1].Values.Uint8s()...)
		px := c.Streams[0].Values.Uint8s()
		for q := 0; q < c.Sequences; q++ {
			firstPixels = append(firstPixels, px[q*784+300])
		}
	}
	starts := make([]int, len(src.Chunks()))
	for i := 1; i < len(starts); i++ {
		starts[i] = starts[i-1] + src.Chunks()[i-1].Sequences
	}
	cfg := minibatch.Config{MinibatchSize: 256, RandomizationSeed: 11, MaxSweeps: 2}
	r, err := minibatch.New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var orders [2][]int
	var batches []string
	var state minibatch.State
	for r.Next() {
		b := r.Batch()
		lab := b.Data.Streams[1].Values.Uint8s()
		px := b.Data.Streams[0].Values.Uint8s()
		for q, o := range b.Origins {
			g := starts[o.Chunk] + o.Index
			if lab[q] != labels[g] || px[q*784+300] != firstPixels[g] {
				t.Fatalf("sequence %d: label %d, want %d", g, lab[q], labels[g])
			}
			orders[b.Sweep] = append(orders[b.Sweep], g)
		}
		if b.Sequences > 256 || b.Layouts[0].Rows != b.Sequences || b.Layouts[0].Width != 1 {
			t.Fatalf("batch of %d sequences, layout %+v", b.Sequences, b.Layouts[0])
		}
		j, _ := json.Marshal(b.Origins)
		batches = append(batches, string(j))
		if len(batches) == 30 {
			state = r.State()
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for s, o := range orders {
		seen := make([]bool, 10000)
		for _, g := range o {
			seen[g] = true
		}
		for g, ok := range seen {
			if !ok {
				t.Fatalf("sweep %d misses sequence %d", s, g)
			}
		}
		if len(o) != 10000 {
			t.Fatalf("sweep %d has %d sequences", s, len(o))
		}
	}
	if reflect.DeepEqual(orders[0], orders[1]) {
		t.Fatal("both sweeps have the same order")
	}
	r2, err := minibatch.New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.Restore(state); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for r2.Next() {
		j, _ := json.Marshal(r2.Batch().Origins)
		rest = append(rest, string(j))
	}
	if !reflect.DeepEqual(rest, batches[30:]) {
		t.Fatal("restored reader differs")
	}
}
