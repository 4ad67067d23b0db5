package storage

import (
	"context"
	"errors"
	"io"
	"net/url"
	"sync"
	"testing"
	"time"
)

// gatedBucket serves one object of gatedSize bytes (byte i is gatedByte(i)), registered as the
// scheme "gated": every range after the first is announced on asked and held until its gate
// opens (or its context ends), so that a test sees the order a transfer asks for pieces in.
type gatedBucket struct {
	asked chan int64
	mu    sync.Mutex
	gates map[int64]chan struct{}
	open  bool
}

const gatedSize = 12*pieceSize - 1000

func gatedByte(i int64) byte { return byte(i * 7 % 251) }

var gated = &gatedBucket{}

func init() {
	Register("gated", func(ctx context.Context, host string, query url.Values) (Bucket, error) { return gated, nil })
}

func (b *gatedBucket) gate(off int64) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.gates[off]
	if g == nil {
		g = make(chan struct{})
		if b.open {
			close(g)
		}
		b.gates[off] = g
	}
	return g
}

// release opens the gate of the range at off; all opens every gate, now and later.
func (b *gatedBucket) release(off int64, all bool) {
	if all {
		b.mu.Lock()
		b.open = true
		for _, g := range b.gates {
			select {
			case <-g:
			default:
				close(g)
			}
		}
		b.mu.Unlock()
		return
	}
	close(b.gate(off))
}

func (b *gatedBucket) Attributes(ctx context.Context, key string) (Attributes, error) {
	return Attributes{Size: gatedSize, ETag: `"1"`}, nil
}

func (b *gatedBucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*Range, error) {
	if off > 0 {
		b.mu.Lock()
		asked := b.asked
		b.mu.Unlock()
		asked <- off
		select {
		case <-b.gate(off):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	end := min(off+length, gatedSize)
	return &Range{ReadCloser: io.NopCloser(&gatedReader{off, end}), Offset: off, Size: gatedSize, ETag: `"1"`}, nil
}

type gatedReader struct{ off, end int64 }

func (r *gatedReader) Read(p []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.end-r.off))
	for i := range n {
		p[i] = gatedByte(r.off + int64(i))
	}
	r.off += int64(n)
	return n, nil
}

func (b *gatedBucket) List(ctx context.Context, prefix string) ([]string, error) {
	return nil, errors.ErrUnsupported
}

func (b *gatedBucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	return nil, errors.ErrUnsupported
}

func (b *gatedBucket) Delete(ctx context.Context, key string) error { return errors.ErrUnsupported }

// memWriterAt is a WriterAt over a byte slice.
type memWriterAt []byte

func (w memWriterAt) WriteAt(p []byte, off int64) (int, error) { return copy(w[off:], p), nil }

func resetGated() {
	gated.mu.Lock()
	defer gated.mu.Unlock()
	gated.asked = make(chan int64, 100)
	gated.gates = map[int64]chan struct{}{}
	gated.open = false
}

// A transfer fetches its pieces in order, several at once, except that the pieces a reader
// needs are fetched first: with every request in flight held, the reader's piece is the next
// one asked for when one of them ends, and its bytes are served while the rest are held.
func TestTransferNeedComesFirst(t *testing.T) {
	resetGated()
	asked := gated.asked
	w := make(memWriterAt, gatedSize)
	tr, err := StartDownload(context.Background(), "gated://b/obj", w, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Cancel()
	if a := tr.Attributes(); a.Size != gatedSize || a.ETag != `"1"` {
		t.Fatalf("attributes %+v", a)
	}
	// Piece 0 is served at once; the maxFetches workers then hold pieces 1 to 8. The workers
	// claim pieces in order, but which of them asks first is up to the scheduler.
	held := map[int64]bool{}
	for range maxFetches {
		select {
		case off := <-asked:
			if off%pieceSize != 0 || off < pieceSize || off > maxFetches*pieceSize || held[off/pieceSize] {
				t.Fatalf("asked for byte offset %d (piece %d) with pieces %v held, want pieces 1 to %d", off, off/pieceSize, held, maxFetches)
			}
			held[off/pieceSize] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("only pieces %v were asked for, want 1 to %d", held, maxFetches)
		}
	}
	// The first piece's bytes are there while the others are held.
	if err := tr.Need(context.Background(), 10, 100); err != nil {
		t.Fatal(err)
	}
	for i := int64(10); i < 110; i++ {
		if w[i] != gatedByte(i) {
			t.Fatalf("byte %d is %d, want %d", i, w[i], gatedByte(i))
		}
	}
	need := make(chan error, 1)
	go func() { need <- tr.Need(context.Background(), 11*pieceSize+5, 10) }()
	for {
		tr.mu.Lock()
		n := len(tr.urgent)
		tr.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	gated.release(1*pieceSize, false)
	if off := <-asked; off != 11*pieceSize {
		t.Fatalf("after the need for piece 11, asked for byte offset %d (piece %d)", off, off/pieceSize)
	}
	select {
	case err := <-need:
		t.Fatalf("Need returned (%v) before its piece came", err)
	default:
	}
	gated.release(11*pieceSize, false)
	if err := <-need; err != nil {
		t.Fatal(err)
	}
	if w[11*pieceSize+5] != gatedByte(11*pieceSize+5) {
		t.Fatal("Need returned before its bytes were written")
	}
	gated.release(0, true)
	if err := tr.Wait(); err != nil {
		t.Fatal(err)
	}
	for i := range int64(gatedSize) {
		if w[i] != gatedByte(i) {
			t.Fatalf("byte %d is %d, want %d", i, w[i], gatedByte(i))
		}
	}
	if tr.Fetched() != gatedSize {
		t.Errorf("fetched %d bytes, want %d", tr.Fetched(), gatedSize)
	}
}

// A transfer cancelled ends with an error, which its waiters get.
func TestTransferCancel(t *testing.T) {
	resetGated()
	tr, err := StartDownload(context.Background(), "gated://b/obj", make(memWriterAt, gatedSize), 0)
	if err != nil {
		t.Fatal(err)
	}
	need := make(chan error, 1)
	go func() { need <- tr.Need(context.Background(), 5*pieceSize, 1) }()
	tr.Cancel()
	if err := tr.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after Cancel: %v", err)
	}
	if err := <-need; !errors.Is(err, context.Canceled) {
		t.Errorf("Need after Cancel: %v", err)
	}
	// A reader's own context ends its wait, not the transfer.
	resetGated()
	tr, err = StartDownload(context.Background(), "gated://b/obj", make(memWriterAt, gatedSize), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := tr.Follow(ctx, 3*pieceSize, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Follow with its context ended: %v", err)
	}
	gated.release(0, true)
	if err := tr.Wait(); err != nil {
		t.Errorf("the transfer after a reader gave up: %v", err)
	}
}
