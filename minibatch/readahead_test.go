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
