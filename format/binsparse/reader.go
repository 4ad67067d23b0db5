package binsparse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
)

// arrayInfo describes one stored array.
type arrayInfo struct {
	Type     mlfeed.ElemType // stored element type (Invalid: not a number)
	Len      int64           // number of elements
	Rank     int             // number of dimensions
	Filtered bool            // compressed, so its length may exceed the file's size
	Details  string          // layout and filters, for info
}

// container is where a file's matrices live: HDF5 or NPZ.
type container interface {
	descriptor(group string) ([]byte, bool, error)
	// matrices returns the groups that may hold a descriptor, the root first
	matrices() ([]string, error)
	array(group, name string) (arrayInfo, bool, error)
	read(ctx context.Context, group, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error)
	close() error
}

// File is an open Binsparse file: an HDF5 or NPZ container holding one or more matrices.
type File struct {
	name string
	size int64
	c    container
}

// isNPZ reports whether name is an NPZ container (by its extension, or by its zip magic).
func isNPZ(name string) bool {
	l := strings.ToLower(name)
	if strings.HasSuffix(l, ".npz") {
		return true
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := f.Read(head)
	return n == 4 && string(head) == "PK\x03\x04"
}

// OpenFile opens the Binsparse file name (HDF5, or NPZ by its .npz extension or zip magic).
// A suffix ":/group/path" after the file name is ignored here; see ReadFile.
func OpenFile(name string) (*File, error) {
	file, _ := format.SplitPath(name)
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	f := &File{name: file, size: st.Size()}
	if isNPZ(file) {
		f.c, err = openNPZ(file)
	} else {
		var hf *h5.File
		if hf, err = h5.Open(file); err == nil {
			f.c = &h5container{hf}
		}
	}
	if err != nil {
		return nil, named(file, err)
	}
	return f, nil
}

// Close closes the file.
func (f *File) Close() error { return f.c.close() }

// Name returns the file's name.
func (f *File) Name() string { return f.name }

// Matrices returns the paths of the groups that hold a Binsparse descriptor, the root ("/")
// first.
func (f *File) Matrices() ([]string, error) {
	gs, err := f.c.matrices()
	if err != nil {
		return nil, named(f.name, err)
	}
	var out []string
	for _, g := range gs {
		if _, ok, err := f.c.descriptor(g); err != nil {
			return nil, named(f.name, err)
		} else if ok {
			out = append(out, g)
		}
	}
	return out, nil
}

// where names a group of the file for messages: "file" or "file:/group".
func (f *File) where(group string) string {
	if group == "" || group == "/" {
		return f.name
	}
	return f.name + ":" + group
}

// Descriptor reads and parses the descriptor of the matrix in group ("/" or "" for the root).
func (f *File) Descriptor(group string) (*Descriptor, error) {
	raw, ok, err := f.c.descriptor(group)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.where(group), err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w: no Binsparse descriptor (attribute \"binsparse\")", f.where(group), ErrFormat)
	}
	d, err := ParseDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.where(group), err)
	}
	return d, nil
}

// ReadMatrix reads the matrix in group and validates it. Unsorted (but not duplicate) indices
// are accepted here; Matrix.Validate reports them.
func (f *File) ReadMatrix(group string) (*Matrix, error) {
	return f.ReadMatrixContext(context.Background(), group)
}

// ReadMatrixContext is ReadMatrix with the arrays' decoding spread over the threads of the
// scheduler ctx carries (internal/sched), as the command line's scheduler does.
func (f *File) ReadMatrixContext(ctx context.Context, group string) (*Matrix, error) {
	d, err := f.Descriptor(group)
	if err != nil {
		return nil, err
	}
	m := &Matrix{Descriptor: *d, Arrays: map[string]mlfeed.Buffer{}}
	for _, name := range d.Arrays() {
		b, err := f.readArray(ctx, group, name, d.DataTypes[name])
		if err != nil {
			return nil, err
		}
		m.Arrays[name] = b
	}
	n, err := m.checkContext(ctx, func(error) bool { return true })
	if err != nil {
		var ae *ArrayError
		if errors.As(err, &ae) {
			ae.File = f.where(group)
			return nil, ae
		}
		return nil, fmt.Errorf("%s: %w", f.where(group), err)
	}
	if m.Descriptor.NumberOfStoredValues < 0 {
		m.Descriptor.NumberOfStoredValues = n
	}
	return m, nil
}

// readArray reads one array, checking its stored type and size against the descriptor and
// the file before allocating.
func (f *File) readArray(ctx context.Context, group, name string, dt DataType) (mlfeed.Buffer, error) {
	info, err := f.checkArray(group, name, dt)
	if err != nil {
		return mlfeed.Buffer{}, err
	}
	_, per := storage(dt.Type)
	return f.readRange(ctx, group, name, dt, info, 0, info.Len/int64(per))
}

// checkArray returns the stored array's facts after checking its stored type against dt and
// its size against the file's.
func (f *File) checkArray(group, name string, dt DataType) (arrayInfo, error) {
	where := f.where(group)
	info, ok, err := f.c.array(group, name)
	if err != nil {
		return info, &ArrayError{File: where, Array: name, Index: -1, Err: err}
	}
	if !ok {
		return info, &ArrayError{File: where, Array: name, Index: -1, Err: fmt.Errorf("%w: the descriptor lists it but the file has no such array", ErrFormat)}
	}
	aerr := func(format string, args ...any) error {
		return &ArrayError{File: where, Array: name, Index: -1, Err: fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)}
	}
	_, per := storage(dt.Type)
	switch {
	case info.Rank > 1:
		return info, aerr("has %d dimensions; Binsparse arrays have one", info.Rank)
	case info.Type == mlfeed.Invalid:
		return info, aerr("is not stored as integers or floats")
	case dt.Type == mlfeed.Bool:
		if info.Type != mlfeed.Int8 && info.Type != mlfeed.Uint8 {
			return info, aerr("bint8 stored as %s; want int8 or uint8", info.Type)
		}
	case per == 2:
		if !info.Type.IsFloat() {
			return info, aerr("%s stored as %s", dt, info.Type)
		}
		if info.Len%2 != 0 {
			return info, aerr("complex array has an odd number (%d) of floats", info.Len)
		}
	case dt.Type.IsInteger() != info.Type.IsInteger():
		return info, aerr("stored as %s, descriptor says %s", info.Type, dt)
	}
	limit := f.size
	if info.Filtered {
		limit = f.size*1100 + 1<<20
	}
	if info.Len*int64(info.Type.Size()) > limit {
		return info, &ArrayError{File: where, Array: name, Index: -1,
			Err: fmt.Errorf("%w: %d elements of %s are more than a %d-byte file can hold", ErrTooLarge, info.Len, info.Type, f.size)}
	}
	return info, nil
}

// readRange reads elements [off, off+n) of an array checked by checkArray (complex elements
// count as one) and returns them as dt's type.
func (f *File) readRange(ctx context.Context, group, name string, dt DataType, info arrayInfo, off, n int64) (mlfeed.Buffer, error) {
	st, per := storage(dt.Type)
	b, err := f.c.read(ctx, group, name, info.Type, off*int64(per), n*int64(per), info.Len)
	if err != nil {
		return mlfeed.Buffer{}, &ArrayError{File: f.where(group), Array: name, Index: -1, Err: err}
	}
	if want := st; want != info.Type && dt.Type != mlfeed.Bool {
		c, err := mlfeed.ConvertBuffer(b, want)
		if err != nil {
			return mlfeed.Buffer{}, &ArrayError{File: f.where(group), Array: name, Index: -1,
				Err: fmt.Errorf("%w: stored as %s, descriptor says %s: %v", ErrFormat, info.Type, dt, err)}
		}
		b = c
	}
	b.Type = dt.Type // bint8 bytes become Bool, float pairs become complex
	return b, nil
}

// ReadFile reads the matrix at name: "file.bsp.h5" (the root's matrix, or the file's only
// matrix) or "file.bsp.h5:/group/name".
func ReadFile(name string) (*Matrix, error) {
	return ReadFileContext(context.Background(), name)
}

// ReadFileContext is ReadFile with the decoding spread over the threads of the scheduler ctx
// carries (internal/sched).
func ReadFileContext(ctx context.Context, name string) (*Matrix, error) {
	f, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := f.pick(name)
	if err != nil {
		return nil, err
	}
	return f.ReadMatrixContext(ctx, g)
}

// pick returns the group name addresses: its ":/group" suffix, else the root if it holds a
// matrix, else the file's only matrix.
func (f *File) pick(name string) (string, error) {
	if _, inner := format.SplitPath(name); inner != "" {
		return inner, nil
	}
	gs, err := f.Matrices()
	if err != nil {
		return "", err
	}
	switch {
	case len(gs) == 0:
		return "", fmt.Errorf("%s: %w: no Binsparse descriptor in the file", f.name, ErrFormat)
	case gs[0] == "/" || len(gs) == 1:
		return gs[0], nil
	}
	return "", fmt.Errorf("%s: %w: the file holds %d matrices (%s); name one as %s:/group", f.name, ErrFormat, len(gs), strings.Join(gs, ", "), f.name)
}

// h5container is the HDF5 container.
type h5container struct{ f *h5.File }

func (c *h5container) descriptor(group string) ([]byte, bool, error) {
	s, ok, err := c.f.Attr(group, "binsparse")
	return []byte(s), ok, err
}

func (c *h5container) matrices() ([]string, error) {
	gs, err := c.f.GroupsWith("binsparse")
	rest := gs
	if len(gs) > 0 && gs[0] == "/" {
		rest = gs[1:]
	}
	sort.Strings(rest)
	return gs, err
}

func (c *h5container) array(group, name string) (arrayInfo, bool, error) {
	in, ok, err := c.f.Dataset(group, name)
	if !ok || err != nil {
		return arrayInfo{}, ok, err
	}
	d := in.Layout
	if in.Layout == "chunked" {
		d = fmt.Sprintf("chunked(%d)", in.Chunk)
	}
	if len(in.Filters) > 0 {
		d += "+" + strings.Join(in.Filters, "+")
	}
	return arrayInfo{Type: in.Type, Len: in.Len, Rank: in.Rank, Filtered: len(in.Filters) > 0, Details: d}, true, nil
}

func (c *h5container) read(ctx context.Context, group, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	return c.f.ReadContext(ctx, group, name, t, off, n, total)
}

func (c *h5container) close() error { return c.f.Close() }

// named prefixes err with the file name unless err is a positional error that names it.
func named(name string, err error) error {
	var pe *mlfeed.PosError
	if errors.As(err, &pe) && pe.File == name {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
