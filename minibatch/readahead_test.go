package minibatch

import (
	"context"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
)

// slowSource reads a chunk in a few milliseconds, as one in object storage does: time enough
// for chunks requested ahead to start loading while the first minibatch waits for its own.
type slowSource struct{ *memSource }

func (s slowSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	time.Sleep(5 * time.Millisecond)
	return s.memSource.ReadChunk(ctx, i)
}

func (s slowSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

// TestReadAheadAfterFirst checks that until the first minibatch is delivered only the chunks
// it needs are read (reading ahead would compete with them), and that reading ahead starts
// once it is delivered, before Next is called again.
func TestReadAheadAfterFirst(t *testing.T) {
	cfg := Config{MinibatchSize: 16, NoRandomize: true, Prefetch: 4, Threads: 2, MaxSamples: 16}
	src := slowSource{uniform(1000, 1, 10)} // chunks of 10 sequences: the first minibatch reads 2
	r := mustNew(t, src, cfg)
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if chunks, total := src.readCount(); chunks != 2 || total != 2 {
		t.Errorf("one minibatch of 16 read %d chunks (%d reads), want the 2 it needs", chunks, total)
	}

	cfg.MaxSamples = 0
	src = slowSource{uniform(1000, 1, 10)}
	r = mustNew(t, src, cfg)
	defer r.Close()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		chunks, _ := src.readCount()
		if chunks >= 2+cfg.Prefetch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first minibatch, %d chunks read, want its 2 and %d read ahead", chunks, cfg.Prefetch)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFirstChunksEarly checks that the chunks the first minibatch reads, which are requested
// while the first sweep is planned, are those and no others, whatever the window, the
// minibatch size and the sequences' lengths: a run of MaxSamples one minibatch's worth (or one
// sample more) reads only the chunks its minibatches read.
func TestFirstChunksEarly(t *testing.T) {
	for _, w := range []int{1, 2, 4, 9} {
		for _, mb := range []int{1, 7, 16, 45, 200} {
			for _, max := range []int{mb, mb + 1} {
				lens := make([]int, 600)
				for i := range lens {
					lens[i] = 1 + i*7%4 // 1 to 4 samples
				}
				sizes := make([]int, 40)
				for i := range sizes {
					sizes[i] = 15
				}
				src := indexedSource{slowSource{newMemSource(lens, sizes)}}
				r := mustNew(t, src, Config{MinibatchSize: mb, MaxSamples: int64(max), RandomizationWindow: int64(w), RandomizationSeed: 5, Threads: 8})
				used := map[int]bool{} // by the minibatches up to MaxSamples: one, or two when the first falls short
				for r.Next() {
					for _, o := range r.Batch().Origins {
						used[o.Chunk] = true
					}
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				r.Close()
				if chunks, total := src.readCount(); chunks != len(used) || total != len(used) {
					t.Errorf("window %d, minibatch %d, %d samples: %d chunks read (%d reads), want the %d its minibatches read",
						w, mb, max, chunks, total, len(used))
				}
			}
		}
	}
}

// indexedSource knows its sequences' lengths without reading chunks (as CBF's index does), so
// that the chunks it counts as read are the loads.
type indexedSource struct{ slowSource }

func (s indexedSource) SequenceLengths(i int) ([]int64, error) {
	return mlfeed.LengthsOf(s.chunks[i]), nil
}
