// Package keep keeps decoded chunks in memory for the life of a reader, so that each is
// decoded once: CNTK's keepDataInMemory. It is the one implementation behind
// minibatch.Config.KeepDataInMemory and the KeepDataInMemory options of format/ctf and
// format/cbf.
//
// Chunks decodes a chunk on the first goroutine that asks for it; others asking for the same
// chunk meanwhile wait for that decode rather than decode it again. A decode that fails is not
// kept: the next request decodes again (after a cancelled ctx, or an error the caller reports
// and may retry).
package keep

import (
	"context"
	"sync"
)

// Chunks holds the chunks of a source decoded so far, each as a T: a decoded chunk
// (*mlfeed.Chunk), or whatever its user derives from one once. Its methods are safe for
// concurrent use.
type Chunks[T any] struct {
	read func(ctx context.Context, i int) (T, error)

	mu   sync.Mutex
	kept []*entry[T] // per chunk: being decoded or decoded, or nil
}

// entry is a chunk being decoded or decoded; v and err are set before done is closed.
type entry[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// New returns the keeper of n chunks that read decodes.
func New[T any](n int, read func(ctx context.Context, i int) (T, error)) *Chunks[T] {
	return &Chunks[T]{read: read, kept: make([]*entry[T], n)}
}

// Chunk returns chunk i, decoding it if no goroutine has yet; fresh reports that this call
// decoded it (so that its caller counts its memory once). While another goroutine decodes
// it, Chunk waits for that decode, or for ctx to end. i must be in [0, n).
func (k *Chunks[T]) Chunk(ctx context.Context, i int) (v T, fresh bool, err error) {
	for {
		k.mu.Lock()
		e := k.kept[i]
		if e == nil {
			e = &entry[T]{done: make(chan struct{})}
			k.kept[i] = e
			k.mu.Unlock()
			e.v, e.err = k.read(ctx, i)
			if e.err != nil {
				k.mu.Lock()
				k.kept[i] = nil
				k.mu.Unlock()
			}
			close(e.done)
			return e.v, e.err == nil, e.err
		}
		k.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return v, false, ctx.Err()
		}
		if e.err == nil {
			return e.v, false, nil
		}
		// That decode failed (perhaps only its own ctx ended): decode again.
	}
}

// Kept returns chunk i and true when it is decoded already, without waiting or decoding.
func (k *Chunks[T]) Kept(i int) (v T, ok bool) {
	k.mu.Lock()
	e := k.kept[i]
	k.mu.Unlock()
	if e == nil {
		return v, false
	}
	select {
	case <-e.done:
		return e.v, e.err == nil
	default:
		return v, false
	}
}
