package binsparse

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
)

// DefaultLevel is the deflate level HDF5 arrays are written with when WriteOptions.Level is 0.
const DefaultLevel = 1

// NoCompression is the WriteOptions.Level that stores HDF5 arrays chunked but unfiltered (and
// NPZ entries uncompressed).
const NoCompression = -1

// WriteOptions control how matrices are written. The zero value writes each matrix in its
// own format, HDF5 arrays chunked (1 MiB chunks) and deflated at DefaultLevel, NPZ entries
// stored uncompressed (as numpy.savez does).
type WriteOptions struct {
	// Format, if set, converts every matrix to this format before writing.
	Format Format
	// Level is the deflate level from 1 to 9. 0 means DefaultLevel for HDF5 and no
	// compression for NPZ; NoCompression stores arrays unfiltered.
	Level int
	// Chunk is the HDF5 chunk length in bytes (rounded down to whole elements); 0 means 1 MiB,
	// as the C reference uses. Empty arrays are always stored contiguous.
	Chunk int64
	// Shuffle adds HDF5's shuffle filter before deflate.
	Shuffle bool
	// Minimize stores values in the smallest type that holds them exactly (float64 to
	// float32, integers to the smallest fitting type, complex128 to complex64) and index
	// arrays in the smallest unsigned type, as the C reference's mtx2bsp does.
	Minimize bool
	// Expand stores both triangles of symmetric, hermitian and skew-symmetric matrices.
	Expand bool
	// Context, if not nil, carries cancellation and the scheduler (internal/sched) whose
	// threads compress an HDF5 file's chunks in parallel: in WriteMatrix and in a Sink's
	// WriteChunk and Close. Nil means context.Background(): on the caller alone.
	Context context.Context
}

// Writer writes one or more matrices into a new Binsparse file.
type Writer struct {
	name string
	opts WriteOptions
	h    *h5.File
	zf   *os.File
	npz  *npzWriter
	n    int
}

// Create creates the Binsparse file name: NPZ when it ends in ".npz", HDF5 otherwise.
func Create(name string, opts *WriteOptions) (*Writer, error) {
	return create(name, strings.HasSuffix(strings.ToLower(name), ".npz"), opts)
}

func create(name string, npz bool, opts *WriteOptions) (*Writer, error) {
	w := &Writer{name: name}
	if opts != nil {
		w.opts = *opts
	}
	if w.opts.Level < NoCompression || w.opts.Level > 9 {
		return nil, fmt.Errorf("%w: deflate level %d is outside 1-9", ErrUnsupported, w.opts.Level)
	}
	if err := w.open(npz); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open(npz bool) error {
	if npz {
		f, err := os.Create(w.name)
		if err != nil {
			return err
		}
		w.zf = f
		w.npz = &npzWriter{z: zip.NewWriter(f), compress: w.opts.Level > 0}
		return nil
	}
	var err error
	w.h, err = h5.Create(w.name)
	return err
}

// WriteMatrix validates m and writes it into group ("/" or "" for the root; parent groups are
// created as needed). An NPZ file holds one matrix, at the root.
func (w *Writer) WriteMatrix(group string, m *Matrix) error {
	return w.WriteMatrixContext(w.context(), group, m)
}

// context returns WriteOptions.Context, or context.Background() when it is nil.
func (w *Writer) context() context.Context {
	if w.opts.Context != nil {
		return w.opts.Context
	}
	return context.Background()
}

// WriteMatrixContext is WriteMatrix with the arrays' chunks compressed in parallel on the
// threads of the scheduler ctx carries (internal/sched).
func (w *Writer) WriteMatrixContext(ctx context.Context, group string, m *Matrix) error {
	if group == "" {
		group = "/"
	}
	nnz, err := m.validate(ctx)
	if err != nil {
		return err
	}
	if w.opts.Format != "" || w.opts.Expand {
		f := w.opts.Format
		if f == "" {
			f = m.Descriptor.Format
		}
		if m, err = m.Convert(f, &ConvertOptions{Expand: w.opts.Expand}); err != nil {
			return err
		}
		nnz = m.Descriptor.NumberOfStoredValues
	}
	if w.opts.Minimize {
		if m, err = minimize(m); err != nil {
			return err
		}
	}
	d := m.Descriptor
	d.DataTypes = map[string]DataType{}
	for k, v := range m.Descriptor.DataTypes {
		d.DataTypes[k] = v
	}
	d.NumberOfStoredValues = nnz
	if d.Format != Custom && d.Custom != nil {
		d.Custom = nil
	}
	names := d.Arrays()
	if w.npz != nil {
		if w.n > 0 || group != "/" {
			return fmt.Errorf("%w: an NPZ file holds one matrix, at the root", ErrUnsupported)
		}
		d.User, d.Extra = nil, nil
		js, err := d.marshalInner()
		if err != nil {
			return err
		}
		if err := w.npz.writeDescriptor(js); err != nil {
			return err
		}
		for _, n := range names {
			if err := w.npz.writeArray(n, storedForm(m.Arrays[n], false)); err != nil {
				return err
			}
		}
		w.n++
		return nil
	}
	for _, n := range names {
		b := storedForm(m.Arrays[n], true)
		if err := w.h.WriteContext(ctx, group, n, b, w.h5Options(b.Type)); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
	}
	js, err := d.Marshal()
	if err != nil {
		return err
	}
	if err := w.h.SetAttr(group, "binsparse", string(js)); err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	w.n++
	return nil
}

// h5Options returns the HDF5 storage options for arrays of element type t.
func (w *Writer) h5Options(t mlfeed.ElemType) h5.WriteOptions {
	o := h5.WriteOptions{Level: w.opts.Level, Shuffle: w.opts.Shuffle}
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if o.Level < 0 {
		o.Level = 0
	}
	chunk := w.opts.Chunk
	if chunk <= 0 {
		chunk = 1 << 20
	}
	o.Chunk = max(1, chunk/int64(t.Size()))
	return o
}

// storedForm returns b as its stored element type: complex values as float pairs, bint8 as
// int8 in HDF5 (as the C reference stores it) and uint8 in NPZ.
func storedForm(b mlfeed.Buffer, hdf5 bool) mlfeed.Buffer {
	t, _ := storage(b.Type)
	if b.Type == mlfeed.Bool {
		t = mlfeed.Uint8
		if hdf5 {
			t = mlfeed.Int8
		}
	}
	return mlfeed.Buffer{Type: t, Bytes: b.Bytes}
}

// Close finishes the file.
func (w *Writer) Close() error {
	if w.npz != nil {
		err := w.npz.z.Close()
		if cerr := w.zf.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return w.h.Close()
}

// WriteFile writes m into a new file name ("file.bsp.h5", "file.bsp.h5:/group/name",
// "file.bsp.npz").
func WriteFile(name string, m *Matrix, opts *WriteOptions) error {
	return WriteFileContext(context.Background(), name, m, opts)
}

// WriteFileContext is WriteFile with the arrays' chunks compressed in parallel on the threads
// of the scheduler ctx carries (internal/sched).
func WriteFileContext(ctx context.Context, name string, m *Matrix, opts *WriteOptions) error {
	file, group := name, "/"
	if i := strings.LastIndex(name, ":/"); i > 0 && !strings.HasSuffix(strings.ToLower(name), ".npz") {
		file, group = name[:i], name[i+1:]
	}
	w, err := Create(file, opts)
	if err != nil {
		return err
	}
	if err := w.WriteMatrixContext(ctx, group, m); err != nil {
		w.Close()
		os.Remove(file)
		return err
	}
	return w.Close()
}

// marshalInner returns the bare inner descriptor object, as the Python reference stores it
// in NPZ files.
func (d *Descriptor) marshalInner() ([]byte, error) {
	js, err := d.Marshal()
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		return nil, err
	}
	return top["binsparse"], nil
}

// minimize returns m with values and indices in the smallest types that hold them exactly.
func minimize(m *Matrix) (*Matrix, error) {
	out := &Matrix{Descriptor: m.Descriptor, Arrays: map[string]mlfeed.Buffer{}}
	out.Descriptor.DataTypes = map[string]DataType{}
	// One type for every index and pointer array, as mtx2bsp picks it: the smallest unsigned
	// type that holds the largest dimension (and, for compressed formats, the number of stored
	// values), or any larger index a custom format stores.
	var hi int64
	for _, s := range m.Descriptor.Shape {
		hi = max(hi, s)
	}
	switch m.Descriptor.Format {
	case CSR, CSC, DCSR, DCSC:
		hi = max(hi, m.Descriptor.NumberOfStoredValues)
	}
	ints := map[string][]int64{}
	for name, b := range m.Arrays {
		if name == "values" || name == "fill_value" || b.Len() == 0 {
			continue
		}
		v, err := toInt64s(name, b)
		if err != nil {
			return nil, err
		}
		for _, x := range v {
			hi = max(hi, x)
		}
		ints[name] = v
	}
	it := MinIndexType(hi)
	for name, b := range m.Arrays {
		dt := m.Descriptor.DataTypes[name]
		nb := b
		if name == "values" || name == "fill_value" {
			nb = minimizeValues(b)
		} else if v, ok := ints[name]; ok {
			nb = fromInt64s(v, it)
		} else {
			nb = mlfeed.NewBuffer(it, 0)
		}
		out.Arrays[name] = nb
		out.Descriptor.DataTypes[name] = DataType{Type: nb.Type, Iso: dt.Iso}
	}
	return out, nil
}

// patternIso returns m with a sparse matrix's bint8 values that are all 1 (a pattern matrix,
// as a data set's bool stream of all true holds one) stored as iso[bint8], one element, as the
// C reference's mtx2bsp stores pattern matrices.
func patternIso(m *Matrix) *Matrix {
	d := m.Descriptor
	vals, ok := m.Arrays["values"]
	dt := d.DataTypes["values"]
	if !ok || dt.Iso || vals.Type != mlfeed.Bool || vals.Len() == 0 || d.IsDense() {
		return m
	}
	for _, c := range vals.Bytes {
		if c != 1 {
			return m
		}
	}
	out := &Matrix{Descriptor: d, Arrays: map[string]mlfeed.Buffer{}}
	out.Descriptor.DataTypes = map[string]DataType{}
	for k, v := range d.DataTypes {
		out.Descriptor.DataTypes[k] = v
	}
	for k, v := range m.Arrays {
		out.Arrays[k] = v
	}
	out.Arrays["values"] = mlfeed.Buffer{Type: mlfeed.Bool, Bytes: []byte{1}}
	out.Descriptor.DataTypes["values"] = DataType{Type: mlfeed.Bool, Iso: true}
	return out
}

// minimizeValues narrows float64 to float32, complex128 to complex64 and integers to the
// smallest type (unsigned when none is negative) when every value survives.
func minimizeValues(b mlfeed.Buffer) mlfeed.Buffer {
	switch {
	case b.Type == mlfeed.Float64:
		if c, err := mlfeed.ConvertBuffer(b, mlfeed.Float32); err == nil {
			return c
		}
	case b.Type == mlfeed.Complex128:
		f := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: b.Bytes}
		if c, err := mlfeed.ConvertBuffer(f, mlfeed.Float32); err == nil {
			c.Type = mlfeed.Complex64
			return c
		}
	case b.Type.IsInteger():
		lo, hi := int64(0), int64(0)
		for i := 0; i < b.Len(); i++ {
			v := b.Int64At(i)
			if b.Type == mlfeed.Uint64 && v < 0 {
				return b
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		var t mlfeed.ElemType
		switch {
		case lo >= 0:
			t = MinIndexType(hi)
		case lo >= math.MinInt8 && hi <= math.MaxInt8:
			t = mlfeed.Int8
		case lo >= math.MinInt16 && hi <= math.MaxInt16:
			t = mlfeed.Int16
		case lo >= math.MinInt32 && hi <= math.MaxInt32:
			t = mlfeed.Int32
		default:
			t = mlfeed.Int64
		}
		if c, err := mlfeed.ConvertBuffer(b, t); err == nil {
			return c
		}
	}
	return b
}
