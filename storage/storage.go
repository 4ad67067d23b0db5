// Package storage reads and writes objects in object storage through drivers that register
// themselves by URL scheme when imported, as image/png registers a codec with package image:
//
//	import _ "github.com/mlfeed/mlfeed/storage/s3"  // s3://bucket/key
//	import _ "github.com/mlfeed/mlfeed/storage/gcs" // gs://bucket/key
//	import _ "github.com/mlfeed/mlfeed/storage/azblob" // azblob://container/key
//	import _ "github.com/mlfeed/mlfeed/storage/all" // all three
//
// The package itself imports only the standard library and mlfeed's data model, so a program
// that reads local files pays for no network code. Each driver uses its service's standard
// credential chain; see the drivers' package documentation.
//
// An Object is an io.ReaderAt that fetches the byte ranges asked for, so random-access formats
// read their header, tables and the chunks they need, not the whole object. Small reads are
// served from a few cached blocks. A Writer uploads an object that appears only when Commit
// succeeds.
package storage

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

	"github.com/mlfeed/mlfeed"
)

// Bucket is one bucket (or container) of a service, as a driver opens it. Its methods are
// safe for concurrent use. Errors for a missing object wrap os.ErrNotExist, and for a refused
// one os.ErrPermission.
type Bucket interface {
	// Attributes returns the size and entity tag of the object key.
	Attributes(ctx context.Context, key string) (Attributes, error)
	// NewRangeReader reads bytes of the object key: length bytes from off (all that remain
	// when length < 0), or with off < 0 the last -off bytes (a suffix range; a driver whose
	// service has none returns an error wrapping errors.ErrUnsupported). A range past the end
	// is cut at the end; one that starts at or past the end of an object is an error.
	NewRangeReader(ctx context.Context, key string, off, length int64) (*Range, error)
	// List returns the keys of the objects directly under prefix (which is empty or ends in
	// "/"), not those in deeper "directories", in any order.
	List(ctx context.Context, prefix string) ([]string, error)
	// NewWriter starts the upload of the object key. The object appears, whole, only when
	// Close returns nil; cancelling ctx before that discards the upload.
	NewWriter(ctx context.Context, key string) (io.WriteCloser, error)
	// Delete removes the object key.
	Delete(ctx context.Context, key string) error
}

// Attributes describe an object.
type Attributes struct {
	Size int64  // bytes
	ETag string // the service's entity tag, as it gives it ("" if none)
}

// Range is the reader of a ranged read: the bytes from Offset on, and the size of the whole
// object.
type Range struct {
	io.ReadCloser
	Offset int64  // where the bytes read start in the object
	Size   int64  // the whole object's size
	ETag   string // the object's entity tag, where the service gives it with the bytes
}

// A Driver opens the bucket named host of a URL with its scheme, with the URL's query
// parameters (driver-specific settings such as region).
type Driver func(ctx context.Context, host string, query url.Values) (Bucket, error)

// driver is a registered driver and the environment variables its buckets depend on.
type driver struct {
	open Driver
	env  []string
}

var drivers struct {
	sync.RWMutex
	m map[string]driver
}

// Register makes a driver available for URLs of scheme ("s3", "gs", ...). env names the
// environment variables that choose where its buckets are and how they are reached (an
// endpoint, an emulator, an account): a bucket is opened once per process for each URL and
// value of these. It panics if the scheme is taken.
func Register(scheme string, d Driver, env ...string) {
	drivers.Lock()
	defer drivers.Unlock()
	if drivers.m == nil {
		drivers.m = map[string]driver{}
	}
	if _, ok := drivers.m[scheme]; ok {
		panic("storage: scheme " + scheme + " registered twice")
	}
	drivers.m[scheme] = driver{d, env}
}

// Schemes returns the schemes of the registered drivers, sorted.
func Schemes() []string {
	drivers.RLock()
	defer drivers.RUnlock()
	var s []string
	for k := range drivers.m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// knownSchemes are the schemes of mlfeed's drivers, recognised as URLs even when their driver
// is not linked in, so that the error can say which package to import.
var knownSchemes = map[string]string{
	"s3":     "github.com/mlfeed/mlfeed/storage/s3",
	"gs":     "github.com/mlfeed/mlfeed/storage/gcs",
	"azblob": "github.com/mlfeed/mlfeed/storage/azblob",
}

// ErrNoDriver is wrapped by the error for a URL whose scheme has no driver in the program
// (a *NoDriverError).
var ErrNoDriver = errors.New("no storage driver for the URL's scheme")

// NoDriverError is the error for a URL whose scheme has no driver in the program. It wraps
// ErrNoDriver.
type NoDriverError struct {
	Name    string // the URL
	Scheme  string // its scheme, without "://"
	Package string // the import path of mlfeed's driver for the scheme; "" if there is none
}

// Error names the URL and the scheme and, where mlfeed has a driver for the scheme, the
// package a Go program imports to register it.
func (e *NoDriverError) Error() string {
	if e.Package != "" {
		return fmt.Sprintf("%s: %v %s:// in this program (import _ %q)", e.Name, ErrNoDriver, e.Scheme, e.Package)
	}
	return fmt.Sprintf("%s: %v %s://", e.Name, ErrNoDriver, e.Scheme)
}

// Unwrap returns ErrNoDriver.
func (e *NoDriverError) Unwrap() error { return ErrNoDriver }

// IsURL reports whether name is an object-storage URL: its scheme is one of a registered
// driver's or of mlfeed's drivers (s3://, gs://, azblob://).
func IsURL(name string) bool {
	scheme, _, ok := strings.Cut(name, "://")
	if !ok {
		return false
	}
	if _, ok := knownSchemes[scheme]; ok {
		return true
	}
	drivers.RLock()
	defer drivers.RUnlock()
	_, ok = drivers.m[scheme]
	return ok
}

// buckets holds the buckets opened so far, by scheme, host and query, for the life of the
// process: opening one loads the service's configuration (credentials, a CA bundle to parse)
// and makes an HTTP client, which the objects of a data set of shards then share.
var buckets struct {
	sync.Mutex
	m map[string]Bucket
}

// split separates a URL into its scheme, host (bucket), key and query.
func split(name string) (scheme, host, key string, query url.Values, err error) {
	u, err := url.Parse(name)
	if err != nil {
		return "", "", "", nil, fmt.Errorf("%s: %w", name, err)
	}
	if u.Host == "" {
		return "", "", "", nil, fmt.Errorf("%s: no bucket in the URL", name)
	}
	return u.Scheme, u.Host, strings.TrimPrefix(u.Path, "/"), u.Query(), nil
}

// bucket returns the bucket of the URL name, and the key.
func bucket(ctx context.Context, name string) (Bucket, string, error) {
	scheme, host, key, query, err := split(name)
	if err != nil {
		return nil, "", err
	}
	drivers.RLock()
	d, ok := drivers.m[scheme]
	drivers.RUnlock()
	if !ok {
		return nil, "", &NoDriverError{Name: name, Scheme: scheme, Package: knownSchemes[scheme]}
	}
	id := scheme + "://" + host + "?" + query.Encode()
	for _, e := range d.env {
		id += "\x00" + e + "=" + os.Getenv(e)
	}
	buckets.Lock()
	defer buckets.Unlock()
	if b := buckets.m[id]; b != nil {
		return b, key, nil
	}
	// The bucket outlives this caller: its driver must not keep a context that ends with it
	// (a token source does).
	b, err := d.open(context.WithoutCancel(ctx), host, query)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if buckets.m == nil {
		buckets.m = map[string]Bucket{}
	}
	buckets.m[id] = b
	return b, key, nil
}

// wrap names the object in a driver's error.
func wrap(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }

// List returns the URLs of the objects under the prefix name (which ends in "/"), in name
// order, with the query of name kept on each.
func List(ctx context.Context, name string) ([]string, error) {
	b, prefix, err := bucket(ctx, name)
	if err != nil {
		return nil, err
	}
	keys, err := b.List(ctx, prefix)
	if err != nil {
		return nil, wrap(name, err)
	}
	base, query, _ := strings.Cut(name, "?")
	base = strings.TrimSuffix(base, prefix)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		u := base + k
		if query != "" {
			u += "?" + query
		}
		out = append(out, u)
	}
	sort.Strings(out)
	return out, nil
}

// Stat returns the attributes of the object name.
func Stat(ctx context.Context, name string) (Attributes, error) {
	b, key, err := bucket(ctx, name)
	if err != nil {
		return Attributes{}, err
	}
	a, err := b.Attributes(ctx, key)
	if err != nil {
		return a, wrap(name, err)
	}
	return a, nil
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

// Writer uploads an object. Nothing is visible under its name until Commit returns nil;
// Abort (or a cancelled context) discards the upload.
type Writer struct {
	name   string
	w      io.WriteCloser
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
	w, err := b.NewWriter(ctx, key)
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

// NewPipeWriter returns the writer of an upload that a service's client reads from an
// io.Reader: upload runs on its own goroutine, reading what is written until Close. The
// object must appear only when upload returns nil; cancelling ctx (before Close) makes the
// body fail, so the upload is discarded. Drivers' NewWriter use it.
func NewPipeWriter(ctx context.Context, upload func(body io.Reader) error) io.WriteCloser {
	pr, pw := io.Pipe()
	w := &pipeWriter{ctx: ctx, pw: pw, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		err := upload(pr)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		w.err = err
		pr.CloseWithError(err)
	}()
	return w
}

type pipeWriter struct {
	ctx  context.Context
	pw   *io.PipeWriter
	done chan struct{}
	err  error
}

func (w *pipeWriter) Write(p []byte) (int, error) { return w.pw.Write(p) }

// Close ends the body: the upload completes, unless ctx is cancelled, when the body fails and
// the upload is discarded.
func (w *pipeWriter) Close() error {
	if err := w.ctx.Err(); err != nil {
		w.pw.CloseWithError(err)
	} else {
		w.pw.Close()
	}
	<-w.done
	return w.err
}
