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
	"sort"
	"strings"
	"sync"
	"sync/atomic"

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

func bucket(ctx context.Context, name string) (*blob.Bucket, string, error) {
	bu, key, err := split(name)
	if err != nil {
		return nil, "", err
	}
	b, err := blob.OpenBucket(ctx, bu)
	if err != nil {
		return nil, "", wrap(name, err)
	}
	return b, key, nil
}

// BlockSize is the size of the blocks small reads are served from.
const BlockSize = 256 << 10

const cachedBlocks = 8

// Object is an object opened for reading: an io.ReaderAt over its bytes. It is safe for
// concurrent use.
type Object struct {
	name    string
	ctx     context.Context
	b       *blob.Bucket
	key     string
	size    int64
	fetched atomic.Int64

	mu     sync.Mutex
	blocks map[int64][]byte // block index -> bytes
	order  []int64          // blocks, least recently used first
}

// Open opens the object name for reading; ctx bounds every read.
func Open(ctx context.Context, name string) (*Object, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		b.Close()
		return nil, fmt.Errorf("%s: names a prefix, not an object", name)
	}
	o := &Object{name: name, ctx: ctx, b: b, key: key, blocks: map[int64][]byte{}}
	// One request learns the size and fetches the first block, which every format reads
	// first (its magic, its header); an empty object cannot be read by range: ask its size.
	r, err := b.NewRangeReader(ctx, key, 0, BlockSize, nil)
	if err == nil {
		o.size = r.Size()
		first := make([]byte, min(BlockSize, o.size))
		var n int
		n, err = io.ReadFull(r, first)
		r.Close()
		o.fetched.Add(int64(n))
		if err == nil {
			o.blocks[0], o.order = first, []int64{0}
			return o, nil
		}
	}
	a, aerr := b.Attributes(ctx, key)
	if aerr != nil {
		b.Close()
		return nil, wrap(name, aerr)
	}
	o.size = a.Size
	return o, nil
}

// Name returns the object's URL.
func (o *Object) Name() string { return o.name }

// Size returns the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// Fetched returns the number of bytes fetched from the server so far.
func (o *Object) Fetched() int64 { return o.fetched.Load() }

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
	if len(p) < 2*pieceSize {
		return o.fetchOne(p, off)
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
			_, errs[i] = o.fetchOne(p[lo:min(lo+pieceSize, len(p))], off+int64(lo))
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
func (o *Object) fetchOne(p []byte, off int64) (int, error) {
	r, err := o.b.NewRangeReader(o.ctx, o.key, off, int64(len(p)), nil)
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

// cachedRead serves a small read from the blocks that hold it, fetching those missing.
func (o *Object) cachedRead(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		bi := (off + int64(n)) / BlockSize
		blk, err := o.block(bi)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], blk[off+int64(n)-bi*BlockSize:])
	}
	return n, nil
}

func (o *Object) block(bi int64) ([]byte, error) {
	o.mu.Lock()
	if b, ok := o.blocks[bi]; ok {
		o.touch(bi)
		o.mu.Unlock()
		return b, nil
	}
	o.mu.Unlock()
	size := min(BlockSize, o.size-bi*BlockSize)
	b := make([]byte, size)
	if _, err := o.fetch(b, bi*BlockSize); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.blocks[bi]; !ok {
		o.blocks[bi] = b
		o.order = append(o.order, bi)
		if len(o.order) > cachedBlocks {
			delete(o.blocks, o.order[0])
			o.order = o.order[1:]
		}
	}
	return b, nil
}

func (o *Object) touch(bi int64) {
	for i, v := range o.order {
		if v == bi {
			copy(o.order[i:], o.order[i+1:])
			o.order[len(o.order)-1] = bi
			return
		}
	}
}

// Close releases the object's bucket.
func (o *Object) Close() error { return o.b.Close() }

// List returns the URLs of the objects under the prefix name (which ends in "/"), in name
// order, with the query of name kept on each.
func List(ctx context.Context, name string) ([]string, error) {
	b, prefix, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	defer b.Close()
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

// Exists reports whether the object name exists.
func Exists(ctx context.Context, name string) (bool, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return false, err
	}
	defer b.Close()
	ok, err := b.Exists(ctx, key)
	if err != nil {
		return false, wrap(name, err)
	}
	return ok, nil
}

// Writer uploads an object. Nothing is visible under its name until Commit returns nil;
// Abort (or a cancelled context) discards the upload.
type Writer struct {
	name   string
	b      *blob.Bucket
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
		b.Close()
		return nil, fmt.Errorf("%s: names a prefix, not an object", name)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := b.NewWriter(ctx, key, nil)
	if err != nil {
		cancel()
		b.Close()
		return nil, wrap(name, err)
	}
	return &Writer{name: name, b: b, w: w, cancel: cancel}, nil
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
	w.b.Close()
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
	w.b.Close()
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
	defer b.Close()
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
