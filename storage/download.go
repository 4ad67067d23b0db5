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
	d, err := StartDownload(ctx, name, w, limit)
	if err != nil {
		return d.Attributes(), d.Fetched(), err
	}
	err = d.Wait()
	return d.Attributes(), d.Fetched(), err
}

// A Transfer is a download in progress (StartDownload): the object's pieces are fetched by
// several ranged requests at once, in order, except that the pieces a reader waits for
// (Need) are fetched first. It is safe for concurrent use.
type Transfer struct {
	name  string
	b     Bucket
	key   string
	w     io.WriterAt
	attrs Attributes
	ctx   context.Context
	stop  context.CancelFunc

	fetched atomic.Int64
	done    chan struct{} // closed when every piece is written or the transfer failed
	pieces  []chan struct{}

	mu     sync.Mutex
	taken  []bool
	urgent []int // pieces readers wait for, the latest first
	next   int   // the first piece not taken, in order
	err    error // the first error, set before done is closed
	left   int   // pieces not yet written
}

// StartDownload starts copying the whole object name to w as Download does, and returns
// when the service has answered the first request (with the object's size and entity tag),
// leaving the bytes to come in the background. The error of a transfer that did not start
// (the object is missing, or larger than limit > 0: an error wrapping mlfeed.ErrTooLarge)
// comes with a Transfer that has ended with it and holds what is known: its Attributes and
// Fetched. A transfer
// stops when ctx is done or Cancel is called.
func StartDownload(ctx context.Context, name string, w io.WriterAt, limit int64) (*Transfer, error) {
	t := &Transfer{name: name, w: w, done: make(chan struct{})}
	fail := func(err error) (*Transfer, error) {
		t.err = err
		if t.stop != nil {
			t.stop()
		}
		close(t.done)
		return t, err
	}
	b, key, err := bucket(ctx, name)
	if err != nil {
		return fail(err)
	}
	t.b, t.key = b, key
	t.ctx, t.stop = context.WithCancel(ctx)
	// The first piece gives the size and the entity tag.
	r, err := b.NewRangeReader(t.ctx, key, 0, pieceSize)
	if err != nil {
		// An empty object has no range to read: ask its attributes.
		a, aerr := b.Attributes(t.ctx, key)
		if aerr == nil && a.Size == 0 {
			t.attrs = a
			t.stop()
			close(t.done)
			return t, nil
		}
		return fail(wrap(name, err))
	}
	t.attrs = Attributes{Size: r.Size, ETag: r.ETag}
	if limit > 0 && t.attrs.Size > limit {
		r.Close()
		return fail(fmt.Errorf("%s: %w: %d bytes, more than %d", name, mlfeed.ErrTooLarge, t.attrs.Size, limit))
	}
	n := int((t.attrs.Size + pieceSize - 1) / pieceSize)
	t.pieces = make([]chan struct{}, n)
	for i := range t.pieces {
		t.pieces[i] = make(chan struct{})
	}
	t.taken = make([]bool, n)
	t.taken[0] = true
	t.next, t.left = 1, n
	go func() {
		err := copyRange(t.w, r, 0, min(pieceSize, t.attrs.Size), &t.fetched)
		r.Close()
		t.finish(0, err)
		t.work()
	}()
	for range min(maxFetches, n) - 1 {
		go t.work()
	}
	return t, nil
}

// slots bound the piece requests of all of a process's transfers together, as one large
// read of an Object is bounded: maxFetches at once, so that a sweep that fills many objects
// at once does not open a connection for each of their pieces. A transfer with a piece a
// reader waits for takes a free slot before those without.
var slots struct {
	mu     sync.Mutex
	cond   sync.Cond
	used   int
	urgent int // transfers' workers waiting for a slot for a piece a reader needs
}

func init() { slots.cond.L = &slots.mu }

// wake tells the workers waiting for a slot that something changed.
func wake() {
	slots.mu.Lock()
	slots.cond.Broadcast()
	slots.mu.Unlock()
}

// acquire takes a slot for one of t's pieces, and reports false (taking none) where t has
// ended or has no piece left to take.
func (t *Transfer) acquire() bool {
	slots.mu.Lock()
	defer slots.mu.Unlock()
	counted := false
	for {
		t.mu.Lock()
		over := t.err != nil || t.left == 0 || len(t.urgent) == 0 && t.next >= len(t.taken)
		urgent := len(t.urgent) > 0
		t.mu.Unlock()
		if urgent != counted {
			if urgent {
				slots.urgent++
			} else {
				slots.urgent--
			}
			counted = urgent
		}
		if over || slots.used < maxFetches && (urgent || slots.urgent == 0) {
			if counted {
				slots.urgent--
			}
			if over {
				return false
			}
			slots.used++
			return true
		}
		slots.cond.Wait()
	}
}

// release gives back a slot.
func release() {
	slots.mu.Lock()
	slots.used--
	slots.cond.Broadcast()
	slots.mu.Unlock()
}

// work fetches pieces until none is left or the transfer failed.
func (t *Transfer) work() {
	for t.acquire() {
		t.mu.Lock()
		i := -1
		for len(t.urgent) > 0 && i < 0 {
			k := t.urgent[len(t.urgent)-1]
			t.urgent = t.urgent[:len(t.urgent)-1]
			if !t.taken[k] {
				i = k
			}
		}
		for i < 0 && t.next < len(t.taken) {
			if !t.taken[t.next] {
				i = t.next
			}
			t.next++
		}
		if i < 0 || t.err != nil {
			t.mu.Unlock()
			release()
			return
		}
		t.taken[i] = true
		t.mu.Unlock()
		err := t.fetchPiece(i)
		release()
		t.finish(i, err)
	}
}

// fetchPiece fetches piece i into w.
func (t *Transfer) fetchPiece(i int) error {
	off := int64(i) * pieceSize
	length := min(pieceSize, t.attrs.Size-off)
	r, err := t.b.NewRangeReader(t.ctx, t.key, off, length)
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Size != t.attrs.Size || (r.ETag != t.attrs.ETag && r.ETag != "" && t.attrs.ETag != "") {
		return fmt.Errorf("%w: %d bytes with entity tag %s, then %d bytes with %s", ErrChanged, t.attrs.Size, t.attrs.ETag, r.Size, r.ETag)
	}
	return copyRange(t.w, r, off, length, &t.fetched)
}

// finish records the end of piece i.
func (t *Transfer) finish(i int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil || t.left == 0 {
		return // ended
	}
	if err == nil && t.ctx.Err() != nil {
		err = t.ctx.Err()
	}
	if err != nil {
		t.err = fmt.Errorf("%s: %w", t.name, err)
		t.stop()
		close(t.done)
		go wake() // its workers waiting for a slot end
		return
	}
	close(t.pieces[i])
	if t.left--; t.left == 0 {
		t.stop()
		close(t.done)
	}
}

// Attributes returns the object's size and entity tag, as the first request gave them.
func (t *Transfer) Attributes() Attributes { return t.attrs }

// Fetched returns the bytes fetched so far.
func (t *Transfer) Fetched() int64 { return t.fetched.Load() }

// Done is closed when the transfer has ended: every byte written, or failed (Wait's error).
func (t *Transfer) Done() <-chan struct{} { return t.done }

// Wait waits for the transfer to end and returns its error.
func (t *Transfer) Wait() error {
	<-t.done
	return t.err
}

// Cancel stops the transfer; Wait then returns an error unless it had ended.
func (t *Transfer) Cancel() {
	if t.stop != nil {
		t.finish(0, context.Canceled)
	}
}

// Need waits until the bytes [off, off+n) are written, fetching their pieces before the
// others; it returns the transfer's error where it fails first, or ctx's.
func (t *Transfer) Need(ctx context.Context, off, n int64) error { return t.await(ctx, off, n, true) }

// Follow waits until the bytes [off, off+n) are written, leaving the order of the pieces as
// it is (for a reader that follows the transfer, as a checksum does).
func (t *Transfer) Follow(ctx context.Context, off, n int64) error {
	return t.await(ctx, off, n, false)
}

func (t *Transfer) await(ctx context.Context, off, n int64, urgent bool) error {
	if t.pieces == nil { // ended before it started, or an empty object
		<-t.done
		return t.err
	}
	if n <= 0 || off >= t.attrs.Size {
		return nil
	}
	first, last := int(off/pieceSize), int((min(off+n, t.attrs.Size)-1)/pieceSize)
	if urgent {
		t.mu.Lock()
		pushed := false
		for i := last; i >= first; i-- { // the first piece ends up on top
			if !t.taken[i] {
				t.urgent = append(t.urgent, i)
				pushed = true
			}
		}
		t.mu.Unlock()
		if pushed {
			wake()
		}
	}
	for i := first; i <= last; i++ {
		select {
		case <-t.pieces[i]:
		case <-t.done:
			select {
			case <-t.pieces[i]:
			default:
				return t.err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
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
