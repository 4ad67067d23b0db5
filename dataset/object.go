package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/shard"
	"github.com/mlfeed/mlfeed/storage"
	"github.com/mlfeed/mlfeed/storage/cache"
)

// cacheKey is the context key of the node cache for object-storage inputs.
type cacheKey struct{}

// WithCache returns ctx with the node cache c for the object-storage inputs opened under it
// (by Spec.Open, or OpenFiles with ctx as format.Options.Context), in place of the one the
// environment names (cache.Env); nil turns the cache off.
func WithCache(ctx context.Context, c *cache.Cache) context.Context {
	return context.WithValue(ctx, cacheKey{}, c)
}

// cacheOf returns the node cache for objects opened under ctx: the one a Spec's Cache gave,
// else the one the environment names (cache.Env), or nil.
func cacheOf(ctx context.Context) (*cache.Cache, error) {
	if c, ok := ctx.Value(cacheKey{}).(*cache.Cache); ok {
		return c, nil
	}
	c, err := cache.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return c, nil
}

// openURL opens an object-storage argument (s3://, gs://, azblob://): one object, or a prefix
// ending in "/" holding a data set of shards (its manifest when it has one, else every object
// directly under it, in name order).
func openURL(ctx context.Context, name, formatName string, opts *format.Options) (mlfeed.Source, error) {
	base, query, _ := strings.Cut(name, "?")
	withQuery := func(u string) string {
		if query != "" {
			return u + "?" + query
		}
		return u
	}
	if !strings.HasSuffix(base, "/") {
		return openObject(ctx, name, formatName, opts, nil)
	}
	var urls []string
	var wants []*cache.Want
	mURL := withQuery(base + shard.ManifestName)
	m, err := readManifest(ctx, mURL)
	switch {
	case err == nil:
		if formatName == "" {
			formatName = m.Format
		}
		for _, e := range m.Shards {
			urls = append(urls, withQuery(base+path.Clean(e.Path)))
			wants = append(wants, &cache.Want{Size: e.Bytes, SHA256: e.SHA256})
		}
	case errors.Is(err, os.ErrNotExist):
		all, err := storage.List(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, u := range all {
			b, _, _ := strings.Cut(u, "?")
			n := path.Base(b)
			if strings.HasPrefix(n, "mlfeed.task-") {
				return nil, fmt.Errorf("%s: %w: it holds the manifests of a conversion's tasks (%s) but no %s: run `mlfeed merge` once every task is done", name, shard.ErrManifest, n, shard.ManifestName)
			}
			if !strings.HasPrefix(n, ".") {
				urls = append(urls, u)
			}
		}
		if len(urls) == 0 {
			return nil, fmt.Errorf("%s: %w: no objects under the prefix", name, shard.ErrManifest)
		}
	default:
		return nil, err
	}
	want := map[string]*cache.Want{}
	for i, w := range wants {
		want[urls[i]] = w
	}
	return shard.NewSource(urls, selectingManifest(m, formatName, opts), func(u string) (mlfeed.Source, error) {
		return openObject(ctx, u, formatName, opts, want[u])
	})
}

// readManifest reads a data set's manifest from object storage (through the node cache when
// there is one).
func readManifest(ctx context.Context, name string) (*shard.Manifest, error) {
	r, size, closeFn, err := openBytes(ctx, name)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return shard.DecodeManifest(name, io.NewSectionReader(r, 0, size))
}

// openBytes opens the object name for reading: from the node cache when there is one and it
// takes the object, else from object storage.
func openBytes(ctx context.Context, name string) (io.ReaderAt, int64, func() error, error) {
	c, err := cacheOf(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	if c != nil {
		f, err := c.Open(ctx, name, nil)
		if err == nil {
			return f, f.Size(), f.Close, nil
		}
		if !errors.Is(err, cache.ErrBypass) {
			return nil, 0, nil, err
		}
	}
	obj, err := storage.Open(ctx, name)
	if err != nil {
		return nil, 0, nil, err
	}
	return obj, obj.Size(), func() error {
		if c != nil {
			c.AddBypassed(obj.Fetched())
		}
		return obj.Close()
	}, nil
}

// openObject opens one object: from the node cache when there is one (want is the object's
// manifest entry, or nil), else through the format's OpenReader, reading only the byte ranges
// it needs, or else copied to a temporary file that is removed on Close.
func openObject(ctx context.Context, name, formatName string, opts *format.Options, want *cache.Want) (mlfeed.Source, error) {
	c, err := cacheOf(ctx)
	if err != nil {
		return nil, err
	}
	if c != nil {
		// Where this process fills the object, the format reads it as its bytes arrive.
		f, err := c.OpenFilling(ctx, name, want)
		if err == nil {
			src, err := openCached(f, formatName, opts)
			if err == nil || !errors.Is(err, cache.ErrBypass) {
				return src, err
			}
			// The fill failed on the cache's disk: read past the cache.
		} else if !errors.Is(err, cache.ErrBypass) {
			return nil, err
		}
	}
	obj, err := storage.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	closeObj := obj.Close
	if c != nil {
		// Read past the cache: count what it fetches.
		closeObj = func() error {
			c.AddBypassed(obj.Fetched())
			return obj.Close()
		}
	}
	ft, err := objectFormat(obj, obj.Size(), name, formatName)
	if err != nil {
		closeObj()
		return nil, err
	}
	if ft.OpenReader != nil {
		src, err := ft.OpenReader(obj, obj.Size(), name, opts)
		if err != nil {
			closeObj()
			return nil, err
		}
		return &remoteSource{Source: src, close: closeObj, obj: obj}, nil
	}
	b, _, _ := strings.Cut(name, "?")
	f, err := os.CreateTemp("", "mlfeed-object-*-"+path.Base(b))
	if err != nil {
		obj.Close()
		return nil, err
	}
	tmp := f.Name()
	_, err = io.CopyBuffer(f, io.NewSectionReader(obj, 0, obj.Size()), make([]byte, 4<<20))
	closeObj()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("%s: copying to %s: %w", name, tmp, err)
	}
	src, err := ft.Open(tmp, opts)
	if err != nil {
		os.Remove(tmp)
		return nil, renameInError(err, tmp, name)
	}
	return &remoteSource{Source: src, close: func() error { return os.Remove(tmp) }, tmp: tmp, name: name}, nil
}

// openCached opens an object's copy in the node cache: as a local file, or, while this
// process fills it, through the format's OpenReader over the bytes as they arrive (a format
// without one waits for the fill); errors name the object.
func openCached(f *cache.File, formatName string, opts *format.Options) (mlfeed.Source, error) {
	name := f.Name()
	ft, err := objectFormat(f, f.Size(), name, formatName)
	if err != nil {
		f.Close()
		return nil, err
	}
	if f.Filling() && ft.OpenReader != nil {
		src, err := ft.OpenReader(f, f.Size(), name, opts)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &cachedSource{Source: src, f: f, seen: make([]bool, mlfeed.NumChunks(src)), left: mlfeed.NumChunks(src)}, nil
	}
	if err := f.Wait(); err != nil {
		f.Close()
		return nil, err
	}
	src, err := ft.Open(f.Path(), opts)
	if err != nil {
		f.Close()
		return nil, renameInError(err, f.Path(), name)
	}
	return &cachedSource{Source: src, f: f}, nil
}

// cachedSource is the source of an object read from its copy in the node cache: the
// format's source over a local file (or over the copy being filled), passed through whole
// (the engine's raw path included), which releases the copy on Close.
//
// Over a copy being filled, the bytes are checked against the manifest only once they have
// all arrived: the chunk read that completes the first reading of every chunk waits for the
// check, so that a sweep over an object whose bytes are not the manifest's fails (with
// cache.ErrChecksum) before it ends.
type cachedSource struct {
	mlfeed.Source
	f *cache.File

	mu   sync.Mutex
	seen []bool // while filling: whether each chunk has been read
	left int    // chunks not read yet
}

func (c *cachedSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	ch, err := c.Source.ReadChunk(ctx, i)
	return c.read(ch, i, err)
}

func (c *cachedSource) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	ch, err := c.Source.ReadChunkReuse(ctx, i, prev)
	return c.read(ch, i, err)
}

// read ends a chunk read: the error named by the object, and, while the copy is filled,
// the check of the object's bytes when every chunk has been read.
func (c *cachedSource) read(ch *mlfeed.Chunk, i int, err error) (*mlfeed.Chunk, error) {
	if err != nil {
		return ch, renameInError(err, c.f.Path(), c.f.Name())
	}
	if c.seen == nil || i < 0 || i >= len(c.seen) {
		return ch, nil
	}
	c.mu.Lock()
	last := false
	if !c.seen[i] {
		c.seen[i] = true
		c.left--
		last = c.left == 0
	}
	c.mu.Unlock()
	if last {
		if err := c.f.Wait(); err != nil && !errors.Is(err, cache.ErrBypass) {
			return nil, err
		}
	}
	return ch, nil
}

// RawSamples passes on where the format describes its samples (mlfeed.RawSampler).
func (c *cachedSource) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if rs, is := c.Source.(mlfeed.RawSampler); is {
		return rs.RawSamples(i, stream)
	}
	return nil, 0, 0, 0, false
}

// NumChunks passes on the format's count (mlfeed.NumChunks).
func (c *cachedSource) NumChunks() int { return mlfeed.NumChunks(c.Source) }

// Details passes the format's details through, with the object's size, the bytes fetched
// to open it (0 when it was in the cache) and "cached".
func (c *cachedSource) Details() map[string]any {
	d := map[string]any{}
	if s, ok := c.Source.(mlfeed.Detailer); ok {
		for k, v := range s.Details() {
			d[k] = v
		}
	}
	d["object_bytes"] = c.f.Size()
	d["fetched_bytes"] = c.f.Fetched()
	d["cached"] = true
	return d
}

func (c *cachedSource) Close() error {
	err := c.Source.Close()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// objectFormat returns the format named, or the one an object's first bytes or name show.
func objectFormat(r io.ReaderAt, size int64, name, formatName string) (*format.Format, error) {
	if formatName != "" {
		return lookup(formatName)
	}
	head := make([]byte, min(512, size))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	b, _, _ := strings.Cut(name, "?")
	return format.DetectHead(head, r, size, b)
}

// renameInError makes an error about the temporary copy tmp name the object instead.
func renameInError(err error, tmp, name string) error {
	var pe *mlfeed.PosError
	if errors.As(err, &pe) && pe.File == tmp {
		pe.File = name
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// remoteSource is a source over an object, with what its Close must release besides.
type remoteSource struct {
	mlfeed.Source
	close     func() error
	obj       *storage.Object // the object, when read by byte ranges
	tmp, name string          // the temporary copy and the object, when read from a copy
}

// use marks a read made for a caller whose context is ctx (storage.Object.Use): when every
// caller reading has its context done (a minibatch reader closed while it reads ahead), the
// object's requests in flight are cancelled rather than waited for.
func (r *remoteSource) use(ctx context.Context) func() {
	if r.obj == nil {
		return func() {}
	}
	return r.obj.Use(ctx)
}

func (r *remoteSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	defer r.use(ctx)()
	c, err := r.Source.ReadChunk(ctx, i)
	if err != nil && r.tmp != "" {
		err = renameInError(err, r.tmp, r.name)
	}
	return c, err
}

func (r *remoteSource) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	defer r.use(ctx)()
	c, err := r.Source.ReadChunkReuse(ctx, i, prev)
	if err != nil && r.tmp != "" {
		err = renameInError(err, r.tmp, r.name)
	}
	return c, err
}

func (r *remoteSource) SequenceLengths(i int) ([]int64, error) {
	defer r.use(context.Background())()
	return r.Source.SequenceLengths(i)
}

// Details passes the format's details through, with the object's size and the bytes fetched
// so far when it is read by byte ranges.
func (r *remoteSource) Details() map[string]any {
	d := map[string]any{}
	defer r.use(context.Background())()
	if s, ok := r.Source.(mlfeed.Detailer); ok {
		for k, v := range s.Details() {
			d[k] = v
		}
	}
	if r.obj != nil {
		d["object_bytes"] = r.obj.Size()
		d["fetched_bytes"] = r.obj.Fetched()
	}
	return d
}

func (r *remoteSource) Close() error {
	err := r.Source.Close()
	if cerr := r.close(); err == nil {
		err = cerr
	}
	return err
}

// objectFormatName names the format of an object or of the data set under a prefix (its
// manifest's, else its first object's), or "".
func objectFormatName(ctx context.Context, name string) string {
	base, query, _ := strings.Cut(name, "?")
	if strings.HasSuffix(base, "/") {
		u := base + shard.ManifestName
		if query != "" {
			u += "?" + query
		}
		if m, err := readManifest(ctx, u); err == nil {
			return m.Format
		}
		all, err := storage.List(ctx, name)
		if err != nil || len(all) == 0 {
			return ""
		}
		name = all[0]
	}
	r, size, closeFn, err := openBytes(ctx, name)
	if err != nil {
		return ""
	}
	defer closeFn()
	ft, err := objectFormat(r, size, name, "")
	if err != nil {
		return ""
	}
	return ft.Name
}

// ObjectFiles calls fn with a local file holding each object that the object-storage
// argument name names (an object, or a prefix's shards: its manifest's, else every object
// directly under it), one at a time, for a caller that checks files by path (mlfeed
// validate). The file is the object's copy in the node cache (ctx's, else the one
// MLFEED_CACHE names), else a temporary copy removed when fn returns; a shard is checked
// against its manifest entry's size and SHA-256 (an error wrapping cache.ErrChecksum). fn
// gets the object's URL, the file's path, the manifest's format name ("" without one) and
// the error of fetching it (then no path), and goes on to the next object unless it returns
// an error. An error of ObjectFiles itself means the argument could not be resolved.
func ObjectFiles(ctx context.Context, name string, fn func(url, path, formatName string, err error) error) error {
	base, query, _ := strings.Cut(name, "?")
	urls, wants, formatName := []string{name}, []*cache.Want{nil}, ""
	if strings.HasSuffix(base, "/") {
		withQuery := func(u string) string {
			if query != "" {
				return u + "?" + query
			}
			return u
		}
		urls, wants = nil, nil
		m, err := readManifest(ctx, withQuery(base+shard.ManifestName))
		switch {
		case err == nil:
			formatName = m.Format
			for _, e := range m.Shards {
				urls = append(urls, withQuery(base+path.Clean(e.Path)))
				wants = append(wants, &cache.Want{Size: e.Bytes, SHA256: e.SHA256})
			}
		case errors.Is(err, os.ErrNotExist):
			all, err := storage.List(ctx, name)
			if err != nil {
				return err
			}
			for _, u := range all {
				b, _, _ := strings.Cut(u, "?")
				if n := path.Base(b); !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "mlfeed.task-") {
					urls = append(urls, u)
					wants = append(wants, nil)
				}
			}
		default:
			return err
		}
	}
	c, err := cacheOf(ctx)
	if err != nil {
		return err
	}
	for i, u := range urls {
		p, release, err := objectFile(ctx, c, u, wants[i])
		if err != nil {
			if err := fn(u, "", formatName, err); err != nil {
				return err
			}
			continue
		}
		err = fn(u, p, formatName, nil)
		release()
		if err != nil {
			return err
		}
	}
	return nil
}

// objectFile returns a local file holding the object u: its copy in the node cache c, else a
// temporary copy (checked against want's SHA-256, as the cache checks), and what releases it.
func objectFile(ctx context.Context, c *cache.Cache, u string, want *cache.Want) (string, func(), error) {
	if c != nil {
		f, err := c.Open(ctx, u, want)
		if err == nil {
			return f.Path(), func() { f.Close() }, nil
		}
		if !errors.Is(err, cache.ErrBypass) {
			return "", nil, err
		}
	}
	b, _, _ := strings.Cut(u, "?")
	f, err := os.CreateTemp("", "mlfeed-object-*-"+path.Base(b))
	if err != nil {
		return "", nil, err
	}
	tmp := f.Name()
	release := func() { os.Remove(tmp) }
	h := sha256.New()
	a, n, err := storage.Download(ctx, u, f, 0)
	if c != nil {
		c.AddBypassed(n)
	}
	if err == nil && want != nil && want.SHA256 != "" {
		if a.Size != want.Size {
			err = fmt.Errorf("%s: %w: %d bytes, the manifest says %d", u, cache.ErrChecksum, a.Size, want.Size)
		} else if _, err = io.Copy(h, io.NewSectionReader(f, 0, a.Size)); err == nil {
			if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want.SHA256) {
				err = fmt.Errorf("%s: %w: its SHA-256 is %s, the manifest's %s", u, cache.ErrChecksum, got, want.SHA256)
			}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		release()
		return "", nil, err
	}
	return tmp, release, nil
}
