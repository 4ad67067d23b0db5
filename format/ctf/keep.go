package ctf

import (
	"context"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/keep"
)

// keeper holds the chunks parsed with KeepDataInMemory (internal/keep, as the minibatch
// engine and format/cbf keep theirs), made on first use.
type keeper struct {
	once   sync.Once
	chunks *keep.Chunks[*mlfeed.Chunk]
}

// keptChunk returns chunk i with KeepDataInMemory: parsed by the first call that asks for it
// and kept until the reader is dropped.
func (r *Reader) keptChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	r.kept.once.Do(func() {
		r.kept.chunks = keep.New(len(r.chunks), func(ctx context.Context, i int) (*mlfeed.Chunk, error) {
			return r.parse(ctx, i, nil)
		})
	})
	c, _, err := r.kept.chunks.Chunk(ctx, i)
	return c, err
}
