// Package remote reads and writes objects in object storage through gocloud.dev/blob:
// s3://bucket/key (AWS S3 and S3-compatible servers), gs://bucket/key (Google Cloud Storage)
// and azblob://container/key (Azure Blob Storage), with each service's standard credentials.
// For S3, AWS_ENDPOINT_URL names an S3-compatible server (addressed by path, as such servers
// expect); query parameters after the key (?region=...) go to the driver as gocloud.dev
// documents them.
//
// An Object is an io.ReaderAt that fetches the byte ranges asked for, so random-access
// formats read their header, tables and the chunks they need, not the whole object. Small
// reads are served from a few cached blocks. A Writer uploads an object that appears only when
// Commit succeeds.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcerrors"

	"github.com/mlfeed/mlfeed"
)

var schemes = []string{"s3://", "gs://", "azblob://"}

// IsURL reports whether name is an object-storage URL this package opens.
func IsURL(name string) bool {
	for _, s := range schemes {
		if strings.HasPrefix(name, s) {
			return true
		}
	}
	return false
}

// split separates a URL into the bucket's URL (scheme, bucket, query) and the key.
func split(name string) (bucketURL, key string, err error) {
	u, err := url.Parse(name)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("%s: no bucket in the URL", name)
	}
	q := u.Query()
	if u.Scheme == "s3" && q.Get("endpoint") == "" {
		if ep := os.Getenv("AWS_ENDPOINT_URL_S3"); ep != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
			if ep == "" {
				ep = os.Getenv("AWS_ENDPOINT_URL")
			}
			q.Set("endpoint", ep)
			if q.Get("use_path_style") == "" && q.Get("s3ForcePathStyle") == "" {
				q.Set("use_path_style", "true")
			}
			if strings.HasPrefix(ep, "http://") && q.Get("disable_https") == "" {
				q.Set("disable_https", "true")
			}
		}
	}
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
	return b.String(), strings.TrimPrefix(u.Path, "/"), nil
}

// wrap turns a driver error into one naming the object, with mlfeed's sentinels where they
// fit (a missing object reads as os.ErrNotExist).
func wrap(name string, err error) error {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return fmt.Errorf("%s: %w", name, os.ErrNotExist)
	case gcerrors.PermissionDenied:
		return fmt.Errorf("%s: %w: %v", name, os.ErrPermission, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// buckets holds the buckets opened so far, by URL, for the life of the process: opening one
// loads the service's configuration (credentials, a CA bundle to parse) and makes an HTTP
// client, which the objects of a data set of shards then share, with its connections.
var buckets struct {
	sync.Mutex
	m map[string]*blob.Bucket
}

// bucket returns the bucket of the URL name, and the key.
func bucket(ctx context.Context, name string) (*blob.Bucket, string, error) {
	bu, key, err := split(name)
	if err != nil {
		return nil, "", err
	}
	buckets.Lock()
	defer buckets.Unlock()
	if b := buckets.m[bu]; b != nil {
		return b, key, nil
	}
	// The bucket outlives this caller: its driver must not keep a context that ends with it
	// (a GCS token source does).
	b, err := blob.OpenBucket(context.WithoutCancel(ctx), bu)
	if err != nil {
		return nil, "", wrap(name, err)
	}
	if buckets.m == nil {
		buckets.m = map[string]*blob.Bucket{}
	}
	buckets.m[bu] = b
	return b, key, nil
}

// BlockSize is the size of the blocks small reads are served from.
const BlockSize = 256 << 10

const cachedBlocks = 8

// Object is an object opened for reading: an io.ReaderAt over its bytes. It is safe for
// concurrent use.
type Object struct {
	name    string
	b       *blob.Bucket
	key     string
	size    int64
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
	// first (its magic, its header). On S3 a second request, at the same time, fetches the
	// last block (a suffix range, which needs no size): where formats keep their trailer,
	// tables and index. An empty object cannot be read by range: ask its size.
	var tail extent
	var wg sync.WaitGroup
	if u, _ := url.Parse(name); u != nil && u.Scheme == "s3" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tail = o.fetchTail(ctx)
		}()
	}
	r, err := b.NewRangeReader(ctx, key, 0, BlockSize, nil)
	if err == nil {
		o.size = r.Size()
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
	o.size = a.Size
	o.blocks = nil
	return o, nil
}

// fetchTail fetches the last BlockSize bytes of an S3 object with a suffix range. It returns
// no bytes where that fails, or where the server did not answer with the range asked for.
func (o *Object) fetchTail(ctx context.Context) extent {
	r, err := o.b.NewRangeReader(ctx, o.key, 0, BlockSize, &blob.ReaderOptions{
		BeforeRead: func(as func(any) bool) error {
			var in *s3.GetObjectInput
			if as(&in) {
				in.Range = aws.String(fmt.Sprintf("bytes=-%d", BlockSize))
			}
			return nil
		},
	})
	if err != nil {
		return extent{}
	}
	defer r.Close()
	var out s3.GetObjectOutput
	size := r.Size()
	if !r.As(&out) || out.ContentLength == nil || *out.ContentLength != min(BlockSize, size) {
		return extent{}
	}
	b := make([]byte, *out.ContentLength)
	n, err := io.ReadFull(r, b)
	o.fetched.Add(int64(n))
	if err != nil {
		return extent{}
	}
	return extent{size - int64(n), b}
}

// Name returns the object's URL.
func (o *Object) Name() string { return o.name }

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

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
	r, err := o.b.NewRangeReader(ctx, o.key, off, int64(len(p)), nil)
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

// List returns the URLs of the objects under the prefix name (which ends in "/"), in name
// order, with the query of name kept on each.
func List(ctx context.Context, name string) ([]string, error) {
	b, prefix, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	base, query, _ := strings.Cut(name, "?")
	base = strings.TrimSuffix(base, prefix)
	var out []string
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, wrap(name, err)
		}
		if obj.IsDir {
			continue
		}
		u := base + obj.Key
		if query != "" {
			u += "?" + query
		}
		out = append(out, u)
	}
	sort.Strings(out)
	return out, nil
}

// Writer uploads an object. Nothing is visible under its name until Commit returns nil;
// Abort (or a cancelled context) discards the upload.
type Writer struct {
	name   string
	w      *blob.Writer
	cancel context.CancelFunc
	done   bool
}

// Create starts the upload of the object name.
func Create(ctx context.Context, name string) (*Writer, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%s: names a prefix, not an object", name)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := b.NewWriter(ctx, key, nil)
	if err != nil {
		cancel()
		return nil, wrap(name, err)
	}
	return &Writer{name: name, w: w, cancel: cancel}, nil
}

// Write uploads p.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = wrap(w.name, err)
	}
	return n, err
}

// Commit completes the upload: the object appears with everything written.
func (w *Writer) Commit() error {
	if w.done {
		return os.ErrClosed
	}
	w.done = true
	err := w.w.Close()
	w.cancel()
	if err != nil {
		return wrap(w.name, err)
	}
	return nil
}

// Abort discards the upload. It does nothing after Commit, so it can be deferred.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.cancel() // a writer closed after its context is cancelled discards the upload
	w.w.Close()
}

// ReadFile returns the bytes of the object name, at most max of them (a larger object is an
// error wrapping mlfeed.ErrTooLarge).
func ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	o, err := Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	if o.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes", name, mlfeed.ErrTooLarge, o.Size())
	}
	b := make([]byte, o.Size())
	if _, err := o.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// WriteFile uploads data as the object name, atomically.
func WriteFile(ctx context.Context, name string, data []byte) error {
	w, err := Create(ctx, name)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Commit()
}

// Upload copies the local file path to the object name, atomically.
func Upload(ctx context.Context, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := Create(ctx, name)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := io.CopyBuffer(w, f, make([]byte, 4<<20)); err != nil {
		return err
	}
	return w.Commit()
}

// Delete removes the object name.
func Delete(ctx context.Context, name string) error {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return err
	}
	if err := b.Delete(ctx, key); err != nil {
		return wrap(name, err)
	}
	return nil
}

// Join returns the URL of the object called base under the prefix URL dir (with dir's query).
func Join(dir, base string) string {
	d, q, _ := strings.Cut(dir, "?")
	if !strings.HasSuffix(d, "/") {
		d += "/"
	}
	if q != "" {
		return d + base + "?" + q
	}
	return d + base
}
