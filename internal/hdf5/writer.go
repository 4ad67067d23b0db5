package hdf5

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/zlib"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Writer writes an HDF5 file: superblock version 2, version 2 object headers, compact link
// storage in groups, variable-length UTF-8 string attributes in one global heap collection,
// and datasets stored contiguous or chunked (version 1 B-tree chunk index) with deflate and
// optionally shuffle. Raw data goes to the file as it is given; the metadata is written by
// Close. Nothing is concurrent: every call compresses on the caller's goroutine.
type Writer struct {
	w      io.WriterAt
	closer io.Closer
	end    uint64 // next free address
	root   *wgroup
	sets   []*DatasetWriter
	err    error
	closed bool
}

type wgroup struct {
	name   string
	groups []*wgroup
	sets   []*DatasetWriter
	attrs  []wattr
	addr   uint64
}

type wattr struct {
	name, value string
	index       uint32 // object number in the global heap
}

// DatasetOptions control how a dataset is stored.
type DatasetOptions struct {
	// ChunkRows is the number of rows (indexes of the first dimension) per chunk; 0 stores
	// the dataset contiguous (which CreateDataset, growing by appends, does not allow).
	ChunkRows uint64
	// Level is the deflate level 1-9; 0 means no compression. It needs ChunkRows.
	Level int
	// Shuffle adds the shuffle filter before deflate.
	Shuffle bool
}

// superblockSize is the size of a version 2 superblock with 8-byte addresses and lengths.
const superblockSize = 48

// Create creates (truncating) the named file and returns a Writer for it; Close closes it.
func Create(name string) (*Writer, error) {
	fh, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := NewWriter(fh)
	w.closer = fh
	return w, nil
}

// NewWriter returns a Writer that writes an HDF5 file into w from offset 0.
func NewWriter(w io.WriterAt) *Writer {
	return &Writer{w: w, end: superblockSize, root: &wgroup{name: "/"}}
}

// group returns the group at path, creating it and its parents if create is set.
func (w *Writer) group(path string, create bool) (*wgroup, error) {
	g := w.root
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." {
			continue
		}
		var next *wgroup
		for _, c := range g.groups {
			if c.name == part {
				next = c
			}
		}
		for _, s := range g.sets {
			if s.name == part {
				return nil, fmt.Errorf("hdf5: %s in %s is a dataset, not a group", part, path)
			}
		}
		if next == nil {
			if !create {
				return nil, fmt.Errorf("%w: no group %s", ErrNotFound, path)
			}
			next = &wgroup{name: part}
			g.groups = append(g.groups, next)
		}
		g = next
	}
	return g, nil
}

// CreateGroup creates the group at path and any missing parents.
func (w *Writer) CreateGroup(path string) error {
	_, err := w.group(path, true)
	return err
}

// SetAttr sets a variable-length UTF-8 scalar string attribute of the group at path (created if
// needed).
func (w *Writer) SetAttr(path, name, value string) error {
	g, err := w.group(path, true)
	if err != nil {
		return err
	}
	for i := range g.attrs {
		if g.attrs[i].name == name {
			g.attrs[i].value = value
			return nil
		}
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("hdf5: invalid attribute name %q", name)
	}
	g.attrs = append(g.attrs, wattr{name: name, value: value})
	return nil
}

// DatasetWriter writes a dataset's rows in order.
type DatasetWriter struct {
	w        *Writer
	name     string
	t        Datatype
	rowShape []uint64 // dimensions after the first
	rowBytes uint64
	o        DatasetOptions
	scalar   bool
	rows     uint64
	// contiguous
	addr uint64
	// chunked
	buf    []byte // the chunk being filled
	chunks []chunkLoc
	one    chunkOut // the filter buffers of Write
	done   bool
	hdr    uint64
}

// datatype returns the HDF5 datatype of a numeric element type.
func datatype(t mlfeed.ElemType) (Datatype, error) {
	switch t {
	case mlfeed.Float32, mlfeed.Float64:
		return Datatype{Class: Float, Size: t.Size()}, nil
	case mlfeed.Int8, mlfeed.Int16, mlfeed.Int32, mlfeed.Int64:
		return Datatype{Class: Integer, Size: t.Size(), Signed: true}, nil
	case mlfeed.Uint8, mlfeed.Uint16, mlfeed.Uint32, mlfeed.Uint64:
		return Datatype{Class: Integer, Size: t.Size()}, nil
	}
	return Datatype{}, fmt.Errorf("%w: cannot store %s values in an HDF5 dataset", ErrUnsupported, t)
}

// CreateDataset creates the dataset name in the group at path (created if needed) with
// elements of type t and rows of shape rowShape (nil for a one-dimensional dataset); rows are
// added with Write. The dataset is chunked (o.ChunkRows > 0 is required) and its first
// dimension is the number of rows written when the Writer is closed.
func (w *Writer) CreateDataset(path, name string, t mlfeed.ElemType, rowShape []uint64, o DatasetOptions) (*DatasetWriter, error) {
	if o.ChunkRows == 0 {
		return nil, errors.New("hdf5: a dataset written row by row must be chunked")
	}
	return w.newDataset(path, name, t, rowShape, o)
}

func (w *Writer) newDataset(path, name string, t mlfeed.ElemType, rowShape []uint64, o DatasetOptions) (*DatasetWriter, error) {
	if w.err != nil {
		return nil, w.err
	}
	dt, err := datatype(t)
	if err != nil {
		return nil, err
	}
	if o.Level < 0 || o.Level > 9 {
		return nil, fmt.Errorf("hdf5: deflate level %d is not 0-9", o.Level)
	}
	if o.ChunkRows == 0 && (o.Level > 0 || o.Shuffle) {
		return nil, errors.New("hdf5: compression and shuffle need a chunked dataset")
	}
	g, err := w.group(path, true)
	if err != nil {
		return nil, err
	}
	if name == "" || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("hdf5: invalid dataset name %q", name)
	}
	for _, c := range g.groups {
		if c.name == name {
			return nil, fmt.Errorf("hdf5: %s in %s exists as a group", name, path)
		}
	}
	for _, s := range g.sets {
		if s.name == name {
			return nil, fmt.Errorf("hdf5: dataset %s in %s exists", name, path)
		}
	}
	rb := uint64(dt.Size)
	for _, d := range rowShape {
		if d == 0 || rb > math.MaxInt32/d {
			return nil, fmt.Errorf("hdf5: row shape %v", rowShape)
		}
		rb *= d
	}
	if o.ChunkRows > 0 && o.ChunkRows*rb > math.MaxUint32 {
		o.ChunkRows = max(1, math.MaxUint32/rb)
	}
	d := &DatasetWriter{w: w, name: name, t: dt, rowShape: rowShape, rowBytes: rb, o: o}
	g.sets = append(g.sets, d)
	w.sets = append(w.sets, d)
	return d, nil
}

// WriteDataset writes a whole dataset of type t and dimensions dims (nil for a scalar) from
// data (little-endian elements, row-major).
func (w *Writer) WriteDataset(path, name string, t mlfeed.ElemType, dims []uint64, data []byte, o DatasetOptions) error {
	return w.WriteDatasetContext(context.Background(), path, name, t, dims, data, o)
}

// WriteDatasetContext is WriteDataset with the chunks compressed in parallel on the threads
// of the scheduler ctx carries (internal/sched), if any; the file is the same.
func (w *Writer) WriteDatasetContext(ctx context.Context, path, name string, t mlfeed.ElemType, dims []uint64, data []byte, o DatasetOptions) error {
	var rowShape []uint64
	if len(dims) > 1 {
		rowShape = dims[1:]
	}
	d, err := w.newDataset(path, name, t, rowShape, o)
	if err != nil {
		return err
	}
	rows := uint64(1)
	if len(dims) == 0 {
		d.scalar = true
		d.o = DatasetOptions{}
	} else {
		rows = dims[0]
	}
	if uint64(len(data)) != rows*d.rowBytes {
		return fmt.Errorf("hdf5: %d bytes for dimensions %v of %s", len(data), dims, t)
	}
	if d.o.ChunkRows == 0 {
		d.addr = w.end
		d.rows = rows
		return w.writeRaw(data)
	}
	return d.writeParallel(ctx, data)
}

// writeParallel stores the whole chunks of data (filtered in parallel, a batch at a time, and
// written in order) and then the rest as Write does.
func (d *DatasetWriter) writeParallel(ctx context.Context, data []byte) error {
	chunkBytes := d.o.ChunkRows * d.rowBytes
	whole := uint64(len(data)) / chunkBytes
	s := sched.FromContext(ctx)
	if s == nil || s.Threads() < 2 || whole < 2 || (d.o.Level == 0 && !d.o.Shuffle) {
		return d.Write(data)
	}
	batch := 2 * uint64(s.Threads())
	outs := make([]chunkOut, batch)
	for first := uint64(0); first < whole; first += batch {
		n := min(batch, whole-first)
		err := sched.Parallel(ctx, int(n), func(_ context.Context, i int) error {
			lo := (first + uint64(i)) * chunkBytes
			return outs[i].filter(data[lo:lo+chunkBytes], d.t.Size, d.o)
		})
		if err != nil {
			return err
		}
		for i := range n {
			if err := d.store(outs[i].out); err != nil {
				return err
			}
			d.rows += d.o.ChunkRows
		}
	}
	return d.Write(data[whole*chunkBytes:])
}

// chunkOut holds the buffers of one chunk's filters.
type chunkOut struct {
	shuf []byte
	zbuf bytes.Buffer
	out  []byte // the filtered chunk
}

// zlibWriters holds zlib writers by level, for reuse across chunks.
var zlibWriters [10]sync.Pool

// filter applies the dataset's filters (shuffle, deflate) to chunk; the result is c.out.
func (c *chunkOut) filter(chunk []byte, size int, o DatasetOptions) error {
	c.out = chunk
	if o.Shuffle && size > 1 {
		if len(c.shuf) < len(chunk) {
			c.shuf = make([]byte, len(chunk))
		}
		shuffle(c.shuf[:len(chunk)], chunk, size)
		c.out = c.shuf[:len(chunk)]
	}
	if o.Level > 0 {
		c.zbuf.Reset()
		zw, _ := zlibWriters[o.Level].Get().(*zlib.Writer)
		if zw == nil {
			var err error
			if zw, err = zlib.NewWriterLevel(&c.zbuf, o.Level); err != nil {
				return err
			}
		} else {
			zw.Reset(&c.zbuf)
		}
		defer zlibWriters[o.Level].Put(zw)
		if _, err := zw.Write(c.out); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		c.out = c.zbuf.Bytes()
	}
	return nil
}

// writeRaw appends b to the file.
func (w *Writer) writeRaw(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(b) == 0 {
		return nil
	}
	if _, err := w.w.WriteAt(b, int64(w.end)); err != nil {
		w.err = err
		return err
	}
	w.end += uint64(len(b))
	return nil
}

// Write appends whole rows (little-endian elements, row-major) to a dataset made by
// CreateDataset.
func (d *DatasetWriter) Write(data []byte) error {
	if d.done {
		return errors.New("hdf5: write to a finished dataset")
	}
	if uint64(len(data))%d.rowBytes != 0 {
		return fmt.Errorf("hdf5: %d bytes is not a whole number of %d-byte rows", len(data), d.rowBytes)
	}
	chunkBytes := d.o.ChunkRows * d.rowBytes
	for len(data) > 0 {
		if len(d.buf) == 0 && uint64(len(data)) >= chunkBytes {
			if err := d.flush(data[:chunkBytes]); err != nil {
				return err
			}
			data = data[chunkBytes:]
			d.rows += d.o.ChunkRows
			continue
		}
		if d.buf == nil {
			d.buf = make([]byte, 0, chunkBytes)
		}
		k := min(uint64(len(data)), chunkBytes-uint64(len(d.buf)))
		d.buf = append(d.buf, data[:k]...)
		data = data[k:]
		d.rows += k / d.rowBytes
		if uint64(len(d.buf)) == chunkBytes {
			if err := d.flush(d.buf); err != nil {
				return err
			}
			d.buf = d.buf[:0]
		}
	}
	return nil
}

// WriteContext is Write with the whole chunks of data filtered in parallel on the threads of
// the scheduler ctx carries (internal/sched), as WriteDatasetContext does.
func (d *DatasetWriter) WriteContext(ctx context.Context, data []byte) error {
	if d.done || d.o.ChunkRows == 0 || uint64(len(data))%d.rowBytes != 0 {
		return d.Write(data)
	}
	if len(d.buf) > 0 { // complete the chunk begun: the rest starts on a chunk boundary
		k := min(uint64(len(data)), d.o.ChunkRows*d.rowBytes-uint64(len(d.buf)))
		if err := d.Write(data[:k]); err != nil {
			return err
		}
		data = data[k:]
	}
	return d.writeParallel(ctx, data)
}

// Rows returns the number of rows written so far.
func (d *DatasetWriter) Rows() uint64 { return d.rows }

// flush filters and stores one full chunk.
func (d *DatasetWriter) flush(chunk []byte) error {
	if err := d.one.filter(chunk, d.t.Size, d.o); err != nil {
		return err
	}
	return d.store(d.one.out)
}

// store appends a filtered chunk to the file and the chunk index.
func (d *DatasetWriter) store(out []byte) error {
	d.chunks = append(d.chunks, chunkLoc{addr: d.w.end, size: uint64(len(out))})
	return d.w.writeRaw(out)
}

// finish stores the last, partial chunk (padded with zeros, as HDF5 stores edge chunks).
func (d *DatasetWriter) finish() error {
	if d.done {
		return nil
	}
	d.done = true
	if len(d.buf) > 0 {
		n := len(d.buf)
		d.buf = d.buf[:cap(d.buf)]
		clear(d.buf[n:])
		return d.flush(d.buf)
	}
	return nil
}

// shuffle transposes the bytes of size-byte elements: all first bytes, then all second bytes...
func shuffle(dst, src []byte, size int) {
	n := len(src) / size
	for j := 0; j < size; j++ {
		out := dst[j*n : (j+1)*n]
		for i := range out {
			out[i] = src[i*size+j]
		}
	}
	copy(dst[n*size:], src[n*size:])
}

// Close stores the remaining chunks and all metadata, and closes the file made by Create.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	err := w.writeMeta()
	if w.closer != nil {
		if cerr := w.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// enc builds little-endian metadata.
type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) raw(b []byte) { e.b = append(e.b, b...) }

// meta writes b at the end of the file (8-byte aligned) and returns its address.
func (w *Writer) meta(b []byte) (uint64, error) {
	if pad := (8 - w.end%8) % 8; pad > 0 {
		if err := w.writeRaw(make([]byte, pad)); err != nil {
			return 0, err
		}
	}
	a := w.end
	return a, w.writeRaw(b)
}

func (w *Writer) writeMeta() error {
	if w.err != nil {
		return w.err
	}
	for _, d := range w.sets {
		if err := d.finish(); err != nil {
			return err
		}
	}
	// one global heap collection holds every attribute's string
	heapAddr, err := w.writeGlobalHeap()
	if err != nil {
		return err
	}
	for _, d := range w.sets {
		if err := d.writeHeader(); err != nil {
			return err
		}
	}
	if err := w.writeGroup(w.root, heapAddr); err != nil {
		return err
	}
	// pad the file to 8 bytes and write the superblock
	if _, err := w.meta(nil); err != nil {
		return err
	}
	var e enc
	e.raw(signature)
	e.u8(2)
	e.u8(8)
	e.u8(8)
	e.u8(0)
	e.u64(0)     // base address
	e.u64(undef) // superblock extension
	e.u64(w.end) // end of file
	e.u64(w.root.addr)
	e.u32(lookup3(e.b))
	_, err = w.w.WriteAt(e.b, 0)
	return err
}

// attribute strings in heap order: group attributes, depth first
func (w *Writer) heapStrings(g *wgroup, out *[]string) {
	for i := range g.attrs {
		*out = append(*out, g.attrs[i].value)
		g.attrs[i].index = uint32(len(*out))
	}
	for _, c := range g.groups {
		w.heapStrings(c, out)
	}
}

func (w *Writer) writeGlobalHeap() (uint64, error) {
	var strs []string
	w.heapStrings(w.root, &strs)
	if len(strs) == 0 {
		return undef, nil
	}
	if len(strs) >= 1<<16-1 {
		return 0, fmt.Errorf("%w: more than 65534 string attributes", ErrUnsupported)
	}
	var e enc
	e.raw([]byte("GCOL"))
	e.u8(1)
	e.raw([]byte{0, 0, 0})
	e.u64(0) // size, set below
	for i, s := range strs {
		e.u16(uint16(i + 1))
		e.u16(1)
		e.u32(0)
		e.u64(uint64(len(s)))
		e.raw([]byte(s))
		e.raw(make([]byte, pad8(len(s))-len(s)))
	}
	// libhdf5 reads at least 4096 bytes of a collection: the rest is free space (object 0)
	size := max(len(e.b)+16, 4096)
	size = pad8(size)
	free := size - len(e.b)
	e.u16(0)
	e.u16(0)
	e.u32(0)
	e.u64(uint64(free))
	e.raw(make([]byte, free-16))
	binary.LittleEndian.PutUint64(e.b[8:], uint64(size))
	return w.meta(e.b)
}

// objectHeader writes a version 2 object header holding msgs.
func (w *Writer) objectHeader(msgs []message) (uint64, error) {
	var body enc
	for _, m := range msgs {
		body.u8(uint8(m.typ))
		body.u16(uint16(len(m.data)))
		body.u8(m.flags)
		body.raw(m.data)
	}
	var e enc
	e.raw([]byte("OHDR"))
	e.u8(2)
	e.u8(2) // flags: 4-byte chunk size
	e.u32(uint32(len(body.b)))
	e.raw(body.b)
	e.u32(lookup3(e.b))
	return w.meta(e.b)
}

func vlenStringType() []byte {
	return []byte{0x19, 0x01, 0x01, 0x00, 16, 0, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0}
}

func (w *Writer) writeGroup(g *wgroup, heap uint64) error {
	for _, c := range g.groups {
		if err := w.writeGroup(c, heap); err != nil {
			return err
		}
	}
	var msgs []message
	// link info: compact storage, no creation order
	li := enc{}
	li.u8(0)
	li.u8(0)
	li.u64(undef)
	li.u64(undef)
	msgs = append(msgs, message{typ: msgLinkInfo, data: li.b})
	msgs = append(msgs, message{typ: msgGroupInfo, data: []byte{0, 0}})
	type entry struct {
		name string
		addr uint64
	}
	var links []entry
	for _, c := range g.groups {
		links = append(links, entry{c.name, c.addr})
	}
	for _, s := range g.sets {
		links = append(links, entry{s.name, s.hdr})
	}
	sort.Slice(links, func(i, j int) bool { return links[i].name < links[j].name })
	for _, l := range links {
		var e enc
		e.u8(1)
		if len(l.name) < 256 {
			e.u8(0x10) // 1-byte name length, character set present
			e.u8(1)
			e.u8(uint8(len(l.name)))
		} else {
			e.u8(0x11)
			e.u8(1)
			e.u16(uint16(len(l.name)))
		}
		e.raw([]byte(l.name))
		e.u64(l.addr)
		msgs = append(msgs, message{typ: msgLink, data: e.b})
	}
	for _, a := range g.attrs {
		var e enc
		e.u8(3)
		e.u8(0)
		e.u16(uint16(len(a.name) + 1))
		dt := vlenStringType()
		e.u16(uint16(len(dt)))
		e.u16(4) // scalar dataspace v2
		e.u8(1)  // UTF-8 name
		e.raw([]byte(a.name))
		e.u8(0)
		e.raw(dt)
		e.raw([]byte{2, 0, 0, 0})
		e.u32(uint32(len(a.value)))
		e.u64(heap)
		e.u32(a.index)
		msgs = append(msgs, message{typ: msgAttribute, data: e.b})
	}
	for _, m := range msgs {
		if len(m.data) > math.MaxUint16 {
			return fmt.Errorf("%w: attribute or link name too long", ErrUnsupported)
		}
	}
	var err error
	g.addr, err = w.objectHeader(msgs)
	return err
}

// dims returns the dataset's dimensions.
func (d *DatasetWriter) dims() []uint64 {
	if d.scalar {
		return nil
	}
	return append([]uint64{d.rows}, d.rowShape...)
}

// btreeK is the number of children of a version 1 B-tree node over chunks, half of it: the
// default that readers (libhdf5) assume when the superblock does not say.
const btreeK = 32

// writeHeader writes the dataset's chunk index (if chunked) and object header.
func (d *DatasetWriter) writeHeader() error {
	w := d.w
	dims := d.dims()
	rank := len(dims)
	var msgs []message
	// dataspace, version 2
	var sp enc
	sp.u8(2)
	sp.u8(uint8(rank))
	sp.u8(0)
	if d.scalar {
		sp.u8(0)
	} else {
		sp.u8(1)
	}
	for _, x := range dims {
		sp.u64(x)
	}
	msgs = append(msgs, message{typ: msgDataspace, data: sp.b})
	msgs = append(msgs, message{typ: msgDatatype, flags: 1, data: encodeDatatype(d.t)})
	// fill value, version 3: default (zero) fill, written if set, allocated early or incrementally
	alloc := uint8(1)
	if d.o.ChunkRows > 0 {
		alloc = 3
	}
	msgs = append(msgs, message{typ: msgFill, flags: 1, data: []byte{3, alloc | 2<<2}})
	var lay enc
	lay.u8(3)
	if d.o.ChunkRows == 0 {
		lay.u8(layoutContiguous)
		size := d.rows * d.rowBytes
		if size == 0 {
			lay.u64(undef)
		} else {
			lay.u64(d.addr)
		}
		lay.u64(size)
	} else {
		bt, err := d.writeBtree()
		if err != nil {
			return err
		}
		lay.u8(layoutChunked)
		lay.u8(uint8(rank + 1))
		lay.u64(bt)
		lay.u32(uint32(d.o.ChunkRows))
		for _, x := range d.rowShape {
			lay.u32(uint32(x))
		}
		lay.u32(uint32(d.t.Size))
		var fl enc
		var n uint8
		fl.u8(2)
		fl.u8(0)
		if d.o.Shuffle {
			fl.u16(2) // shuffle
			fl.u16(1) // optional
			fl.u16(1)
			fl.u32(uint32(d.t.Size))
			n++
		}
		if d.o.Level > 0 {
			fl.u16(1) // deflate
			fl.u16(1)
			fl.u16(1)
			fl.u32(uint32(d.o.Level))
			n++
		}
		if n > 0 {
			fl.b[1] = n
			msgs = append(msgs, message{typ: msgFilters, flags: 1, data: fl.b})
		}
	}
	msgs = append(msgs, message{typ: msgLayout, data: lay.b})
	var err error
	d.hdr, err = w.objectHeader(msgs)
	return err
}

func encodeDatatype(t Datatype) []byte {
	var e enc
	switch t.Class {
	case Integer:
		e.u8(0x10)
		if t.Signed {
			e.u8(0x08)
		} else {
			e.u8(0)
		}
		e.u16(0)
		e.u32(uint32(t.Size))
		e.u16(0)
		e.u16(uint16(8 * t.Size))
	case Float:
		e.u8(0x11)
		if t.Size == 4 {
			e.raw([]byte{0x20, 31, 0})
			e.u32(4)
			e.u16(0)
			e.u16(32)
			e.raw([]byte{23, 8, 0, 23})
			e.u32(127)
		} else {
			e.raw([]byte{0x20, 63, 0})
			e.u32(8)
			e.u16(0)
			e.u16(64)
			e.raw([]byte{52, 11, 0, 52})
			e.u32(1023)
		}
	}
	return e.b
}

// btKey is a chunk B-tree key: the chunk's size, filter mask and first row.
type btKey struct {
	size uint32
	row  uint64
}

// writeBtree writes the version 1 B-tree over the dataset's chunks (chunk i holds rows from
// i*ChunkRows) and returns its root's address.
func (d *DatasetWriter) writeBtree() (uint64, error) {
	w := d.w
	rank := len(d.rowShape) + 1
	keySize := 8 + 8*(rank+1)
	nodeSize := 8 + 16 + 2*btreeK*8 + (2*btreeK+1)*keySize
	type node struct {
		addr  uint64
		first btKey
	}
	if len(d.chunks) == 0 {
		return undef, nil
	}
	keys := make([]btKey, len(d.chunks)+1)
	for i, c := range d.chunks {
		keys[i] = btKey{uint32(c.size), uint64(i) * d.o.ChunkRows}
	}
	end := btKey{0, uint64(len(d.chunks)) * d.o.ChunkRows}
	keys[len(d.chunks)] = end
	children := make([]uint64, len(d.chunks))
	for i, c := range d.chunks {
		children[i] = c.addr
	}
	writeKey := func(e *enc, k btKey) {
		e.u32(k.size)
		e.u32(0)
		e.u64(k.row)
		for i := 1; i <= rank; i++ {
			e.u64(0)
		}
	}
	for lv := 0; ; lv++ {
		var next []node
		n := len(children)
		for start := 0; start < n; start += 2 * btreeK {
			stop := min(start+2*btreeK, n)
			var e enc
			e.raw([]byte("TREE"))
			e.u8(1)
			e.u8(uint8(lv))
			e.u16(uint16(stop - start))
			e.u64(undef)
			e.u64(undef)
			for i := start; i < stop; i++ {
				writeKey(&e, keys[i])
				e.u64(children[i])
			}
			if stop < n {
				writeKey(&e, keys[stop])
			} else {
				writeKey(&e, end)
			}
			e.raw(make([]byte, nodeSize-len(e.b)))
			a, err := w.meta(e.b)
			if err != nil {
				return 0, err
			}
			next = append(next, node{a, keys[start]})
		}
		if len(next) == 1 {
			return next[0].addr, nil
		}
		children = children[:0]
		keys = keys[:0]
		for _, nd := range next {
			children = append(children, nd.addr)
			keys = append(keys, nd.first)
		}
		keys = append(keys, end)
	}
}
