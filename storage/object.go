package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
)

// BlockSize is the size of the blocks small reads are served from.
const BlockSize = 256 << 10

const cachedBlocks = 8

// Object is an object opened for reading: an io.ReaderAt over its bytes. It is safe for
// concurrent use.
type Object struct {
	name    string
	b       Bucket
	key     string
	size    int64
	etag    string
	fetched atomic.Int64

	mu     sync.Mutex
	blocks []extent // cached bytes, least recently used first
	// Requests are made under fetchCtx, a child of the context Open was given. Reads made
	// under Use count in users, and in ended once their context is done; when every one of
	// them has ended, fetchCtx is cancelled (no one waits for its bytes) and replaced.
	parent       context.Context
	fetchCtx     context.Context
	cancelFetch  context.CancelFunc
	users, ended int
}

// extent is cached bytes of the object, b, from byte offset off.
type extent struct {
	off int64
	b   []byte
}

// Open opens the object name for reading; ctx bounds every read.
func Open(ctx context.Context, name string) (*Object, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%s: names a prefix, not an object", name)
	}
	o := &Object{name: name, b: b, key: key, parent: ctx}
	o.fetchCtx, o.cancelFetch = context.WithCancel(ctx)
	// One request learns the size and fetches the first block, which every format reads
	// first (its magic, its header). A second request, at the same time, fetches the last
	// block with a suffix range (which needs no size) where the service has them: where
	// formats keep their trailer, tables and index. An empty object cannot be read by range:
	// ask its size.
	var tail extent
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tail = o.fetchTail(ctx)
	}()
	r, err := b.NewRangeReader(ctx, key, 0, BlockSize)
	if err == nil {
		o.size, o.etag = r.Size, r.ETag
		first := make([]byte, min(BlockSize, o.size))
		var n int
		n, err = io.ReadFull(r, first)
		r.Close()
		o.fetched.Add(int64(n))
		if err == nil {
			o.blocks = append(o.blocks, extent{0, first})
		}
	}
	wg.Wait()
	if err == nil {
		if tail.b != nil && tail.off > 0 && tail.off+int64(len(tail.b)) == o.size {
			o.blocks = append(o.blocks, tail)
		}
		return o, nil
	}
	a, aerr := b.Attributes(ctx, key)
	if aerr != nil {
		o.Close()
		return nil, wrap(name, aerr)
	}
	o.size, o.etag = a.Size, a.ETag
	o.blocks = nil
	return o, nil
}

// fetchTail fetches the last BlockSize bytes with a suffix range. It returns no bytes where
// that fails or the service has no suffix ranges.
func (o *Object) fetchTail(ctx context.Context) extent {
	r, err := o.b.NewRangeReader(ctx, o.key, -BlockSize, -1)
	if err != nil {
		return extent{}
	}
	defer r.Close()
	if r.Offset != max(r.Size-BlockSize, 0) {
		return extent{}
	}
	b := make([]byte, r.Size-r.Offset)
	n, err := io.ReadFull(r, b)
	o.fetched.Add(int64(n))
	if err != nil {
		return extent{}
	}
	return extent{r.Offset, b}
}

// Name returns the object's URL.
func (o *Object) Name() string { return o.name }

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// ETag returns the object's entity tag as the service gave it when the object was opened (""
// where it gives none): a version of its bytes, for caches.
func (o *Object) ETag() string { return o.etag }

// Fetched returns the number of bytes fetched from the server so far.
func (o *Object) Fetched() int64 { return o.fetched.Load() }

// Use marks the start of reads made on behalf of a caller whose context is ctx, and returns
// the function that marks their end. While the context of every caller in Use is done, the
// requests in flight are cancelled and new ones fail, since no one waits for their bytes: a
// reader that is closed while it reads ahead does not wait for chunks it no longer needs.
// Reads made outside Use while others are in Use must not be counted on to finish; a caller
// that has no context passes context.Background().
func (o *Object) Use(ctx context.Context) (end func()) {
	var counted, finished bool // guarded by o.mu
	o.mu.Lock()
	o.users++
	if o.fetchCtx.Err() != nil && ctx.Err() == nil {
		// Callers before gave up; this one did not.
		o.fetchCtx, o.cancelFetch = context.WithCancel(o.parent)
	}
	o.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if !finished {
			counted = true
			o.ended++
			o.cancelIfAbandoned()
		}
	})
	return func() {
		stop()
		o.mu.Lock()
		defer o.mu.Unlock()
		finished = true
		if counted {
			o.ended--
		}
		o.users--
		o.cancelIfAbandoned()
	}
}

// cancelIfAbandoned cancels the requests when every caller in Use has its context done. The
// caller holds o.mu.
func (o *Object) cancelIfAbandoned() {
	if o.users > 0 && o.ended == o.users {
		o.cancelFetch()
	}
}

// ReadAt reads len(p) bytes at off, fetching only the range asked for (small reads: the
// blocks that hold it).
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", o.name, off)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := len(p)
	if rest := o.size - off; int64(want) > rest {
		p = p[:rest]
	}
	var n int
	var err error
	if len(p) >= BlockSize {
		n, err = o.fetch(p, off)
	} else {
		n, err = o.cachedRead(p, off)
	}
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// Large reads are split into pieces of pieceSize fetched by up to maxFetches concurrent
// requests: over a network one request rarely fills the link. These are waits on the network,
// not work for the CPU, so they are not the scheduler's threads.
const (
	pieceSize  = 4 << 20
	maxFetches = 8
)

// fetch reads p at off: with one ranged request, or several at once for a large read.
func (o *Object) fetch(p []byte, off int64) (int, error) {
	o.mu.Lock()
	ctx := o.fetchCtx
	o.mu.Unlock()
	if len(p) < 2*pieceSize {
		return o.fetchOne(ctx, p, off)
	}
	n := (len(p) + pieceSize - 1) / pieceSize
	errs := make([]error, n)
	sem := make(chan struct{}, maxFetches)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lo := i * pieceSize
			_, errs[i] = o.fetchOne(ctx, p[lo:min(lo+pieceSize, len(p))], off+int64(lo))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i * pieceSize, err
		}
	}
	return len(p), nil
}

// fetchOne reads p at off with one ranged request.
func (o *Object) fetchOne(ctx context.Context, p []byte, off int64) (int, error) {
	r, err := o.b.NewRangeReader(ctx, o.key, off, int64(len(p)))
	if err != nil {
		return 0, wrap(o.name, err)
	}
	defer r.Close()
	n, err := io.ReadFull(r, p)
	o.fetched.Add(int64(n))
	if err != nil {
		return n, fmt.Errorf("%s: byte offset %d: %w", o.name, off+int64(n), errors.Join(mlfeed.ErrTruncated, err))
	}
	return n, nil
}

// cachedRead serves a small read from the cached bytes that hold it, fetching the blocks
// missing.
func (o *Object) cachedRead(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		b, err := o.cached(off + int64(n))
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b)
	}
	return n, nil
}

// cached returns the cached bytes from offset pos on (at least one), fetching the block that
// holds pos if no cached bytes do.
func (o *Object) cached(pos int64) ([]byte, error) {
	o.mu.Lock()
	for i, e := range o.blocks {
		if e.off <= pos && pos < e.off+int64(len(e.b)) {
			// Most recently used last.
			copy(o.blocks[i:], o.blocks[i+1:])
			o.blocks[len(o.blocks)-1] = e
			o.mu.Unlock()
			return e.b[pos-e.off:], nil
		}
	}
	o.mu.Unlock()
	bi := pos / BlockSize
	b := make([]byte, min(BlockSize, o.size-bi*BlockSize))
	if _, err := o.fetch(b, bi*BlockSize); err != nil {
		return nil, err
	}
	o.mu.Lock()
	if !slices.ContainsFunc(o.blocks, func(e extent) bool { return e.off == bi*BlockSize }) {
		if len(o.blocks) == cachedBlocks {
			o.blocks = append(o.blocks[:0], o.blocks[1:]...)
		}
		o.blocks = append(o.blocks, extent{bi * BlockSize, b})
	}
	o.mu.Unlock()
	return b[pos-bi*BlockSize:], nil
}

// Close cancels the object's requests in flight and drops its cached bytes. (Its bucket
// stays open for the process's other objects.)
func (o *Object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancelFetch()
	o.blocks = nil
	return nil
}
