package dataset_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/storage"
	"github.com/mlfeed/mlfeed/storage/cache"
)

// countingProxy puts a proxy in front of the S3 server the environment names and points
// the environment at it; it returns the count of body bytes the server sends.
func countingProxy(t *testing.T) *atomic.Int64 {
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	p := httputil.NewSingleHostReverseProxy(target)
	p.ModifyResponse = func(r *http.Response) error {
		r.Body = countBody{r.Body, &n}
		return nil
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	return &n
}

type countBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// cacheUsage returns the bytes in the cache's data and temporary files.
func cacheUsage(t *testing.T, dir string) int64 {
	var n int64
	for _, sub := range []string{"data", "tmp"} {
		ents, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// The node cache over an S3 server: a second sweep of a data set of shards that fits the
// cache fetches no byte (counted on the wire); one larger than the cache reads right and
// never passes its limit; a shard whose bytes differ from the manifest's is an error naming
// it.
func TestNodeCacheS3(t *testing.T) {
	bucket, dir := testutil.S3Server(t)
	served := countingProxy(t)
	ctx := context.Background()
	data := demo.Source(3000, 5)
	local := filepath.Join(t.TempDir(), "shards")
	cbfFmt, _ := format.Lookup("cbf")
	if _, err := convert.Shards(ctx, data, local, &convert.ShardOptions{Options: convert.Options{Format: cbfFmt, Type: mlfeed.Float32}, Shards: 6}); err != nil {
		t.Fatal(err)
	}
	// Uploaded through the service, which keeps their entity tags.
	ents, _ := os.ReadDir(local)
	var total, largest int64
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(local, e.Name()))
		if err := storage.Upload(ctx, filepath.Join(local, e.Name()), bucket+"/shards/"+e.Name()); err != nil {
			t.Fatal(err)
		}
		total += int64(len(b))
		if e.Name() != "mlfeed.json" {
			largest = max(largest, int64(len(b)))
		}
	}
	want, err := dataset.OpenFiles([]string{local}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()

	sweep := func(spec *dataset.Spec) int64 {
		t.Helper()
		before := served.Load()
		src, err := spec.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if err := mlfeed.Diff(ctx, want, src); err != nil {
			t.Fatal(err)
		}
		return served.Load() - before
	}

	cdir := t.TempDir()
	spec := &dataset.Spec{Paths: []string{bucket + "/shards/"}, Cache: cdir + ":1GB"}
	if n := sweep(spec); n != total {
		t.Errorf("first sweep fetched %d bytes, want the data set's %d", n, total)
	}
	if n := sweep(spec); n != 0 {
		t.Errorf("second sweep fetched %d bytes, want 0", n)
	}
	c, err := spec.NodeCache()
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Fetched != total || s.Fills != 7 || s.Hits != 7 || s.Bypassed != 0 {
		t.Errorf("stats %+v", s)
	}
	// The format of the data set, for reports, is read through the cache too.
	if f := spec.FormatName(); f != "cbf" {
		t.Errorf("format %q", f)
	}

	// A cache with room for two shards.
	small := t.TempDir()
	limit := 2*largest + largest/2
	spec = &dataset.Spec{Paths: []string{bucket + "/shards/"}, Cache: small + ":" + strconv.FormatInt(limit, 10)}
	for range 2 {
		if n := sweep(spec); n < total-2*largest {
			t.Errorf("a sweep larger than the cache fetched %d bytes of %d", n, total)
		}
		if u := cacheUsage(t, small); u > limit {
			t.Errorf("the cache holds %d bytes, over its limit %d", u, limit)
		}
	}

	// The environment names the cache where the Spec does not; "off" turns it off.
	t.Setenv(cache.Env, cdir+":1GB")
	if n := sweep(&dataset.Spec{Paths: []string{bucket + "/shards/"}}); n != 0 {
		t.Errorf("with %s: fetched %d bytes, want 0", cache.Env, n)
	}
	if n := sweep(&dataset.Spec{Paths: []string{bucket + "/shards/"}, Cache: cache.Off}); n == 0 {
		t.Error("with the cache off, nothing was fetched")
	}
	t.Setenv(cache.Env, "")

	// A shard changed on the server after its manifest was written (behind the service's
	// back: its entity tag stays).
	p := filepath.Join(dir, "shards", "part-00003.cbf")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	os.WriteFile(p, b, 0o644)
	// Its bytes are served as they arrive, and checked once they have all come: reading
	// every chunk of the shard fails, and the cache keeps nothing of it; the next open
	// fetches it again and fails again.
	bad := t.TempDir()
	for range 2 {
		src, err := (&dataset.Spec{Paths: []string{bucket + "/shards/"}, Cache: bad}).Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = nil
		for i := range src.Chunks() {
			if _, err = src.ReadChunk(ctx, i); err != nil {
				break
			}
		}
		if !errors.Is(err, cache.ErrChecksum) || !errors.Is(err, mlfeed.ErrFormat) {
			t.Errorf("a changed shard: %v, want cache.ErrChecksum", err)
		}
		src.Close()
		ents, _ := os.ReadDir(filepath.Join(bad, "data"))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "part-00003.cbf") {
				t.Errorf("the cache kept the changed shard as %s", e.Name())
			}
		}
	}

	// A bad specification is a usage error.
	if _, err := (&dataset.Spec{Paths: []string{bucket + "/shards/"}, Cache: "/tmp/x:0"}).Open(ctx); !errors.Is(err, format.ErrUsage) {
		t.Errorf("cache size 0: %v, want a usage error", err)
	}
}

// A reader of part of a shard (a rank's share of a sweep) may get its bytes before the shard
// is checked against its manifest; Close, which waits for the fetch to end, returns the
// failure in any case.
func TestNodeCachePartRead(t *testing.T) {
	bucket, dir := testutil.S3Server(t)
	ctx := context.Background()
	local := filepath.Join(t.TempDir(), "shards")
	cbfFmt, _ := format.Lookup("cbf")
	opts := convert.Options{Format: cbfFmt, Type: mlfeed.Float32, Write: format.WriteOptions{ChunkSize: 64 << 10}}
	if _, err := convert.Shards(ctx, demo.Source(1000, 5), local, &convert.ShardOptions{Options: opts, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(local)
	for _, e := range ents {
		if err := storage.Upload(ctx, filepath.Join(local, e.Name()), bucket+"/part/"+e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "part", "part-00001.cbf")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)*3/4] ^= 0xff // a value in a chunk after the first
	os.WriteFile(p, b, 0o644)
	src, err := (&dataset.Spec{Paths: []string{bucket + "/part/"}, Cache: t.TempDir()}).Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := src.Chunks()
	if len(n) < 4 {
		t.Fatalf("%d chunks: the test wants several per shard", len(n))
	}
	// The second shard's first chunk is before the changed byte: it is served before the
	// check ends, or, where the check has ended, fails with it.
	if _, err := src.ReadChunk(ctx, len(n)/2); err != nil && !errors.Is(err, cache.ErrChecksum) {
		t.Fatal(err)
	}
	if err := src.Close(); !errors.Is(err, cache.ErrChecksum) || !strings.Contains(err.Error(), "part-00001.cbf") {
		t.Errorf("Close after reading part of a changed shard: %v, want cache.ErrChecksum naming it", err)
	}
}

// An object without a manifest (a single file, read by its format through a local path) is
// cached by its entity tag; a new version of it is fetched again.
func TestNodeCacheObject(t *testing.T) {
	bucket, _ := testutil.S3Server(t)
	served := countingProxy(t)
	ctx := context.Background()
	data := demo.Source(500, 3)
	gz := filepath.Join(t.TempDir(), "images.idx.gz")
	if err := convert.File(ctx, data, gz, &convert.Options{Streams: []string{"features"}}); err != nil {
		t.Fatal(err)
	}
	if err := storage.Upload(ctx, gz, bucket+"/images.idx.gz"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(gz)
	want, _ := mlfeed.Select(data, "features")
	spec := &dataset.Spec{Paths: []string{bucket + "/images.idx.gz"}, Cache: t.TempDir()}
	for i := range 2 {
		before := served.Load()
		src, err := spec.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := mlfeed.Diff(ctx, want, src); err != nil {
			t.Fatal(err)
		}
		d := src.(mlfeed.Detailer).Details()
		src.Close()
		n := served.Load() - before
		if i == 0 && n != fi.Size() || i == 1 && n != 0 {
			t.Errorf("open %d fetched %d bytes of %d", i, n, fi.Size())
		}
		if d["cached"] != true || d["fetched_bytes"].(int64) != n {
			t.Errorf("open %d: details %v", i, d)
		}
	}
	// A new version of the object.
	data2 := demo.Source(400, 4)
	if err := convert.File(ctx, data2, gz, &convert.Options{Streams: []string{"features"}}); err != nil {
		t.Fatal(err)
	}
	if err := storage.Upload(ctx, gz, bucket+"/images.idx.gz"); err != nil {
		t.Fatal(err)
	}
	src, err := spec.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want2, _ := mlfeed.Select(data2, "features")
	if err := mlfeed.Diff(ctx, want2, src); err != nil {
		t.Fatalf("after the object changed: %v", err)
	}
}
