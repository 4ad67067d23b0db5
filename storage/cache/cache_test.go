package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed/internal/testutil/tmpfs"
	"github.com/mlfeed/mlfeed/storage"
)

// dirBucket is a bucket over a local directory (the environment's CACHETEST_ROOT), registered
// as the scheme "cachetest": a service without a network that several processes share. It
// counts the bytes it serves in this process, and gives each object an entity tag from its
// size and modification time. With CACHETEST_STALL set, a read stops after its first bytes
// and never ends, as a fill that a process is killed in.
type dirBucket struct{ served atomic.Int64 }

var bucket = &dirBucket{}

func init() {
	storage.Register("cachetest", func(ctx context.Context, host string, query url.Values) (storage.Bucket, error) {
		return bucket, nil
	}, "CACHETEST_ROOT")
}

func (b *dirBucket) path(key string) string { return filepath.Join(os.Getenv("CACHETEST_ROOT"), key) }

func (b *dirBucket) Attributes(ctx context.Context, key string) (storage.Attributes, error) {
	fi, err := os.Stat(b.path(key))
	if err != nil {
		return storage.Attributes{}, err
	}
	return storage.Attributes{Size: fi.Size(), ETag: etag(fi)}, nil
}

func etag(fi os.FileInfo) string {
	return fmt.Sprintf("%q", strconv.FormatInt(fi.Size(), 16)+"-"+strconv.FormatInt(fi.ModTime().UnixNano(), 16))
}

func (b *dirBucket) NewRangeReader(ctx context.Context, key string, off, length int64) (*storage.Range, error) {
	d, err := os.ReadFile(b.path(key))
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(b.path(key))
	if err != nil {
		return nil, err
	}
	size := int64(len(d))
	if off < 0 {
		off, length = max(size+off, 0), -1
	}
	if off >= size {
		return nil, errors.New("range not satisfiable")
	}
	end := size
	if length >= 0 {
		end = min(off+length, size)
	}
	if h := hold.Load(); h != nil && off > 0 {
		select {
		case <-*h:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var r io.Reader = bytes.NewReader(d[off:end])
	if os.Getenv("CACHETEST_STALL") != "" && off > 0 {
		r = io.MultiReader(bytes.NewReader(d[off:off+1000]), stall{})
	}
	return &storage.Range{ReadCloser: io.NopCloser(countReader{r, &b.served}), Offset: off, Size: size, ETag: etag(fi)}, nil
}

// hold, when set, holds every range but the first until it is closed: a fill in progress.
var hold atomic.Pointer[chan struct{}]

type stall struct{}

func (stall) Read([]byte) (int, error) {
	time.Sleep(time.Hour) // until killed (a sleep, not a deadlock the runtime would end)
	return 0, io.EOF
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (b *dirBucket) List(ctx context.Context, prefix string) ([]string, error) {
	return nil, errors.ErrUnsupported
}

func (b *dirBucket) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	return nil, errors.ErrUnsupported
}

func (b *dirBucket) Delete(ctx context.Context, key string) error { return os.Remove(b.path(key)) }

// objects writes n objects of size bytes each (different bytes) and returns their URLs and
// contents.
func objects(t *testing.T, n, size int) ([]string, [][]byte) {
	t.Helper()
	root := os.Getenv("CACHETEST_ROOT")
	if root == "" {
		root = t.TempDir()
		t.Setenv("CACHETEST_ROOT", root)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	var urls []string
	var data [][]byte
	for i := range n {
		d := make([]byte, size)
		for j := range d {
			d[j] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("shard-%05d.bin", i)
		if err := os.WriteFile(filepath.Join(root, name), d, 0o644); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "cachetest://b/"+name)
		data = append(data, d)
	}
	return urls, data
}

// filling makes the tests open objects with OpenFilling (see bothWays).
var filling bool

// open opens u through c, with Open or OpenFilling as filling says.
func open(c *Cache, u string, want *Want) (*File, error) {
	if filling {
		return c.OpenFilling(context.Background(), u, want)
	}
	return c.Open(context.Background(), u, want)
}

// bothWays runs test twice: opening objects with Open, then with OpenFilling.
func bothWays(t *testing.T, test func(t *testing.T)) {
	for _, f := range []bool{false, true} {
		name := "Open"
		if f {
			name = "OpenFilling"
		}
		t.Run(name, func(t *testing.T) {
			filling = f
			defer func() { filling = false }()
			test(t)
		})
	}
}

// readAll opens u through c and returns its bytes.
func readAll(t *testing.T, c *Cache, u string, want *Want) []byte {
	t.Helper()
	f, err := open(c, u, want)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

// usage returns the bytes the cache's data and temporary files take (their sizes).
func usage(t *testing.T, c *Cache) int64 {
	t.Helper()
	var n int64
	for _, sub := range []string{"data", "tmp"} {
		ents, err := os.ReadDir(filepath.Join(c.Dir(), sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestSecondSweepFetchesNothing(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		urls, data := objects(t, 5, 3<<20)
		c, err := New(t.TempDir(), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		for sweep := range 2 {
			before := bucket.served.Load()
			for i, u := range urls {
				var want *Want
				if i%2 == 0 { // half known by their manifest entry, half by entity tag
					want = &Want{Size: int64(len(data[i])), SHA256: sum(data[i])}
				}
				if got := readAll(t, c, u, want); !bytes.Equal(got, data[i]) {
					t.Fatalf("sweep %d: %s: wrong bytes", sweep, u)
				}
			}
			fetched := bucket.served.Load() - before
			wantFetched := int64(0)
			if sweep == 0 {
				wantFetched = 5 * 3 << 20
			}
			if fetched != wantFetched {
				t.Errorf("sweep %d fetched %d bytes, want %d", sweep, fetched, wantFetched)
			}
		}
		s := c.Stats()
		if s.Fills != 5 || s.Hits != 5 || s.Fetched != 5*3<<20 || s.Bypassed != 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

// A fill this process makes serves its bytes as they arrive: with every range after the
// first held, OpenFilling returns and reads the first bytes; nothing is in the cache yet, and
// another open waits for the fill rather than fetching; once the rest comes the object is
// checked and in place, fetched once.
func TestOpenFillingServesAsBytesArrive(t *testing.T) {
	const size = 12 << 20 // three pieces of a download
	urls, data := objects(t, 1, size)
	c, err := New(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	before := bucket.served.Load()
	h := make(chan struct{})
	hold.Store(&h)
	defer hold.Store(nil)
	want := &Want{Size: size, SHA256: sum(data[0])}
	f, err := c.OpenFilling(context.Background(), urls[0], want)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Filling() {
		t.Fatal("a File opened while this process fills it is not Filling")
	}
	b := make([]byte, 1000)
	if _, err := f.ReadAt(b, 5); err != nil || !bytes.Equal(b, data[0][5:1005]) {
		t.Fatalf("the first bytes while the rest is held: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.Dir(), "data")); len(ents) != 0 {
		t.Fatal("the object is in the cache before it has all come")
	}
	other := make(chan *File, 1)
	go func() {
		g, err := c.Open(context.Background(), urls[0], want)
		if err != nil {
			t.Error(err)
		}
		other <- g
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-other:
		t.Fatal("a second open returned before the fill ended")
	default:
	}
	hold.Store(nil)
	close(h)
	rest := make([]byte, size)
	if _, err := f.ReadAt(rest, 0); err != nil || !bytes.Equal(rest, data[0]) {
		t.Fatalf("the whole object: %v", err)
	}
	if err := f.Wait(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f.Path()); err != nil || fi.Size() != size {
		t.Fatalf("after the fill, its copy: %v", err)
	}
	if f.Fetched() != size {
		t.Errorf("Fetched %d, want %d", f.Fetched(), size)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if g := <-other; g != nil {
		if g.Fetched() != 0 || g.Filling() {
			t.Errorf("the second open fetched %d bytes (filling %v)", g.Fetched(), g.Filling())
		}
		g.Close()
	}
	if n := bucket.served.Load() - before; n != size {
		t.Errorf("fetched %d bytes, want the object once: %d", n, size)
	}
	if s := c.Stats(); s.Fills != 1 || s.Fetched != size || s.Hits != 1 {
		t.Errorf("stats %+v", s)
	}
	// Later opens read the copy.
	g, err := c.OpenFilling(context.Background(), urls[0], want)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Filling() || g.Fetched() != 0 {
		t.Error("a later open filled again")
	}
}

// A fill whose bytes do not match the manifest, read as they arrive: the reads after the
// check fail with ErrChecksum, and nothing is kept.
func TestOpenFillingChecksumMismatch(t *testing.T) {
	const size = 9 << 20
	urls, data := objects(t, 1, size)
	c, err := New(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	bad := sum(append([]byte{1}, data[0]...))
	f, err := c.OpenFilling(context.Background(), urls[0], &Want{Size: size, SHA256: bad})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 100)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, ErrChecksum) {
		t.Fatal(err)
	}
	if err := f.Wait(); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), urls[0]) {
		t.Fatalf("Wait: %v, want ErrChecksum naming the object", err)
	}
	if _, err := f.ReadAt(b, 0); !errors.Is(err, ErrChecksum) {
		t.Errorf("a read after the mismatch: %v, want ErrChecksum", err)
	}
	if err := f.Close(); !errors.Is(err, ErrChecksum) {
		t.Errorf("Close: %v, want ErrChecksum", err)
	}
	if n := usage(t, c); n != 0 || c.readUsage() != 0 {
		t.Errorf("%d bytes left in the cache (counted %d) after a failed check", n, c.readUsage())
	}
	// A size the service does not give fails at once.
	if _, err := c.OpenFilling(context.Background(), urls[0], &Want{Size: size - 1, SHA256: sum(data[0])}); !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong size: %v, want ErrChecksum", err)
	}
}

func TestChecksumMismatch(t *testing.T) {
	urls, data := objects(t, 1, 100000)
	c, err := New(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	bad := sum(append([]byte{1}, data[0]...))
	_, err = c.Open(context.Background(), urls[0], &Want{Size: 100000, SHA256: bad})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), urls[0]) {
		t.Fatalf("got %v, want ErrChecksum naming the object", err)
	}
	_, err = c.Open(context.Background(), urls[0], &Want{Size: 99999, SHA256: sum(data[0])})
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("wrong size: got %v, want ErrChecksum", err)
	}
	if n := usage(t, c); n != 0 {
		t.Errorf("%d bytes left in the cache after failed checks", n)
	}
}

func TestChangedObjectIsRefetched(t *testing.T) {
	urls, _ := objects(t, 1, 50000)
	c, err := New(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, c, urls[0], nil)
	d := bytes.Repeat([]byte{7}, 60000)
	p := filepath.Join(os.Getenv("CACHETEST_ROOT"), "shard-00000.bin")
	if err := os.WriteFile(p, d, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if got := readAll(t, c, urls[0], nil); !bytes.Equal(got, d) {
		t.Fatal("the cache served the object's old bytes")
	}
}

func TestLimit(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		const size = 1 << 20
		urls, data := objects(t, 6, size)
		limit := int64(2*size + size/2) // room for two objects
		c, err := New(t.TempDir(), limit)
		if err != nil {
			t.Fatal(err)
		}
		// Sweeps over a data set larger than the cache: every read right, the limit never
		// passed.
		for sweep := range 3 {
			for i, u := range urls {
				if got := readAll(t, c, u, nil); !bytes.Equal(got, data[i]) {
					t.Fatalf("sweep %d: %s: wrong bytes", sweep, u)
				}
				if n := usage(t, c); n > limit || n != c.readUsage() {
					t.Fatalf("the cache holds %d bytes (counted %d), over its limit of %d", n, c.readUsage(), limit)
				}
			}
		}
		// The least recently used go first: after reading 0, 1, 2, then 0, the cache holds 2 and 0.
		for _, i := range []int{0, 1, 2, 0} {
			readAll(t, c, urls[i], nil)
		}
		before := bucket.served.Load()
		readAll(t, c, urls[2], nil)
		readAll(t, c, urls[0], nil)
		if n := bucket.served.Load() - before; n != 0 {
			t.Errorf("the two most recently used objects were not kept: %d bytes fetched", n)
		}
		// Objects open are not removed: with two open, a third does not fit and is read past
		// the cache.
		f0, err := open(c, urls[3], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f0.Close()
		f1, err := open(c, urls[4], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f1.Close()
		if _, err := open(c, urls[5], nil); !errors.Is(err, ErrBypass) {
			t.Fatalf("a third object with two open: %v, want ErrBypass", err)
		}
		for i, f := range []*File{f0, f1} {
			b := make([]byte, size)
			if _, err := f.ReadAt(b, 0); err != nil || !bytes.Equal(b, data[3+i]) {
				t.Fatalf("an open object changed: %v", err)
			}
		}
		// Larger than the whole cache: read past it.
		big, _ := objects(t, 1, 3*size)
		if _, err := open(c, big[0], nil); !errors.Is(err, ErrBypass) {
			t.Fatalf("an object larger than the cache: %v, want ErrBypass", err)
		}
	})
}

func TestConcurrentGoroutines(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		urls, data := objects(t, 4, 2<<20)
		c, err := New(t.TempDir(), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		before := bucket.served.Load()
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range urls {
					i := (g + k) % len(urls)
					f, err := open(c, urls[i], nil)
					if err != nil {
						t.Error(err)
						return
					}
					b := make([]byte, f.Size())
					f.ReadAt(b, 0)
					f.Close()
					if !bytes.Equal(b, data[i]) {
						t.Errorf("%s: wrong bytes", urls[i])
					}
				}
			}()
		}
		wg.Wait()
		if n := bucket.served.Load() - before; n != 4*2<<20 {
			t.Errorf("fetched %d bytes, want each object once (%d)", n, 4*2<<20)
		}
	})
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		dir   string
		limit int64
		bad   bool
	}{
		{"/var/cache/mlfeed", "/var/cache/mlfeed", DefaultLimit, false},
		{"/var/cache/mlfeed:50GB", "/var/cache/mlfeed", 50e9, false},
		{"cache:512MiB", "cache", 512 << 20, false},
		{"/a:b/c:4G", "/a:b/c", 4 << 30, false},
		{"/a:b", "/a:b", DefaultLimit, false},
		{"/a:0", "", 0, true},
		{":5G", "", 0, true},
		{"", "", 0, true},
	} {
		dir, limit, err := Parse(tc.spec)
		if (err != nil) != tc.bad || dir != tc.dir || limit != tc.limit {
			t.Errorf("Parse(%q) = %q, %d, %v", tc.spec, dir, limit, err)
		}
	}
}

// The processes of a node: a child process runs the helper below, reading objects through
// the cache as the environment says.
func TestMain(m *testing.M) {
	if os.Getenv("CACHETEST_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child reads the objects CACHETEST_URLS names through the cache CACHETEST_CACHE and prints
// the bytes it fetched and each object's SHA-256.
func child() int {
	c, err := FromSpec(os.Getenv("CACHETEST_CACHE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var sums []string
	for _, u := range strings.Fields(os.Getenv("CACHETEST_URLS")) {
		filling = os.Getenv("CACHETEST_FILLING") != ""
		f, err := open(c, u, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		h := sha256.New()
		io.Copy(h, io.NewSectionReader(f, 0, f.Size()))
		f.Close()
		sums = append(sums, hex.EncodeToString(h.Sum(nil)))
	}
	fmt.Println(bucket.served.Load(), strings.Join(sums, " "))
	return 0
}

func childCmd(t *testing.T, cacheSpec string, urls []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CACHETEST_CHILD=1", "CACHETEST_CACHE="+cacheSpec, "CACHETEST_URLS="+strings.Join(urls, " "))
	if filling {
		cmd.Env = append(cmd.Env, "CACHETEST_FILLING=1")
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestProcessesShareTheCache(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		urls, data := objects(t, 6, 2<<20)
		dir := t.TempDir()
		const procs = 4
		outs := make([][]byte, procs)
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each in its own order, so that they meet on every object.
				u := append(append([]string(nil), urls[p:]...), urls[:p]...)
				outs[p], errs[p] = childCmd(t, dir+":1GB", u).Output()
			}()
		}
		wg.Wait()
		var total int64
		for p := range procs {
			if errs[p] != nil {
				t.Fatalf("process %d: %v", p, errs[p])
			}
			f := strings.Fields(string(outs[p]))
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
			for k, s := range f[1:] {
				if i := (p + k) % len(urls); s != sum(data[i]) {
					t.Errorf("process %d read wrong bytes of %s", p, urls[i])
				}
			}
		}
		if want := int64(6 * 2 << 20); total != want {
			t.Errorf("%d processes fetched %d bytes, want each object once: %d", procs, total, want)
		}
		// A fifth process, later, fetches nothing.
		out, err := childCmd(t, dir+":1GB", urls).Output()
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(out)); f[0] != "0" {
			t.Errorf("a later process fetched %s bytes, want 0", f[0])
		}
	})
}

func TestKilledFillLeavesNothingTrusted(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		urls, data := objects(t, 1, 12<<20)
		dir := t.TempDir()
		cmd := childCmd(t, dir+":1GB", urls, "CACHETEST_STALL=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until it is filling: its temporary file is there, and bytes are in it.
		deadline := time.Now().Add(20 * time.Second)
		for {
			ents, _ := os.ReadDir(filepath.Join(dir, "tmp"))
			if len(ents) == 1 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("the child did not start filling")
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cmd.Process.Kill() // SIGKILL: nothing of the child's runs
		cmd.Wait()
		if ents, _ := os.ReadDir(filepath.Join(dir, "data")); len(ents) != 0 {
			t.Fatalf("a killed fill left %d objects in the cache", len(ents))
		}
		c, err := New(dir, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, c, urls[0], nil); !bytes.Equal(got, data[0]) {
			t.Fatal("wrong bytes after a killed fill")
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
			t.Errorf("the killed fill's temporary file was not removed: %v", ents)
		}
		if c.Stats().Fills != 1 {
			t.Errorf("stats %+v: want one fill", c.Stats())
		}
		if u := c.readUsage(); u != int64(len(data[0])) {
			t.Errorf("the cache counts %d bytes, holds %d", u, len(data[0]))
		}
	})
}

func TestUsageCountHeals(t *testing.T) {
	const size = 1 << 20
	urls, data := objects(t, 4, size)
	dir := t.TempDir()
	c, err := New(dir, 3*size)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, c, urls[0], nil)
	// A fill another process left when it died (no lock held on it), counted in usage.
	stale := filepath.Join(dir, "tmp", "obj-0123456789012345678901234567890123456789.42")
	if err := os.WriteFile(stale, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	c.writeUsage(2 * size)
	// The next fills do not fit by the count: the scan removes the stale file and recounts,
	// and nothing is evicted that fits.
	for i := 1; i < 3; i++ {
		if got := readAll(t, c, urls[i], nil); !bytes.Equal(got, data[i]) {
			t.Fatal("wrong bytes")
		}
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale fill is still there: %v", err)
	}
	if u, n := c.readUsage(), usage(t, c); u != n || n != 3*size {
		t.Errorf("usage counts %d, the cache holds %d, want %d", u, n, 3*size)
	}
	before := bucket.served.Load()
	readAll(t, c, urls[0], nil)
	if bucket.served.Load() != before {
		t.Error("an object that fitted was evicted")
	}
}

func TestDiskTroubleReadsPastTheCache(t *testing.T) {
	urls, _ := objects(t, 1, 1000)
	dir := t.TempDir()
	c, err := New(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	// A cache whose tmp/ cannot hold files.
	os.RemoveAll(filepath.Join(dir, "tmp"))
	os.WriteFile(filepath.Join(dir, "tmp"), nil, 0o644)
	if _, err := c.Open(context.Background(), urls[0], nil); !errors.Is(err, ErrBypass) {
		t.Fatalf("got %v, want ErrBypass", err)
	}
	if u := c.readUsage(); u > 0 {
		t.Errorf("a failed fill left %d bytes counted", u)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/var/cache/mlfeed:50GB", "c:1", "/a:b", ":5G", "x:0", "d:1PiB", "d:2PiB", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		dir, limit, err := Parse(spec)
		if err != nil {
			return
		}
		if dir == "" || limit <= 0 || limit > 1<<50 {
			t.Fatalf("Parse(%q) = %q, %d", spec, dir, limit)
		}
		if !strings.HasPrefix(spec, dir) {
			t.Fatalf("Parse(%q): directory %q is not the specification's start", spec, dir)
		}
	})
}

// A disk that fills up in the middle of a fill (a tmpfs of 1 MiB under a cache whose limit
// is 1 GiB, where this process may mount one): Open reads past the cache (ErrBypass naming
// the disk's error); a File of OpenFilling serves every byte right, from object storage where
// the disk failed, and its Wait says why the object was not kept. Nothing is left in the
// cache, and nothing counted.
func TestFullDiskMidFill(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		urls, data := objects(t, 1, 3<<20)
		dir, err := tmpfs.Mount(t, "1m")
		if err != nil {
			t.Skip(err)
		}
		c, err := New(dir, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		f, err := open(c, urls[0], nil)
		if !filling {
			if !errors.Is(err, ErrBypass) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), urls[0]) {
				t.Fatalf("Open on a full disk: %v, want ErrBypass naming the object and ENOSPC", err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, f.Size())
			if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
				t.Fatalf("reading while the disk fills: %v", err)
			}
			if !bytes.Equal(b, data[0]) {
				t.Error("wrong bytes from a fill whose disk filled up")
			}
			if err := f.Wait(); !errors.Is(err, ErrBypass) || !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("Wait: %v, want ErrBypass and ENOSPC", err)
			}
			if err := f.Close(); err != nil {
				t.Errorf("Close after the disk filled up: %v, want nil (the bytes were served)", err)
			}
		}
		for _, sub := range []string{"data", "tmp"} {
			if ents, _ := os.ReadDir(filepath.Join(dir, sub)); len(ents) != 0 {
				t.Errorf("left in %s/: %v", sub, ents)
			}
		}
		if u := c.readUsage(); u > 0 {
			t.Errorf("a failed fill left %d bytes counted", u)
		}
		// A count that cannot be written on a full disk is removed: the next fill scans.
		c.writeUsage(7)
		fill, _ := os.Create(filepath.Join(dir, "filler"))
		fill.Write(make([]byte, 2<<20))
		fill.Close()
		if err := c.writeUsage(8); !errors.Is(err, syscall.ENOSPC) || c.readUsage() != -1 {
			t.Errorf("writing the count on a full disk: %v, then the count reads %d, want ENOSPC and none", err, c.readUsage())
		}
	})
}
