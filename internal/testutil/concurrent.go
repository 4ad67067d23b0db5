package testutil

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// ConcurrentReads checks mlfeed.Source's promise that ReadChunk (and ReadChunkReuse, with a
// chunk the caller is done with) is safe from several goroutines at once, as the minibatch
// engine's read-ahead and the C ABI call it: 8 goroutines read every chunk of src 20 times,
// in different orders, and each chunk must equal the one read alone. Run it under -race,
// which is what finds a decoding state the goroutines share. src needs two chunks at least.
func ConcurrentReads(t *testing.T, src mlfeed.Source) {
	t.Helper()
	ctx := context.Background()
	n := len(src.Chunks())
	if n < 2 {
		t.Fatalf("%d chunk: nothing to read at once", n)
	}
	want := make([]*mlfeed.Chunk, n)
	for i := range want {
		var err error
		if want[i], err = src.ReadChunk(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev *mlfeed.Chunk
			for k := range 20 * n {
				i := (g*7 + k) % n
				if g%2 == 1 {
					i = n - 1 - i
				}
				reuse := k%3 == 0
				var c *mlfeed.Chunk
				var err error
				if reuse {
					c, err = src.ReadChunkReuse(ctx, i, prev)
				} else {
					c, err = src.ReadChunk(ctx, i)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !EqualChunks(c, want[i]) {
					t.Errorf("chunk %d read beside others differs from chunk %d read alone", i, i)
					return
				}
				if reuse {
					prev = c
				}
			}
		}()
	}
	wg.Wait()
}

// EqualChunks reports whether two chunks hold the same sequences, IDs and streams, values
// compared by their bytes (so NaNs compare by their bits).
func EqualChunks(a, b *mlfeed.Chunk) bool {
	if a.Sequences != b.Sequences || !slices.Equal(a.IDs, b.IDs) || len(a.Streams) != len(b.Streams) {
		return false
	}
	for k := range a.Streams {
		x, y := a.Streams[k], b.Streams[k]
		if !slices.Equal(x.SeqStart, y.SeqStart) || !slices.Equal(x.SampleStart, y.SampleStart) ||
			!slices.Equal(x.Indices, y.Indices) || x.Values.Type != y.Values.Type ||
			!slices.Equal(x.Values.Bytes, y.Values.Bytes) || !slices.Equal(x.Values.Strings, y.Values.Strings) {
			return false
		}
	}
	return true
}
