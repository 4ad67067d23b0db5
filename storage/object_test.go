package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// memBucket is a bucket in memory, registered as the scheme "mem" by memServer: the driver
// interface as a service meets it, to test Object's reads without a network.
type memBucket struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (b *memBucket) get(key string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.objects[key]
	if !ok {
		return nil, os.ErrNotExist
	}
	return d, nil
}

func (b *memBucket) Attributes(ctx context.Context, key string) (Attributes, error) {
	d, err := b.get(key)
	return Attributes{Size: int64(len(d))}, err
}

func (b *memBucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*Range, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := b.get(key)
	if err != nil {
		return nil, err
	}
	size := int64(len(d))
	if off < 0 {
		off = max(size+off, 0)
		length = -1
	}
	if off >= size {
		return nil, errors.New("range not satisfiable")
	}
	end := size
	if length >= 0 {
		end = min(off+length, size)
	}
	return &Range{ReadCloser: io.NopCloser(bytes.NewReader(d[off:end])), Offset: off, Size: size}, nil
}

func (b *memBucket) List(ctx context.Context, prefix string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []string
	for k := range b.objects {
		if rest, ok := strings.CutPrefix(k, prefix); ok && !strings.Contains(rest, "/") {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func (b *memBucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	return &memWriter{ctx: ctx, b: b, key: key}, nil
}

func (b *memBucket) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objects[key]; !ok {
		return os.ErrNotExist
	}
	delete(b.objects, key)
	return nil
}

type memWriter struct {
	ctx context.Context
	b   *memBucket
	key string
	buf bytes.Buffer
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *memWriter) Close() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	w.b.objects[w.key] = bytes.Clone(w.buf.Bytes())
	return nil
}

var mem = &memBucket{objects: map[string][]byte{}}

func init() {
	Register("mem", func(ctx context.Context, host string, query url.Values) (Bucket, error) { return mem, nil })
}

// memServer returns the URL of the in-memory bucket and the function that puts an object.
func memServer(t *testing.T) (bucket string, put func(key string, data []byte)) {
	return "mem://bucket", func(key string, data []byte) {
		mem.mu.Lock()
		defer mem.mu.Unlock()
		mem.objects[key] = data
	}
}

// Reads of every size and place return the object's bytes: small ones from the first and
// last blocks fetched when it is opened (no request more), from blocks fetched on demand, and
// across their edges; large ones by concurrent ranged requests.
func TestObjectReadAt(t *testing.T) {
	bucket, put := memServer(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 2*pieceSize+3*BlockSize+12345)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	put("big", data)
	o, err := Open(ctx, bucket+"/big")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", o.Size(), len(data))
	}
	if got := o.Fetched(); got != 2*BlockSize {
		t.Errorf("opening fetched %d bytes, want the first and last blocks (%d)", got, 2*BlockSize)
	}
	size := int64(len(data))
	// The header and the trailer of a format: no request.
	for _, r := range [][2]int64{{0, 16}, {size - 8, 8}, {size - BlockSize, BlockSize - 1}, {100, BlockSize - 200}} {
		p := make([]byte, r[1])
		if n, err := o.ReadAt(p, r[0]); n != len(p) || err != nil || !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("ReadAt(%d bytes at %d): %d, %v, equal %v", r[1], r[0], n, err, bytes.Equal(p, data[r[0]:r[0]+int64(n)]))
		}
	}
	if got := o.Fetched(); got != 2*BlockSize {
		t.Errorf("reading the first and last blocks fetched %d bytes more", got-2*BlockSize)
	}
	for _, r := range [][2]int64{
		{BlockSize - 10, 20},                     // across the first block's end
		{size - BlockSize - 10, 20},              // into the last block (not aligned)
		{3*BlockSize + 5, 100},                   // a block fetched on demand
		{3*BlockSize + 50, 100},                  // the same, cached
		{5*BlockSize - 3, BlockSize - 1},         // across two blocks
		{7, 2*pieceSize + 5},                     // concurrent pieces
		{size - pieceSize - 1, pieceSize + 1},    // one request, to the end
		{size - 3, 3},                            // the last bytes
		{pieceSize + BlockSize/2, 3 * BlockSize}, // one request
	} {
		p := make([]byte, r[1])
		if n, err := o.ReadAt(p, r[0]); n != len(p) || err != nil || !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("ReadAt(%d bytes at %d): %d, %v", r[1], r[0], n, err)
		}
	}
	p := make([]byte, 10)
	if n, err := o.ReadAt(p, size-4); n != 4 || err != io.EOF || !bytes.Equal(p[:4], data[size-4:]) {
		t.Errorf("ReadAt past the end: %d, %v", n, err)
	}
	if n, err := o.ReadAt(p, size); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at the end: %d, %v", n, err)
	}

	// Objects smaller than a block, and an empty one.
	for _, n := range []int{0, 1, 1000, BlockSize, BlockSize + 1} {
		put("small", data[:n])
		s, err := Open(ctx, bucket+"/small")
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(io.NewSectionReader(s, 0, s.Size()))
		if err != nil || !bytes.Equal(got, data[:n]) {
			t.Errorf("%d bytes: read %d, %v", n, len(got), err)
		}
		if s.b != o.b {
			t.Errorf("objects of one bucket do not share it (its client, its connections)")
		}
		s.Close()
	}
	if _, err := Open(ctx, bucket+"/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing object: %v", err)
	}
}

// Once the context of every caller in Use is done, requests are cancelled; a caller whose
// context is live keeps them going, and a later caller reads again.
func TestObjectUse(t *testing.T) {
	bucket, put := memServer(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), (8*BlockSize)/16)
	put("obj", data)
	o, err := Open(context.Background(), bucket+"/obj")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ended := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			o.mu.Lock()
			n := o.ended
			o.mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d callers ended, want %d", n, want)
			}
		}
	}
	read := func(off int64) error {
		p := make([]byte, BlockSize)
		_, err := o.ReadAt(p, off)
		if err == nil && !bytes.Equal(p, data[off:off+BlockSize]) {
			t.Fatalf("wrong bytes at %d", off)
		}
		return err
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()

	live := o.Use(context.Background())
	end := o.Use(gone)
	ended(1)
	if err := read(2 * BlockSize); err != nil {
		t.Fatalf("with a live caller: %v", err)
	}
	live()
	end()

	end = o.Use(gone)
	ended(1)
	if err := read(3 * BlockSize); !errors.Is(err, context.Canceled) {
		t.Fatalf("with every caller's context done: %v, want context.Canceled", err)
	}
	end()
	ended(0)

	end = o.Use(context.Background())
	if err := read(4 * BlockSize); err != nil {
		t.Fatalf("a caller after: %v", err)
	}
	end()
}

// A URL whose scheme has no driver in the program is a *NoDriverError wrapping ErrNoDriver,
// naming the package that registers mlfeed's driver for the scheme, where there is one.
func TestNoDriverError(t *testing.T) {
	for _, tc := range []struct{ url, scheme, pkg string }{
		{"s3://bucket/key", "s3", "github.com/mlfeed/mlfeed/storage/s3"},
		{"gs://bucket/key", "gs", "github.com/mlfeed/mlfeed/storage/gcs"},
	} {
		_, err := Stat(context.Background(), tc.url)
		var nd *NoDriverError
		if !errors.As(err, &nd) || !errors.Is(err, ErrNoDriver) || nd.Name != tc.url || nd.Scheme != tc.scheme || nd.Package != tc.pkg {
			t.Fatalf("Stat(%q) = %v (%#v), want a NoDriverError for %s naming %s", tc.url, err, nd, tc.scheme, tc.pkg)
		}
		if want := tc.url + ": no storage driver for the URL's scheme " + tc.scheme + ":// in this program (import _ \"" + tc.pkg + "\")"; !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Stat(%q): %q, want it to end in %q", tc.url, err, want)
		}
	}
}
