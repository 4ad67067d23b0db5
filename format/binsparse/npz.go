package binsparse

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
)

// The NPZ container, as the 2026 Python reference writes it: a zip archive of NPY arrays
// "<name>.npy" plus "binsparse.npy", a zero-dimensional unicode array holding the descriptor.
// An NPZ file holds one matrix, at the root.

type npzContainer struct {
	z       *zip.ReadCloser
	entries map[string]*zip.File
}

func openNPZ(name string) (*npzContainer, error) {
	z, err := zip.OpenReader(name)
	if err != nil {
		return nil, fmt.Errorf("%w: not a readable NPZ (zip) file: %v", ErrFormat, err)
	}
	c := &npzContainer{z: z, entries: map[string]*zip.File{}}
	for _, f := range z.File {
		if n, ok := strings.CutSuffix(f.Name, ".npy"); ok {
			c.entries[n] = f
		}
	}
	return c, nil
}

func (c *npzContainer) close() error { return c.z.Close() }

func (c *npzContainer) matrices() ([]string, error) { return []string{"/"}, nil }

func (c *npzContainer) descriptor(group string) ([]byte, bool, error) {
	if group != "/" && group != "" {
		return nil, false, fmt.Errorf("%w: an NPZ file has no groups (asked for %s)", ErrFormat, group)
	}
	f, ok := c.entries["binsparse"]
	if !ok {
		return nil, false, nil
	}
	h, data, err := c.load(f)
	if err != nil {
		return nil, false, err
	}
	if h.kind != 'U' || h.count() != 1 {
		return nil, false, fmt.Errorf("%w: binsparse.npy is %s %v, not a unicode string", ErrFormat, h.descr, h.shape)
	}
	var b strings.Builder
	for i := 0; i+4 <= len(data); i += 4 {
		r := rune(h.order.Uint32(data[i:]))
		if r == 0 {
			break
		}
		if !utf8.ValidRune(r) {
			return nil, false, fmt.Errorf("%w: binsparse.npy holds an invalid character", ErrFormat)
		}
		b.WriteRune(r)
	}
	return []byte(b.String()), true, nil
}

func (c *npzContainer) array(group, name string) (arrayInfo, bool, error) {
	f, ok := c.entries[name]
	if !ok || (group != "/" && group != "") {
		return arrayInfo{}, false, nil
	}
	r, err := f.Open()
	if err != nil {
		return arrayInfo{}, false, fmt.Errorf("%w: %s.npy: %v", ErrFormat, name, err)
	}
	defer r.Close()
	h, err := readNPYHeader(r)
	if err != nil {
		return arrayInfo{}, false, fmt.Errorf("%s.npy: %w", name, err)
	}
	t, per := h.elemType()
	return arrayInfo{Type: t, Len: h.count() * int64(per), Rank: len(h.shape), Filtered: f.Method != zip.Store,
		Details: map[bool]string{true: "npy+deflate", false: "npy"}[f.Method != zip.Store]}, true, nil
}

func (c *npzContainer) read(_ context.Context, group, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	f := c.entries[name]
	h, data, err := c.load(f)
	if err != nil {
		return mlfeed.Buffer{}, err
	}
	st, _ := h.elemType()
	if st != t {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %s.npy holds %s, not %s", ErrFormat, name, st, t)
	}
	b := mlfeed.NewBuffer(t, int(n))
	sz := t.Size()
	copy(b.Bytes, data[int(off)*sz:int(off+n)*sz])
	if h.order == binary.ByteOrder(binary.BigEndian) && sz > 1 {
		for i := 0; i < len(b.Bytes); i += sz {
			for a, z := i, i+sz-1; a < z; a, z = a+1, z-1 {
				b.Bytes[a], b.Bytes[z] = b.Bytes[z], b.Bytes[a]
			}
		}
	}
	return b, nil
}

// load reads an entry's header and data, checking the declared size against the entry's.
func (c *npzContainer) load(f *zip.File) (*npyHeader, []byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrFormat, f.Name, err)
	}
	defer r.Close()
	h, err := readNPYHeader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	size := h.count() * int64(h.itemsize)
	// The entry's sizes come from the archive too: deflate expands at most about 1032 times.
	if f.Method == zip.Store && f.UncompressedSize64 != f.CompressedSize64 ||
		f.Method != zip.Store && f.UncompressedSize64 > f.CompressedSize64*1100+1<<20 {
		return nil, nil, fmt.Errorf("%w: %s: %d bytes claimed from %d compressed", ErrTooLarge, f.Name, f.UncompressedSize64, f.CompressedSize64)
	}
	if size < 0 || uint64(size) > f.UncompressedSize64 {
		return nil, nil, fmt.Errorf("%w: %s: header claims %d bytes, the entry holds %d", ErrTooLarge, f.Name, size, f.UncompressedSize64)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", mlfeed.ErrTruncated, f.Name, err)
	}
	return h, data, nil
}

type npyHeader struct {
	descr    string
	kind     byte // 'i', 'u', 'f', 'c', 'b', 'U'
	itemsize int
	order    binary.ByteOrder
	fortran  bool
	shape    []int64
}

func (h *npyHeader) count() int64 {
	n := int64(1)
	for _, s := range h.shape {
		n *= s
	}
	return n
}

// elemType returns the element type and elements per item (2 for complex).
func (h *npyHeader) elemType() (mlfeed.ElemType, int) {
	switch {
	case h.kind == 'i' && h.itemsize == 1:
		return mlfeed.Int8, 1
	case h.kind == 'i' && h.itemsize == 2:
		return mlfeed.Int16, 1
	case h.kind == 'i' && h.itemsize == 4:
		return mlfeed.Int32, 1
	case h.kind == 'i' && h.itemsize == 8:
		return mlfeed.Int64, 1
	case (h.kind == 'u' || h.kind == 'b') && h.itemsize == 1:
		return mlfeed.Uint8, 1
	case h.kind == 'u' && h.itemsize == 2:
		return mlfeed.Uint16, 1
	case h.kind == 'u' && h.itemsize == 4:
		return mlfeed.Uint32, 1
	case h.kind == 'u' && h.itemsize == 8:
		return mlfeed.Uint64, 1
	case h.kind == 'f' && h.itemsize == 4:
		return mlfeed.Float32, 1
	case h.kind == 'f' && h.itemsize == 8:
		return mlfeed.Float64, 1
	case h.kind == 'c' && h.itemsize == 8:
		return mlfeed.Float32, 2
	case h.kind == 'c' && h.itemsize == 16:
		return mlfeed.Float64, 2
	}
	return mlfeed.Invalid, 1
}

// readNPYHeader reads an NPY header with package npy's parser, keeping what the container
// needs.
func readNPYHeader(r io.Reader) (*npyHeader, error) {
	nh, err := npy.ReadHeader(r, "")
	if err != nil {
		var pe *mlfeed.PosError
		if errors.As(err, &pe) {
			err = pe.Err // the caller names the entry
		}
		return nil, err
	}
	h := &npyHeader{descr: nh.Descr, kind: nh.Descr[1], itemsize: nh.ItemSize, order: binary.LittleEndian, fortran: nh.Fortran}
	if nh.BigEndian {
		h.order = binary.BigEndian
	}
	for _, d := range nh.Shape {
		h.shape = append(h.shape, int64(d))
	}
	if len(h.shape) > 1 && h.fortran {
		return nil, fmt.Errorf("%w: Fortran-ordered NPY arrays", ErrUnsupported)
	}
	return h, nil
}

// npyDescr returns the NPY type string of t.
func npyDescr(t mlfeed.ElemType) string {
	switch t {
	case mlfeed.Int8:
		return "|i1"
	case mlfeed.Uint8, mlfeed.Bool:
		return "|u1"
	case mlfeed.Int16:
		return "<i2"
	case mlfeed.Uint16:
		return "<u2"
	case mlfeed.Int32:
		return "<i4"
	case mlfeed.Uint32:
		return "<u4"
	case mlfeed.Int64:
		return "<i8"
	case mlfeed.Uint64:
		return "<u8"
	case mlfeed.Float32:
		return "<f4"
	case mlfeed.Float64:
		return "<f8"
	}
	return ""
}

// writeNPY writes an NPY array of the given type string, shape and data, with the header
// numpy.save writes (package npy).
func writeNPY(w io.Writer, descr string, shape []int64, data []byte) error {
	dims := make([]int, len(shape))
	for i, v := range shape {
		dims[i] = int(v)
	}
	if _, err := w.Write(npy.AppendHeader(nil, descr, dims)); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// npzWriter writes a matrix as NPZ entries.
type npzWriter struct {
	z        *zip.Writer
	compress bool
}

func (w *npzWriter) entry(name string) (io.Writer, error) {
	m := zip.Store
	if w.compress {
		m = zip.Deflate
	}
	return w.z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: m})
}

func (w *npzWriter) writeArray(name string, b mlfeed.Buffer) error {
	t, per := storage(b.Type)
	out, err := w.entry(name)
	if err != nil {
		return err
	}
	return writeNPY(out, npyDescr(t), []int64{int64(b.Len() * per)}, b.Bytes)
}

func (w *npzWriter) writeDescriptor(js []byte) error {
	s := string(js)
	n := utf8.RuneCountInString(s)
	data := make([]byte, 0, 4*n)
	for _, r := range s {
		data = binary.LittleEndian.AppendUint32(data, uint32(r))
	}
	out, err := w.entry("binsparse")
	if err != nil {
		return err
	}
	return writeNPY(out, fmt.Sprintf("<U%d", max(n, 1)), nil, append(data, make([]byte, 4*(max(n, 1)-n))...))
}
