package h5

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/hdf5"
)

// File is an HDF5 file open for reading (Open) or writing (Create).
type File struct {
	name string
	r    *hdf5.File
	w    *hdf5.Writer
	mu   sync.Mutex
	sets map[string]*hdf5.Dataset // datasets opened so far, by path
}

// Open opens an HDF5 file for reading.
func Open(name string) (*File, error) {
	r, err := hdf5.Open(name)
	if err != nil {
		return nil, err
	}
	return &File{name: name, r: r, sets: map[string]*hdf5.Dataset{}}, nil
}

// NewFile reads the HDF5 file of size bytes in r; name is used in error messages only.
func NewFile(r io.ReaderAt, size int64, name string) (*File, error) {
	hf, err := hdf5.NewFile(r, size, name)
	if err != nil {
		return nil, err
	}
	return &File{name: name, r: hf, sets: map[string]*hdf5.Dataset{}}, nil
}

// Create creates (or truncates) an HDF5 file for writing.
func Create(name string) (*File, error) {
	w, err := hdf5.Create(name)
	if err != nil {
		return nil, err
	}
	return &File{name: name, w: w}, nil
}

// Close closes the file, writing the metadata of a file being written.
func (f *File) Close() error {
	if f.w != nil {
		return f.w.Close()
	}
	return f.r.Close()
}

var errWriteOnly = errors.New("binsparse: HDF5 file opened for writing")

// group returns the group at path.
func (f *File) group(path string) (*hdf5.Object, error) {
	if f.r == nil {
		return nil, errWriteOnly
	}
	o, err := f.r.Get(path)
	if err != nil {
		if errors.Is(err, hdf5.ErrNotFound) {
			return nil, fmt.Errorf("%w: no group %s in %s", mlfeed.ErrFormat, path, f.name)
		}
		return nil, err
	}
	if !o.IsGroup() {
		return nil, fmt.Errorf("%w: %s in %s is not a group", mlfeed.ErrFormat, path, f.name)
	}
	return o, nil
}

// Attr returns the string attribute name of the group at path; ok is false when the group
// has no such attribute.
func (f *File) Attr(path, name string) (value string, ok bool, err error) {
	g, err := f.group(path)
	if err != nil {
		return "", false, err
	}
	a, err := g.Attr(name)
	if errors.Is(err, hdf5.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if a.Type.Class != hdf5.String && a.Type.Class != hdf5.VarString {
		return "", false, fmt.Errorf("%w: attribute %s of %s is not a single string", mlfeed.ErrFormat, name, path)
	}
	s, err := a.String()
	if err != nil {
		return "", false, fmt.Errorf("%w: attribute %s of %s is not a single string: %v", mlfeed.ErrFormat, name, path, err)
	}
	return s, true, nil
}

// SetAttr writes value as a variable-length UTF-8 scalar string attribute of the group at
// path, creating the group (and its parents) if needed.
func (f *File) SetAttr(path, name, value string) error {
	if f.w == nil {
		return errors.New("binsparse: HDF5 file opened for reading")
	}
	return f.w.SetAttr(path, name, value)
}

// Groups returns the paths of every group, the root ("/") first, depth first with members in
// name order: each group once, under the first path met (as h5py's visititems), so that links
// back to an ancestor or a second link to a group take no more work (internal/hdf5's Walk).
// Soft links to groups are not listed (their targets are, under their own paths).
func (f *File) Groups() ([]string, error) {
	if f.r == nil {
		return nil, errWriteOnly
	}
	out := []string{"/"}
	err := f.r.Walk(func(e hdf5.WalkEntry) error {
		if e.Kind == hdf5.HardLink && !e.Seen && e.Object.IsGroup() {
			out = append(out, e.Path())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GroupsWith returns the paths of the groups that have an attribute attr, in the order of
// Groups (the root first), each group once. Only the paths of those groups are built, so that
// a chain of nested groups takes time and memory in proportion to the file.
func (f *File) GroupsWith(attr string) ([]string, error) {
	if f.r == nil {
		return nil, errWriteOnly
	}
	var out []string
	has := func(o *hdf5.Object) (bool, error) {
		_, err := o.Attr(attr)
		if errors.Is(err, hdf5.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	root, err := f.r.Root()
	if err != nil {
		return nil, err
	}
	if ok, err := has(root); err != nil {
		return nil, err
	} else if ok {
		out = append(out, "/")
	}
	err = f.r.Walk(func(e hdf5.WalkEntry) error {
		if e.Kind != hdf5.HardLink || e.Seen || !e.Object.IsGroup() {
			return nil
		}
		ok, err := has(e.Object)
		if ok {
			out = append(out, e.Path())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dataset returns the dataset name in the group at path; ok is false when there is none.
func (f *File) dataset(path, name string) (*hdf5.Dataset, bool, error) {
	key := strings.TrimSuffix(path, "/") + "/" + name
	f.mu.Lock()
	d, ok := f.sets[key]
	f.mu.Unlock()
	if ok {
		return d, true, nil
	}
	g, err := f.group(path)
	if err != nil {
		return nil, false, err
	}
	o, err := g.Child(name)
	if errors.Is(err, hdf5.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !o.IsDataset() {
		return nil, false, fmt.Errorf("%w: %s in %s is not a dataset", mlfeed.ErrFormat, name, path)
	}
	if d, err = o.Dataset(); err != nil {
		return nil, false, err
	}
	f.mu.Lock()
	f.sets[key] = d
	f.mu.Unlock()
	return d, true, nil
}

// Dataset describes the dataset name in the group at path; ok is false when there is none.
func (f *File) Dataset(path, name string) (info Info, ok bool, err error) {
	d, ok, err := f.dataset(path, name)
	if !ok || err != nil {
		return info, ok, err
	}
	info = Info{Type: d.Type.ElemType(), Len: int64(d.Len()), Rank: len(d.Dims), Layout: d.Layout(), Filters: d.Filters()}
	if c := d.Chunk(); len(c) > 0 {
		info.Chunk = int64(c[0])
	}
	return info, true, nil
}

// Read reads elements [off, off+n) of the one-dimensional dataset name in the group at path,
// which holds total elements of type t.
func (f *File) Read(path, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	return f.ReadContext(context.Background(), path, name, t, off, n, total)
}

// ReadContext is Read with the decoding spread over the threads of the scheduler ctx carries.
func (f *File) ReadContext(ctx context.Context, path, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	d, ok, err := f.dataset(path, name)
	if err == nil && !ok {
		err = fmt.Errorf("%w: no dataset %s in %s", mlfeed.ErrFormat, name, path)
	}
	if err != nil {
		return mlfeed.Buffer{}, err
	}
	if d.Type.ElemType() != t || int64(d.Len()) != total || off < 0 || n < 0 || off+n > total {
		return mlfeed.Buffer{}, fmt.Errorf("%w: cannot read elements [%d, %d) of %s (%d elements of %s) as %s", mlfeed.ErrFormat, off, off+n, name, d.Len(), d.Type, t)
	}
	if len(d.Dims) > 1 && (off != 0 || n != total) {
		return mlfeed.Buffer{}, fmt.Errorf("%w: partial read of the %d-dimensional dataset %s", mlfeed.ErrUnsupported, len(d.Dims), name)
	}
	buf := mlfeed.NewBuffer(t, int(n))
	if len(d.Dims) <= 1 {
		err = d.ReadRowsContext(ctx, buf.Bytes, uint64(off), uint64(n))
	} else {
		err = d.ReadRowsContext(ctx, buf.Bytes, 0, d.Rows())
	}
	return buf, err
}

// stored returns the HDF5 element type for t: Bool is stored as uint8.
func stored(t mlfeed.ElemType) mlfeed.ElemType {
	if t == mlfeed.Bool {
		return mlfeed.Uint8
	}
	return t
}

func (o WriteOptions) dataset(n int64) hdf5.DatasetOptions {
	if o.Chunk <= 0 || n == 0 {
		return hdf5.DatasetOptions{}
	}
	return hdf5.DatasetOptions{ChunkRows: uint64(min(o.Chunk, n)), Level: o.Level, Shuffle: o.Shuffle}
}

// Write creates the dataset name in the group at path (creating the group if needed) holding
// b's elements.
func (f *File) Write(path, name string, b mlfeed.Buffer, o WriteOptions) error {
	return f.WriteContext(context.Background(), path, name, b, o)
}

// WriteContext is Write with the chunks compressed in parallel on the threads of the scheduler
// ctx carries.
func (f *File) WriteContext(ctx context.Context, path, name string, b mlfeed.Buffer, o WriteOptions) error {
	if f.w == nil {
		return errors.New("binsparse: HDF5 file opened for reading")
	}
	n := int64(b.Len())
	return f.w.WriteDatasetContext(ctx, path, name, stored(b.Type), []uint64{uint64(n)}, b.Bytes, o.dataset(n))
}

// Appender writes a growable one-dimensional dataset, chunk by chunk.
type Appender struct {
	d *hdf5.DatasetWriter
	t mlfeed.ElemType
}

// Append creates the dataset name in the group at path, which grows by Appender.Write; it is
// always chunked (o.Chunk elements per chunk, 1 MiB worth if 0).
func (f *File) Append(path, name string, t mlfeed.ElemType, o WriteOptions) (*Appender, error) {
	if f.w == nil {
		return nil, errors.New("binsparse: HDF5 file opened for reading")
	}
	if o.Chunk <= 0 {
		o.Chunk = max(1, (1<<20)/int64(t.Size()))
	}
	d, err := f.w.CreateDataset(path, name, stored(t), nil, hdf5.DatasetOptions{ChunkRows: uint64(o.Chunk), Level: o.Level, Shuffle: o.Shuffle})
	if err != nil {
		return nil, err
	}
	return &Appender{d, t}, nil
}

// Write appends b's elements (little-endian), with whole chunks compressed in parallel on the
// threads of the scheduler ctx carries.
func (a *Appender) Write(ctx context.Context, b []byte) error { return a.d.WriteContext(ctx, b) }

// Len returns the number of elements written.
func (a *Appender) Len() int64 { return int64(a.d.Rows()) }

// Close does nothing: the file's Close stores the last chunk.
func (a *Appender) Close() error { return nil }
