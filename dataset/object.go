package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/shard"
	"github.com/mlfeed/mlfeed/storage"
)

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
		return openObject(ctx, name, formatName, opts)
	}
	var urls []string
	mURL := withQuery(base + shard.ManifestName)
	m, err := readManifest(ctx, mURL)
	switch {
	case err == nil:
		if formatName == "" {
			formatName = m.Format
		}
		for _, e := range m.Shards {
			urls = append(urls, withQuery(base+path.Clean(e.Path)))
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
	return shard.NewSource(urls, m, func(u string) (mlfeed.Source, error) {
		return openObject(ctx, u, formatName, opts)
	})
}

// readManifest reads a data set's manifest from object storage.
func readManifest(ctx context.Context, name string) (*shard.Manifest, error) {
	obj, err := storage.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return shard.DecodeManifest(name, io.NewSectionReader(obj, 0, obj.Size()))
}

// openObject opens one object: through the format's OpenReader, reading only the byte ranges
// it needs, or else copied to a temporary file that is removed on Close.
func openObject(ctx context.Context, name, formatName string, opts *format.Options) (mlfeed.Source, error) {
	obj, err := storage.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	ft, err := objectFormat(obj, formatName)
	if err != nil {
		obj.Close()
		return nil, err
	}
	if ft.OpenReader != nil {
		src, err := ft.OpenReader(obj, obj.Size(), name, opts)
		if err != nil {
			obj.Close()
			return nil, err
		}
		return &remoteSource{Source: src, close: obj.Close, obj: obj}, nil
	}
	b, _, _ := strings.Cut(name, "?")
	f, err := os.CreateTemp("", "mlfeed-object-*-"+path.Base(b))
	if err != nil {
		obj.Close()
		return nil, err
	}
	tmp := f.Name()
	_, err = io.CopyBuffer(f, io.NewSectionReader(obj, 0, obj.Size()), make([]byte, 4<<20))
	obj.Close()
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

// objectFormat returns the format named, or the one an object's first bytes or name show.
func objectFormat(obj *storage.Object, formatName string) (*format.Format, error) {
	if formatName != "" {
		return lookup(formatName)
	}
	head := make([]byte, min(512, obj.Size()))
	if _, err := obj.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	b, _, _ := strings.Cut(obj.Name(), "?")
	return format.DetectHead(head, obj, obj.Size(), b)
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
	obj, err := storage.Open(ctx, name)
	if err != nil {
		return ""
	}
	defer obj.Close()
	ft, err := objectFormat(obj, "")
	if err != nil {
		return ""
	}
	return ft.Name
}
