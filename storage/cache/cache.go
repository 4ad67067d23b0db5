// Package cache keeps objects read from object storage on local disk, in a directory that
// every process of a node shares (the ranks of a job, a DataLoader's workers), so that a second
// sweep over an s3://, gs:// or azblob:// data set reads the node's disk, not the network.
//
// The cache holds whole objects: a data set's shards are read whole in a sweep. An object is
// fetched once per node: the first process to want it takes the object's lock and fills it,
// the others wait for it. The bytes are written to a temporary file in the cache directory
// (by ranged requests made several at once), hashed as they arrive, checked, flushed to disk
// and renamed into place, so a process killed while filling leaves only a temporary file that
// no reader trusts and the next filler removes. The filler need not wait for the end: a File
// from OpenFilling serves each read as soon as its bytes have arrived, fetching them before
// the rest. An object is
// checked against its manifest entry's size and SHA-256 when it has one (a sharded data set
// written by mlfeed), else it is known by its URL, size and entity tag (ETag), asked of the
// service on every open; an object whose service gives no entity tag is not cached.
//
// The cache stays within its size limit: before filling, the least recently used objects that
// no process has open are removed (under the cache's lock); an object that does not fit even
// so is read from object storage past the cache. An object open in any process is never
// removed: every process holds a shared lock on each cached object it has open.
//
// The directory's layout: data/ holds the objects, one file each; tmp/ the fills in
// progress; locks/ one lock file per object; lock the cache's own lock; usage the bytes held
// and reserved. File modification times record the last use. Locks are flock(2) locks, so the directory must be on a local
// file system (not NFS), and the package works on Unix systems only.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/bytesize"
	"github.com/mlfeed/mlfeed/storage"
)

// Env is the environment variable that names the cache where a program is given none: its
// value is a cache specification, DIR[:SIZE] (see Parse).
const Env = "MLFEED_CACHE"

// DefaultLimit is the size limit of a cache whose specification gives none: 10 GiB.
const DefaultLimit = 10 << 30

// Off is the cache specification that turns the cache off, also where Env names one.
const Off = "off"

// ErrBypass is wrapped by the error of Open for an object the cache does not hold and cannot
// take: larger than the cache, no room left beside the objects that processes have open, or
// no entity tag to know it by. The caller reads it from object storage.
var ErrBypass = errors.New("cache: read past the cache")

// ErrChecksum is wrapped by the error for an object whose bytes do not match its manifest
// entry: the data set changed after its manifest was written, or was damaged.
var ErrChecksum = fmt.Errorf("cache: the object does not match its manifest: %w", mlfeed.ErrFormat)

// Cache is a node cache in a directory. Its methods are safe for concurrent use, by the
// goroutines of a process and by the processes of a node.
type Cache struct {
	dir   string
	limit int64

	fetched, hits, hitBytes, fills, bypassed, bypassedBytes atomic.Int64
}

// Stats count what a process did through a cache.
type Stats struct {
	Fetched       int64 // bytes fetched from object storage into the cache
	Fills         int64 // objects fetched into the cache
	Hits          int64 // opens served from the cache without fetching
	HitBytes      int64 // their bytes
	Bypassed      int64 // objects read from object storage past the cache
	BypassedBytes int64 // bytes fetched for them (as callers report with AddBypassed)
}

var (
	cachesMu sync.Mutex
	caches   = map[string]*Cache{}
)

// New returns the cache in dir (created if need be) with the size limit given in bytes. A
// process gets one Cache per directory and limit.
func New(dir string, limit int64) (*Cache, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("cache %s: size limit %d: want a size above 0", dir, limit)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", dir, err)
	}
	id := abs + "\x00" + strconv.FormatInt(limit, 10)
	cachesMu.Lock()
	defer cachesMu.Unlock()
	if c := caches[id]; c != nil {
		return c, nil
	}
	if err := supported(); err != nil {
		return nil, fmt.Errorf("cache %s: %w", dir, err)
	}
	for _, sub := range []string{"data", "tmp", "locks"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	c := &Cache{dir: abs, limit: limit}
	caches[id] = c
	return c, nil
}

// Parse reads a cache specification, DIR[:SIZE]: the directory, and after the last colon
// the size limit, a whole number with an optional unit as the CLI's size flags take it (K,
// M, G, T and KiB, MiB, GiB, TiB powers of 1024; KB, MB, GB, TB powers of 1000). Without a
// size (or when what follows the last colon is no size) the limit is DefaultLimit.
func Parse(spec string) (dir string, limit int64, err error) {
	dir, limit = spec, DefaultLimit
	if i := strings.LastIndexByte(spec, ':'); i >= 0 {
		if n, err := bytesize.Parse(spec[i+1:]); err == nil && spec[i+1:] != "" {
			dir, limit = spec[:i], n
			if n == 0 {
				return "", 0, fmt.Errorf("cache %q: size limit 0: want a size above 0", spec)
			}
		}
	}
	if dir == "" {
		return "", 0, fmt.Errorf("cache %q: no directory: want DIR[:SIZE]", spec)
	}
	return dir, limit, nil
}

// FromSpec returns the cache a specification names (DIR[:SIZE], see Parse), or nil for ""
// and Off.
func FromSpec(spec string) (*Cache, error) {
	if spec == "" || spec == Off {
		return nil, nil
	}
	dir, limit, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	return New(dir, limit)
}

// FromEnv returns the cache the environment variable Env names, or nil where it is unset,
// empty or Off.
func FromEnv() (*Cache, error) {
	c, err := FromSpec(os.Getenv(Env))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Env, err)
	}
	return c, nil
}

// Dir returns the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Limit returns the cache's size limit in bytes.
func (c *Cache) Limit() int64 { return c.limit }

// Stats returns what this process did through the cache so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Fetched: c.fetched.Load(), Fills: c.fills.Load(),
		Hits: c.hits.Load(), HitBytes: c.hitBytes.Load(),
		Bypassed: c.bypassed.Load(), BypassedBytes: c.bypassedBytes.Load(),
	}
}

// AddBypassed counts n bytes fetched past the cache for an object Open refused with
// ErrBypass, for Stats.
func (c *Cache) AddBypassed(n int64) { c.bypassedBytes.Add(n) }

// String describes the stats in a line, as the CLI prints it.
func (s Stats) String() string {
	return fmt.Sprintf("cache: fetched %d bytes (%d objects), hit %d objects (%d bytes), read past the cache %d objects (%d bytes)",
		s.Fetched, s.Fills, s.Hits, s.HitBytes, s.Bypassed, s.BypassedBytes)
}

// Want is what a manifest says of an object: its size and the hex SHA-256 of its bytes.
type Want struct {
	Size   int64
	SHA256 string
}

// File is a cached object open for reading: its local copy, which stays in the cache (no
// process removes it) until Close. A File that OpenFilling returned while this process
// fills the object serves each read from the local copy as soon as the bytes it asks for
// have arrived, fetching them before the rest.
type File struct {
	f       *os.File // the local copy (while it is filled: the temporary file)
	lock    *os.File // the object's lock, shared; nil while a fill holds it
	name    string
	path    string // the local copy's path in data/
	size    int64
	fetched int64
	fill    *fill // the fill this File was opened during, or nil
}

// ReadAt reads from the local copy. While the object is filled, it waits for the bytes
// asked for, which are fetched first. Where the fill fails on the local disk, the rest is
// read from object storage past the cache; where the bytes turn out not to match the
// manifest (ErrChecksum) or the object changed, reads fail with that error from then on.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if fl := f.fill; fl != nil {
		err := fl.t.Need(fl.ctx, off, int64(len(p)))
		select {
		case <-fl.done:
			err = fl.err
		default:
			if fl.w.failed() {
				err = fl.w.error()
			}
		}
		if err != nil {
			if fl.diskTrouble() {
				return fl.readPast(p, off)
			}
			return 0, err
		}
	}
	return f.f.ReadAt(p, off)
}

// Name returns the object's URL.
func (f *File) Name() string { return f.name }

// Path returns the local copy's path, valid after Wait and until Close.
func (f *File) Path() string { return f.path }

// Size returns the object's size.
func (f *File) Size() int64 { return f.size }

// Fetched returns the bytes fetched from object storage to open this file (so far, while it
// is filled): 0 when another open (of this process or another) had filled it.
func (f *File) Fetched() int64 {
	if f.fill != nil {
		return f.fill.t.Fetched() + f.fill.pastFetched()
	}
	return f.fetched
}

// Filling reports whether the File was opened while this process fills the object, so that
// its local copy is whole only after Wait (reads need not wait: ReadAt serves the bytes as
// they arrive).
func (f *File) Filling() bool { return f.fill != nil }

// Wait waits for the fill the File was opened during to end, and returns its error: nil
// when the local copy is whole, checked and in place (at Path). An error wrapping ErrBypass
// means the object could not be kept (the local disk failed); ReadAt still serves it, from
// object storage.
func (f *File) Wait() error {
	if f.fill == nil {
		return nil
	}
	<-f.fill.done
	return f.fill.err
}

// Close closes the local copy and lets it be removed. Closing a File whose fill is in
// progress waits for the fill to end, so that the bytes fetched are kept.
func (f *File) Close() error {
	var err error
	if fl := f.fill; fl != nil {
		<-fl.done
		if fl.lock != nil {
			unlock(fl.lock)
		}
		fl.closePast()
		if fl.err != nil && !fl.diskTrouble() {
			err = fl.err
		}
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if f.lock != nil {
		unlock(f.lock)
	}
	return err
}

// entry is an object's place in the cache.
type entry struct {
	key  string // the lock's name
	name string // the data file's name: key and the object's base name
	size int64
	etag string // the entity tag, for objects known by it
	want *Want  // the manifest's entry, for objects known by it
}

// Open opens the object name (a URL) from the cache, filling it first if need be. want,
// when not nil, is the manifest's entry for the object: it is then known by its SHA-256
// and checked against it, and the service is not asked for its entity tag. An error
// wrapping ErrBypass means the object is not cached and the caller reads it from object
// storage; one wrapping ErrChecksum that its bytes are not the manifest's.
func (c *Cache) Open(ctx context.Context, name string, want *Want) (*File, error) {
	return c.open(ctx, name, want, false)
}

// OpenFilling is Open, except that where this process fills the object it returns as soon
// as the fill has started: the File's reads are served as their bytes arrive, fetched
// before the rest, and the fill goes on in the background (File.Wait waits for it; Close
// too). The bytes a reader gets before the fill ends are those the service sent, of the
// size and entity tag the fill started with; the checksum is known when the fill ends
// (File.Wait), and reads after a mismatch fail with ErrChecksum. Nothing is trusted by later
// opens before the whole object is checked and in place. Where another process fills the
// object, OpenFilling waits for it, as Open does.
func (c *Cache) OpenFilling(ctx context.Context, name string, want *Want) (*File, error) {
	return c.open(ctx, name, want, true)
}

func (c *Cache) open(ctx context.Context, name string, want *Want, early bool) (*File, error) {
	e, err := c.entry(ctx, name, want)
	if err != nil {
		return nil, err
	}
	if e.size > c.limit {
		c.bypassed.Add(1)
		return nil, fmt.Errorf("%s: %w: %d bytes, more than the cache's %d", name, ErrBypass, e.size, c.limit)
	}
	data := filepath.Join(c.dir, "data", e.name)
	lockPath := filepath.Join(c.dir, "locks", e.key)
	var fetched int64
	fills := 0
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		// A shared lock: no process removes the data while it is held; one that fills holds
		// the lock exclusively.
		l, err := tryLock(lockPath, shared)
		if err != nil {
			return nil, fmt.Errorf("%s: cache: %w", name, err)
		}
		if l != nil {
			f, err := os.Open(data)
			if err == nil {
				if fi, err := f.Stat(); err == nil && fi.Size() == e.size {
					now := time.Now()
					os.Chtimes(data, now, now) // the last use, for eviction
					if fetched == 0 {
						c.hits.Add(1)
						c.hitBytes.Add(e.size)
					}
					return &File{f: f, lock: l, name: name, path: data, size: e.size, fetched: fetched}, nil
				}
				f.Close()
			}
			unlock(l)
			// Missing (or damaged): fill it, unless another process is at it.
			l, err = tryLock(lockPath, exclusive)
			if err != nil {
				return nil, fmt.Errorf("%s: cache: %w", name, err)
			}
			if l != nil {
				if fi, err := os.Stat(data); err == nil && fi.Size() == e.size {
					unlock(l) // filled meanwhile
					continue
				}
				os.Remove(data)
				if fills == 2 {
					// Filled twice and removed twice: the cache is too busy to keep it.
					unlock(l)
					c.bypassed.Add(1)
					return nil, fmt.Errorf("%s: %w: removed as soon as filled", name, ErrBypass)
				}
				fills++
				fl, err := c.startFill(ctx, name, e, data, l)
				if err != nil {
					return nil, err
				}
				if early {
					r, err := os.Open(fl.tmp.Name())
					if err != nil {
						// The fill goes on; this open waits for it.
						<-fl.done
						fetched += fl.t.Fetched()
						if fl.lock != nil {
							unlock(fl.lock)
						}
						if fl.err != nil {
							return nil, fl.err
						}
						continue
					}
					return &File{f: r, name: name, path: data, size: e.size, fill: fl}, nil
				}
				<-fl.done
				fetched += fl.t.Fetched()
				if fl.err != nil {
					return nil, fl.err
				}
				// The fill's lock is now shared: the copy stays while it is open.
				f, err := os.Open(data)
				if err != nil {
					unlock(fl.lock)
					continue
				}
				return &File{f: f, lock: fl.lock, name: name, path: data, size: e.size, fetched: fetched}, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: cache: %w", name, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// entry returns the object's place in the cache: by its manifest entry, or else by its URL,
// size and entity tag as the service gives them now.
func (c *Cache) entry(ctx context.Context, name string, want *Want) (entry, error) {
	u, _, _ := strings.Cut(name, "?")
	base := sanitize(path.Base(u))
	if want != nil && validSHA256(want.SHA256) && want.Size >= 0 {
		key := "sha256-" + strings.ToLower(want.SHA256)
		return entry{key: key, name: key + "-" + base, size: want.Size, want: want}, nil
	}
	a, err := storage.Stat(ctx, name)
	if err != nil {
		return entry{}, err
	}
	if a.ETag == "" {
		c.bypassed.Add(1)
		return entry{}, fmt.Errorf("%s: %w: the service gives no entity tag to know the object by", name, ErrBypass)
	}
	h := sha256.Sum256([]byte(name + "\x00" + strconv.FormatInt(a.Size, 10) + "\x00" + a.ETag))
	key := "obj-" + hex.EncodeToString(h[:20])
	return entry{key: key, name: key + "-" + base, size: a.Size, etag: a.ETag}, nil
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// sanitize keeps the characters of an object's base name that are safe in a file name, at
// most 100 of them: formats see the local copy's name (its extension) as the object's.
func sanitize(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[len(b)-100:]
	}
	return string(b)
}

// fill is an object being fetched into the cache, by this process, with the object's lock
// held exclusively.
type fill struct {
	c    *Cache
	ctx  context.Context
	name string
	e    entry
	data string
	tmp  *os.File
	w    *diskWriter
	t    *storage.Transfer
	done chan struct{} // closed when the fill has ended: err and lock are set
	err  error
	lock *os.File // the object's lock: exclusive while filling, shared after a fill that
	// succeeded (for the File that holds it), nil after one that failed

	pastMu sync.Mutex
	past   *storage.Object // the object read past the cache after trouble with the disk
}

// startFill starts fetching the object into the cache as the file data, with the object's
// lock l held exclusively, which the fill takes over. The bytes come in the background; the
// fill's done channel is closed when they are checked and in place, or the fill failed.
// Trouble with the local disk (full, read-only) is an error wrapping ErrBypass: the object
// is read from object storage instead.
func (c *Cache) startFill(ctx context.Context, name string, e entry, data string, l *os.File) (*fill, error) {
	// A temporary file of this object's is a fill whose process died: the object's lock,
	// which a filler holds, is ours.
	stale, _ := filepath.Glob(filepath.Join(c.dir, "tmp", e.key+".*"))
	var freed int64
	for _, p := range stale {
		if fi, err := os.Stat(p); err == nil && os.Remove(p) == nil {
			freed += fi.Size()
		}
	}
	if freed > 0 {
		c.release(freed)
	}
	tmp, err := c.reserve(ctx, name, e)
	if err != nil {
		unlock(l)
		return nil, err
	}
	fl := &fill{c: c, ctx: ctx, name: name, e: e, data: data, tmp: tmp, w: &diskWriter{f: tmp}, done: make(chan struct{}), lock: l}
	t, err := storage.StartDownload(ctx, name, fl.w, e.size)
	fl.t = t
	a := t.Attributes()
	switch {
	case err != nil && errors.Is(err, mlfeed.ErrTooLarge) && e.want != nil:
		err = fmt.Errorf("%s: %w: larger than its %d bytes", name, ErrChecksum, e.size)
	case err != nil:
	case e.want != nil && a.Size != e.size:
		err = fmt.Errorf("%s: %w: %d bytes, the manifest says %d", name, ErrChecksum, a.Size, e.size)
	case e.want == nil && (a.Size != e.size || a.ETag != e.etag && a.ETag != ""):
		err = fmt.Errorf("%s: %w: %d bytes with entity tag %s, then %d bytes with %s", name, storage.ErrChanged, e.size, e.etag, a.Size, a.ETag)
	}
	if err != nil {
		t.Cancel()
		c.fetched.Add(t.Fetched())
		fl.end(err)
		return nil, err
	}
	go fl.run()
	return fl, nil
}

// run follows the transfer to its end, hashing the bytes as they arrive where the object has
// a manifest entry, then checks the object and puts it in place.
func (fl *fill) run() {
	err := fl.check()
	fl.c.fetched.Add(fl.t.Fetched())
	fl.end(err)
}

func (fl *fill) check() error {
	name, e, tmp := fl.name, fl.e, fl.tmp
	if e.want != nil {
		h := sha256.New()
		buf := make([]byte, 1<<20)
		for off := int64(0); off < e.size; {
			n := min(int64(len(buf)), e.size-off)
			if err := fl.t.Follow(context.Background(), off, n); err != nil {
				break // the transfer's error, below
			}
			if _, err := tmp.ReadAt(buf[:n], off); err != nil {
				fl.t.Cancel()
				return fl.c.diskError(name, err)
			}
			h.Write(buf[:n])
			off += n
		}
		if err := fl.wait(); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(e.want.SHA256) {
			return fmt.Errorf("%s: %w: its SHA-256 is %s, the manifest's %s", name, ErrChecksum, got, e.want.SHA256)
		}
	} else if err := fl.wait(); err != nil {
		return err
	}
	// On disk before it has its name: a machine that stops leaves a whole object or none.
	if err := tmp.Sync(); err != nil {
		return fl.c.diskError(name, err)
	}
	if err := os.Rename(tmp.Name(), fl.data); err != nil {
		return fl.c.diskError(name, err)
	}
	return nil
}

// wait waits for the transfer and returns its error, the local disk's first.
func (fl *fill) wait() error {
	err := fl.t.Wait()
	if fl.w.failed() {
		return fl.c.diskError(fl.name, fl.w.error())
	}
	return err
}

// end records the fill's end: a fill that failed leaves nothing (its temporary file removed,
// its room released, the object's lock released); one that succeeded keeps the object's
// lock, shared, for the File that opened it.
func (fl *fill) end(err error) {
	if err != nil {
		// Removed and closed (which releases its lock) before the room is given back: on a
		// full disk, the file's blocks are what the count's new value is written into.
		os.Remove(fl.tmp.Name())
		fl.tmp.Close()
		fl.c.release(fl.e.size)
		unlock(fl.lock)
		fl.lock = nil
	} else {
		fl.c.fills.Add(1)
		// The fill's exclusive lock becomes shared: other processes may open the copy, none
		// removes it. (Where another process took the lock in between, the copy may be
		// removed, but this process's open file still reads it.)
		lockFD(fl.lock, shared)
		fl.tmp.Close() // also releases its lock
	}
	fl.err = err
	close(fl.done)
}

// diskTrouble reports whether the fill failed (or is failing) on the local disk.
func (fl *fill) diskTrouble() bool {
	select {
	case <-fl.done:
		return errors.Is(fl.err, ErrBypass)
	default:
		return fl.w.failed()
	}
}

// readPast reads from object storage, past the cache, after the fill failed on the local
// disk.
func (fl *fill) readPast(p []byte, off int64) (int, error) {
	fl.pastMu.Lock()
	if fl.past == nil {
		o, err := storage.Open(fl.ctx, fl.name)
		if err != nil {
			fl.pastMu.Unlock()
			return 0, err
		}
		fl.past = o
	}
	o := fl.past
	fl.pastMu.Unlock()
	return o.ReadAt(p, off)
}

// pastFetched returns the bytes read past the cache.
func (fl *fill) pastFetched() int64 {
	fl.pastMu.Lock()
	defer fl.pastMu.Unlock()
	if fl.past == nil {
		return 0
	}
	return fl.past.Fetched()
}

// closePast closes the object read past the cache, counting its bytes.
func (fl *fill) closePast() {
	fl.pastMu.Lock()
	defer fl.pastMu.Unlock()
	if fl.past != nil {
		fl.c.AddBypassed(fl.past.Fetched())
		fl.past.Close()
		fl.past = nil
	}
}

// diskWriter writes a fill's bytes to its temporary file, keeping the first error (of the
// local disk, not of the network).
type diskWriter struct {
	f   *os.File
	mu  sync.Mutex
	err error
}

func (w *diskWriter) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.f.WriteAt(p, off)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

func (w *diskWriter) failed() bool { return w.error() != nil }

func (w *diskWriter) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// diskError is the error for trouble with the cache's disk while filling name: the object is
// read past the cache.
func (c *Cache) diskError(name string, err error) error {
	c.bypassed.Add(1)
	return fmt.Errorf("%s: %w: the cache's disk: %w", name, ErrBypass, err)
}

// The file DIR/usage holds the bytes the cache holds and has reserved for fills in progress,
// as a decimal number, read and written under the cache's lock: a fill checks it, not the
// directory, unless the object does not fit, when the directory is scanned (which corrects
// the count, for fills a killed process left) and the least recently used objects removed.

// readUsage returns the count in DIR/usage, or -1 where there is none to trust.
func (c *Cache) readUsage() int64 {
	b, err := os.ReadFile(filepath.Join(c.dir, "usage"))
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// writeUsage replaces DIR/usage (a rename, so that no reader sees half of it).
//
// A count that cannot be written (a full disk) is removed, so that the next fill scans the
// directory rather than trust an old one.
func (c *Cache) writeUsage(n int64) error {
	p := filepath.Join(c.dir, "usage")
	tmp := p + ".new"
	err := os.WriteFile(tmp, []byte(strconv.FormatInt(n, 10)+"\n"), 0o644)
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(p)
	}
	return err
}

// release takes back the room reserved for a fill that failed.
func (c *Cache) release(size int64) {
	g, err := lockWait(context.Background(), filepath.Join(c.dir, "lock"))
	if err != nil {
		return
	}
	defer unlock(g)
	if used := c.readUsage(); used >= 0 {
		c.writeUsage(max(used-size, 0))
	}
}

// reserve makes room for the entry, removing the least recently used objects not open if
// need be, and creates its temporary file, at the entry's full size and locked while it is
// filled (a process that dies leaves it unlocked, for the next scan to remove). Its error
// wraps ErrBypass where there is no room.
func (c *Cache) reserve(ctx context.Context, name string, e entry) (*os.File, error) {
	g, err := lockWait(ctx, filepath.Join(c.dir, "lock"))
	if err != nil {
		return nil, c.diskError(name, err)
	}
	defer unlock(g)
	used := c.readUsage()
	if used < 0 || used+e.size > c.limit {
		if used, err = c.scan(e.size); err != nil {
			return nil, c.diskError(name, err)
		}
	}
	if used+e.size > c.limit {
		c.bypassed.Add(1)
		return nil, fmt.Errorf("%s: %w: no room for %d bytes beside the %d bytes open in processes (limit %d)", name, ErrBypass, e.size, used, c.limit)
	}
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), e.key+".*")
	if err != nil {
		return nil, c.diskError(name, err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, c.diskError(name, err)
	}
	// Readable by the node's other users, as the directory is.
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := lockFD(f, exclusive); err != nil {
		return fail(err)
	}
	if err := f.Truncate(e.size); err != nil {
		return fail(err)
	}
	if err := c.writeUsage(used + e.size); err != nil {
		return fail(err)
	}
	return f, nil
}

// scan counts what the cache holds from its directory, removing the temporary files of
// fills whose process died, then removes the least recently used objects that no process has
// open until size more bytes fit (or none is left to remove). It returns the bytes held. The
// caller holds the cache's lock.
func (c *Cache) scan(size int64) (int64, error) {
	used := int64(0)
	tmpDir := filepath.Join(c.dir, "tmp")
	tmps, err := os.ReadDir(tmpDir)
	if err != nil {
		return 0, err
	}
	for _, t := range tmps {
		p := filepath.Join(tmpDir, t.Name())
		fi, err := t.Info()
		if err != nil {
			continue
		}
		l, err := tryLockFile(p, exclusive)
		if errors.Is(err, os.ErrNotExist) {
			continue // renamed into data/ meanwhile
		}
		if err == nil && l != nil {
			// Left by a process that died while filling.
			os.Remove(p)
			unlock(l)
			continue
		}
		used += fi.Size()
	}
	type obj struct {
		name  string
		size  int64
		mtime time.Time
	}
	var objs []obj
	dataDir := filepath.Join(c.dir, "data")
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return 0, err
	}
	for _, d := range ents {
		fi, err := d.Info()
		if err != nil {
			continue
		}
		objs = append(objs, obj{d.Name(), fi.Size(), fi.ModTime()})
		used += fi.Size()
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].mtime.Before(objs[j].mtime) })
	for _, o := range objs {
		if used+size <= c.limit {
			break
		}
		key := keyOf(o.name)
		lp := filepath.Join(c.dir, "locks", key)
		l, err := tryLock(lp, exclusive)
		if err != nil || l == nil {
			continue // open in some process
		}
		if os.Remove(filepath.Join(dataDir, o.name)) == nil {
			used -= o.size
		}
		os.Remove(lp) // while locked: processes that opened it see it gone and retry
		unlock(l)
	}
	return used, nil
}

// keyOf returns the key of a data file's name (the key, "-", the object's base name).
func keyOf(name string) string {
	// Keys are "sha256-" + 64 hex digits or "obj-" + 40.
	switch {
	case strings.HasPrefix(name, "sha256-") && len(name) >= 7+64:
		return name[:7+64]
	case strings.HasPrefix(name, "obj-") && len(name) >= 4+40:
		return name[:4+40]
	}
	return name
}
