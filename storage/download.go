package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
)

// ErrChanged is wrapped by the error of a download during which the object was replaced: its
// ranges came with different entity tags or sizes.
var ErrChanged = errors.New("the object changed while it was read")

// Download copies the whole object name to w, with ranged requests made several at once as
// Object's large reads are, and returns the object's attributes as the service gave them with
// the bytes, and the number of bytes fetched (also on error). Every range must come with the
// first one's size and entity tag, else the error wraps ErrChanged. limit > 0 refuses an
// object larger than limit bytes (an error wrapping mlfeed.ErrTooLarge) before fetching
// more than its first piece.
func Download(ctx context.Context, name string, w io.WriterAt, limit int64) (Attributes, int64, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return Attributes{}, 0, err
	}
	var fetched atomic.Int64
	// The first piece gives the size and the entity tag.
	r, err := b.NewRangeReader(ctx, key, 0, pieceSize)
	if err != nil {
		// An empty object has no range to read: ask its attributes.
		a, aerr := b.Attributes(ctx, key)
		if aerr == nil && a.Size == 0 {
			return a, 0, nil
		}
		return Attributes{}, 0, wrap(name, err)
	}
	a := Attributes{Size: r.Size, ETag: r.ETag}
	if limit > 0 && a.Size > limit {
		r.Close()
		return a, 0, fmt.Errorf("%s: %w: %d bytes, more than %d", name, mlfeed.ErrTooLarge, a.Size, limit)
	}
	first := min(pieceSize, a.Size)
	err = copyRange(w, r, 0, first, &fetched)
	r.Close()
	if err != nil {
		return a, fetched.Load(), fmt.Errorf("%s: %w", name, err)
	}
	n := (a.Size - first + pieceSize - 1) / pieceSize
	errs := make([]error, n)
	sem := make(chan struct{}, maxFetches)
	var wg sync.WaitGroup
	for i := range n {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			off := first + i*pieceSize
			length := min(pieceSize, a.Size-off)
			r, err := b.NewRangeReader(ctx, key, off, length)
			if err != nil {
				errs[i] = err
				return
			}
			defer r.Close()
			if r.Size != a.Size || (r.ETag != a.ETag && r.ETag != "" && a.ETag != "") {
				errs[i] = fmt.Errorf("%w: %d bytes with entity tag %s, then %d bytes with %s", ErrChanged, a.Size, a.ETag, r.Size, r.ETag)
				return
			}
			errs[i] = copyRange(w, r, off, length, &fetched)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return a, fetched.Load(), fmt.Errorf("%s: %w", name, err)
	}
	return a, fetched.Load(), nil
}

// copyRange writes the length bytes r holds to w at off.
func copyRange(w io.WriterAt, r io.Reader, off, length int64, fetched *atomic.Int64) error {
	buf := make([]byte, min(length, 1<<20))
	for done := int64(0); done < length; {
		k, err := io.ReadFull(r, buf[:min(int64(len(buf)), length-done)])
		fetched.Add(int64(k))
		if _, werr := w.WriteAt(buf[:k], off+done); werr != nil {
			return werr
		}
		done += int64(k)
		if err != nil {
			return fmt.Errorf("byte offset %d: %w", off+done, errors.Join(mlfeed.ErrTruncated, err))
		}
	}
	return nil
}
