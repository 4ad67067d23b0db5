package npy

import (
	"archive/zip"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/half"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Default option values.
const (
	// DefaultChunkSize is the target number of data bytes (over all arrays) in one chunk.
	DefaultChunkSize = 4 << 20
	// MaxEmptyRecords is the most records of zero bytes (a zero among the record dimensions)
	// an array may announce: such records take no space, so their number is bounded here
	// rather than by the file's size.
	MaxEmptyRecords = 1 << 24
)

// maxChunkRecords caps the records of one chunk.
const maxChunkRecords = 1 << 20

// maxDeflateRatio bounds how much DEFLATE can expand its input (the format's limit is 1032:1).
const maxDeflateRatio = 1032

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// FileName names the input in error messages. Open sets it.
	FileName string
	// Name is the stream's name for a .npy file. Empty means "labels" for arrays of rank 0
	// or 1 and "features" for higher ranks, as for IDX. Arrays of an .npz archive are named
	// by their member names.
	Name string
	// ChunkSize is the target size of a chunk's data in bytes, over all arrays; a chunk holds
	// whole records, at least one. Zero means DefaultChunkSize.
	ChunkSize int
	// NoMmap reads with ReadAt instead of mapping the file (Open only).
	NoMmap bool
	// Memory is the memory budget in bytes (the scheduler's, the CLI's --memory). A deflated
	// member whose data is larger than a quarter of it is inflated a chunk at a time instead
	// of held whole, and one whose records do not fit it at all is refused (ErrTooLarge)
	// before anything is inflated. Zero means sched.DefaultMemory.
	Memory int64
	// Arrays are the names of an .npz archive's arrays to read (its members without ".npy"),
	// in stream order; empty means every array. The others are not read, whatever their
	// dtype or length: Keras's mnist.npz (x_train, y_train, x_test, y_test) reads as
	// {"x_train", "y_train"}. A name the archive lacks, or Arrays with a .npy file, is a usage
	// error.
	Arrays []string
}

// array is one array of the file: a .npy file's only one or an .npz member.
type array struct {
	member   string // zip member name; "" for a .npy file
	h        *Header
	stream   mlfeed.Stream
	stored   bool // data lies uncompressed in the file at off
	off      int64
	deflated *zip.File
	inflate  *inflater // a deflated member too large to hold whole, read a chunk at a time
	span     [2]int64  // an .npz member's bytes in the file: offset, length
	mem      []byte    // all data bytes, when mapped or inflated

	loadOnce sync.Once
	loadErr  error
}

// copyFree reports whether the array's little-endian C-order bytes are its values as they are.
func (a *array) copyFree() bool {
	return !a.h.BigEndian && !a.fortran() && a.h.Type != mlfeed.String && !a.h.Converted()
}

// fortran reports whether the array's Fortran order differs from C order.
func (a *array) fortran() bool {
	if !a.h.Fortran {
		return false
	}
	n := 0
	for _, d := range a.h.Shape {
		if d == 0 {
			return false // no data
		}
		if d > 1 {
			n++
		}
	}
	return n > 1
}

// Reader reads a .npy file or an .npz archive. It implements mlfeed.Source; its methods are
// safe for concurrent use.
type Reader struct {
	name     string
	npz      bool
	ra       io.ReaderAt
	arrays   []*array
	ignored  []string
	schema   mlfeed.Schema
	chunks   []mlfeed.ChunkInfo
	records  int
	perChunk int
	identity []int64
	mapped   bool
	region   *mmap.Region // the mapped file, when mapped
	memory   int64        // the memory budget (ReaderOptions.Memory)
	closers  closer.Stack
}

// NewReader returns a reader of the .npy or .npz data in r, which holds size bytes. Headers are
// read and checked against size; no data is read.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	rd := &Reader{name: opts.FileName, ra: r, memory: opts.Memory}
	if rd.memory <= 0 {
		rd.memory = sched.DefaultMemory
	}
	var head [4]byte
	n, _ := r.ReadAt(head[:], 0)
	if n == 4 && string(head[:]) == "PK\x03\x04" || n == 4 && string(head[:]) == "PK\x05\x06" {
		if err := rd.openNPZ(r, size, opts.Arrays); err != nil {
			return nil, err
		}
	} else {
		if len(opts.Arrays) > 0 {
			return nil, fmt.Errorf("%w: npy: %s: the option arrays selects the arrays of an .npz archive; this is one .npy array", format.ErrUsage, rd.name)
		}
		h, err := ReadHeader(io.NewSectionReader(r, 0, size), rd.name)
		if err != nil {
			return nil, err
		}
		want, _ := h.DataSize()
		if err := checkData(h, size-h.DataOffset, want, rd.name, h.DataOffset); err != nil {
			return nil, err
		}
		name := opts.Name
		if name == "" {
			name = "features"
			if len(h.Shape) <= 1 {
				name = "labels"
			}
		}
		rd.arrays = []*array{{h: h, stored: true, off: h.DataOffset, stream: streamOf(name, h)}}
	}
	if err := rd.plan(opts.ChunkSize); err != nil {
		return nil, err
	}
	return rd, nil
}

// Open opens the named .npy or .npz file. Uncompressed data is memory-mapped unless
// opts.NoMmap is set.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	o.FileName = name
	rd, mf, err := mmap.Open(name, mmap.Unless(o.NoMmap), func(mf *mmap.File) (*Reader, error) {
		return NewReader(mf.File, mf.Size, &o)
	})
	if err != nil {
		return nil, err
	}
	rd.closers = append(rd.closers, mf.Close)
	if mf.Region != nil {
		rd.mapped, rd.region = true, mf.Region
		for _, a := range rd.arrays {
			if a.stored {
				n, _ := a.h.DataSize()
				a.mem = mf.Bytes()[a.off : a.off+n]
			}
		}
	}
	return rd, nil
}

// checkData compares the bytes an array has with what its header announces.
func checkData(h *Header, have, want int64, name string, at int64) error {
	switch {
	case have < want:
		return mlfeed.OffsetError(name, at+max(have, 0), "data", fmt.Errorf("%w: header (%s, shape %v) announces %d data bytes, file has %d", ErrTruncated, h.Descr, h.Shape, want, have))
	case have > want:
		return mlfeed.OffsetError(name, at+want, "data", fmt.Errorf("%w: %d bytes after the %d data bytes the header (%s, shape %v) announces", ErrFormat, have-want, want, h.Descr, h.Shape))
	}
	if h.Records() > MaxEmptyRecords && h.RecordElems() == 0 {
		return mlfeed.OffsetError(name, at, "shape", fmt.Errorf("%w: %d records of zero bytes (shape %v); at most %d are accepted", ErrTooLarge, h.Records(), h.Shape, MaxEmptyRecords))
	}
	return nil
}

// streamOf describes an array's records: Dim is the record's element count, Shape the record's
// dimensions when Dim alone does not give the rank back (as IDX does).
func streamOf(name string, h *Header) mlfeed.Stream {
	rs := h.RecordShape()
	st := mlfeed.Stream{Name: name, Storage: mlfeed.Dense, Type: h.Type, Dim: h.RecordElems()}
	if len(rs) > 1 || len(rs) == 1 && rs[0] <= 1 {
		st.Shape = append([]int(nil), rs...)
	}
	return st
}

// openNPZ reads the members' headers of the archive in r: those of the arrays named, in that
// order, or all (names empty).
func (rd *Reader) openNPZ(r io.ReaderAt, size int64, names []string) error {
	rd.npz = true
	z, err := zip.NewReader(r, size)
	if err != nil {
		return mlfeed.OffsetError(rd.name, 0, "zip", fmt.Errorf("%w: not a readable .npz (zip) archive: %v", ErrFormat, err))
	}
	at := map[string]int{} // by array name, its place in names
	for i, n := range names {
		at[n] = i
	}
	picked := make([]*array, len(names))
	var all []string
	for _, f := range z.File {
		base, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			rd.ignored = append(rd.ignored, f.Name)
			continue
		}
		all = append(all, strconv.Quote(base))
		i, want := at[base]
		if len(names) > 0 && (!want || picked[i] != nil) {
			continue // not asked for, or a second member of that name (numpy reads the first)
		}
		a, err := rd.member(r, size, f)
		if err != nil {
			if len(names) == 0 && errors.Is(err, ErrUnsupported) {
				return fmt.Errorf("%w (the option arrays=NAME,... reads the archive's other arrays)", err)
			}
			return err
		}
		a.stream = streamOf(base, a.h)
		if len(names) > 0 {
			picked[i] = a
		} else {
			rd.arrays = append(rd.arrays, a)
		}
	}
	for i, a := range picked {
		if a == nil {
			return fmt.Errorf("%w: npz: %s has no array %q (its arrays: %s)", format.ErrUsage, rd.name, names[i], strings.Join(all, ", "))
		}
		rd.arrays = append(rd.arrays, a)
	}
	if len(rd.arrays) == 0 {
		return mlfeed.OffsetError(rd.name, 0, "zip", fmt.Errorf("%w: the archive holds no .npy member", ErrFormat))
	}
	// Members whose bytes overlap (a zip bomb's trick: many names for one stream) would be
	// read once per name, more than the file holds.
	bySpan := slices.Clone(rd.arrays)
	slices.SortFunc(bySpan, func(a, b *array) int { return cmp.Compare(a.span[0], b.span[0]) })
	for k := 1; k < len(bySpan); k++ {
		if p, a := bySpan[k-1], bySpan[k]; a.span[0] < p.span[0]+p.span[1] {
			return mlfeed.OffsetError(rd.name, a.span[0], a.member, fmt.Errorf("%w: members %q and %q overlap (bytes from %d and %d, %d long): an archive holds each member's bytes once", ErrFormat, p.member, a.member, p.span[0], a.span[0], p.span[1]))
		}
	}
	for _, a := range rd.arrays[1:] {
		if a.h.Records() != rd.arrays[0].h.Records() {
			return mlfeed.OffsetError(rd.name, 0, a.member, fmt.Errorf("%w: arrays %q (shape %v) and %q (shape %v) differ in their first dimension; mlfeed reads an archive's arrays as streams of one record set (the option arrays=NAME,... picks arrays of one length)", ErrUnsupported, rd.arrays[0].member, rd.arrays[0].h.Shape, a.member, a.h.Shape))
		}
	}
	return nil
}

// member reads the header of one archive member and checks its sizes.
func (rd *Reader) member(r io.ReaderAt, size int64, f *zip.File) (*array, error) {
	at, err := f.DataOffset()
	if err != nil {
		return nil, mlfeed.OffsetError(rd.name, 0, f.Name, fmt.Errorf("%w: %v", ErrFormat, err))
	}
	a := &array{member: f.Name, span: [2]int64{at, int64(min(f.CompressedSize64, uint64(size)))}}
	where := rd.name + ":" + f.Name
	switch f.Method {
	case zip.Store:
		if f.CompressedSize64 != f.UncompressedSize64 || f.UncompressedSize64 > uint64(size-at) {
			return nil, mlfeed.OffsetError(rd.name, at, f.Name, fmt.Errorf("%w: stored member of %d bytes in a file of %d", ErrTruncated, f.UncompressedSize64, size))
		}
		if a.h, err = ReadHeader(io.NewSectionReader(r, at, int64(f.UncompressedSize64)), where); err != nil {
			return nil, err
		}
		a.stored, a.off = true, at+a.h.DataOffset
	case zip.Deflate:
		if f.UncompressedSize64/maxDeflateRatio > f.CompressedSize64 {
			return nil, mlfeed.OffsetError(rd.name, at, f.Name, fmt.Errorf("%w: %d bytes claimed from %d deflated bytes", ErrTooLarge, f.UncompressedSize64, f.CompressedSize64))
		}
		zr, err := f.Open()
		if err != nil {
			return nil, mlfeed.OffsetError(rd.name, at, f.Name, fmt.Errorf("%w: %v", ErrFormat, err))
		}
		a.h, err = ReadHeader(zr, where)
		zr.Close()
		if err != nil {
			return nil, err
		}
		a.deflated = f
		if err := rd.planInflate(a, at); err != nil {
			return nil, err
		}
	default:
		return nil, mlfeed.OffsetError(rd.name, at, f.Name, fmt.Errorf("%w: zip compression method %d (numpy writes stored and deflated members)", ErrUnsupported, f.Method))
	}
	want, _ := a.h.DataSize()
	if err := checkData(a.h, int64(f.UncompressedSize64)-a.h.DataOffset, want, where, a.h.DataOffset); err != nil {
		return nil, err
	}
	return a, nil
}

// plan builds the schema and the chunk table.
func (rd *Reader) plan(chunkSize int) error {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	rd.records = rd.arrays[0].h.Records()
	recBytes := 0
	for _, a := range rd.arrays {
		rd.schema.Streams = append(rd.schema.Streams, a.stream)
		size := a.h.ItemSize
		if a.h.Half {
			size = 4 // as read
		}
		recBytes += a.h.RecordElems() * size
	}
	if err := rd.schema.Validate(); err != nil {
		return mlfeed.OffsetError(rd.name, 0, "names", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	rd.perChunk = min(rd.records, maxChunkRecords)
	if recBytes > 0 {
		rd.perChunk = min(max(chunkSize/recBytes, 1), rd.perChunk)
	}
	rd.identity = make([]int64, rd.perChunk+1)
	for k := range rd.identity {
		rd.identity[k] = int64(k)
	}
	for left := rd.records; left > 0; left -= rd.perChunk {
		n := min(left, rd.perChunk)
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: n, Samples: int64(n)})
	}
	return nil
}

// Schema returns one stream per array.
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table: whole records, about ReaderOptions.ChunkSize bytes each.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Headers returns the header of each array, in stream order.
func (rd *Reader) Headers() []*Header {
	hs := make([]*Header, len(rd.arrays))
	for i, a := range rd.arrays {
		hs[i] = a.h
	}
	return hs
}

// Details reports each array's dtype, shape, order, version and storage, and the streams of
// float16 arrays, read as float32.
func (rd *Reader) Details() map[string]any {
	arrays := make([]map[string]any, len(rd.arrays))
	for i, a := range rd.arrays {
		m := map[string]any{"descr": a.h.Descr, "shape": a.h.Shape, "fortran_order": a.h.Fortran,
			"version": fmt.Sprintf("%d.0", a.h.Version), "zero_copy": rd.mapped && a.stored && a.copyFree()}
		if rd.npz {
			m["member"] = a.member
			m["compression"] = map[bool]string{true: "deflate", false: "stored"}[a.deflated != nil]
		}
		arrays[i] = m
	}
	d := map[string]any{"arrays": arrays, "mmap": rd.mapped}
	var halves []string
	for _, a := range rd.arrays {
		if a.h.Half {
			halves = append(halves, a.stream.Name)
		}
	}
	if len(halves) > 0 {
		d["float16_read_as_float32"] = halves
	}
	if len(rd.ignored) > 0 {
		d["ignored_members"] = rd.ignored
	}
	return d
}

// load brings a deflated member into memory, or a Fortran-order array read without mmap.
func (rd *Reader) load(a *array) error {
	a.loadOnce.Do(func() {
		n, _ := a.h.DataSize()
		buf := mlfeed.NewBuffer(mlfeed.Uint8, int(n)).Bytes
		if a.deflated != nil {
			zr, err := a.deflated.Open()
			if err != nil {
				a.loadErr = mlfeed.OffsetError(rd.name, 0, a.member, fmt.Errorf("%w: %v", ErrFormat, err))
				return
			}
			defer zr.Close()
			if _, err := io.CopyN(io.Discard, zr, a.h.DataOffset); err == nil {
				_, err = io.ReadFull(zr, buf)
				if err == nil {
					_, err = io.Copy(io.Discard, zr) // verifies the checksum
				}
				if err != nil {
					a.loadErr = mlfeed.OffsetError(rd.name, 0, a.member, fmt.Errorf("%w: inflating: %v", ErrFormat, err))
					return
				}
			}
		} else if err := rd.readAt(buf, a.off); err != nil {
			a.loadErr = err
			return
		}
		a.mem = buf
	})
	return a.loadErr
}

func (rd *Reader) readAt(buf []byte, off int64) error {
	if n, err := rd.ra.ReadAt(buf, off); n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: file shrank while reading", ErrTruncated)
		}
		return mlfeed.OffsetError(rd.name, off+int64(n), "data", err)
	}
	return nil
}

// ReadChunk decodes chunk i. Little-endian C-order arrays of a mapped file are not copied.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse decodes chunk i as ReadChunk does, into the memory of prev where the values
// must be converted (big-endian, Fortran order, or read without mmap) and prev's are large
// enough.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (_ *mlfeed.Chunk, err error) {
	if rd.mapped {
		// The mapped file may shrink while values are converted from it. (Values handed out
		// without a copy fault in the caller, which mmap.Guard can catch there.)
		defer mmap.Recover(mmap.Catch(), &err)
	}
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("npy: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	from := i * rd.perChunk
	n := rd.chunks[i].Sequences
	c := prev
	if c == nil || len(c.Streams) != len(rd.arrays) {
		c = &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(rd.arrays))}
	}
	c.Sequences, c.IDs = n, nil
	for k, a := range rd.arrays {
		var old []byte
		if prev != nil && len(prev.Streams) == len(rd.arrays) {
			old = prev.Streams[k].Values.Bytes
		}
		v, err := rd.values(a, from, from+n, old)
		if err != nil {
			return nil, err
		}
		c.Streams[k] = mlfeed.StreamData{SeqStart: rd.identity[: n+1 : n+1], Values: v}
	}
	return c, nil
}

// values returns the values of records [from, to) of a.
func (rd *Reader) values(a *array, from, to int, old []byte) (mlfeed.Buffer, error) {
	if a.deflated != nil && a.inflate == nil || a.fortran() && a.mem == nil {
		if err := rd.load(a); err != nil {
			return mlfeed.Buffer{}, err
		}
	}
	elems := (to - from) * a.h.RecordElems()
	rb := int64(a.h.RecordElems() * a.h.ItemSize)
	lo, hi := int64(from)*rb, int64(to)*rb
	if a.h.Type == mlfeed.String {
		raw, err := rd.raw(a, lo, hi, nil)
		if err != nil {
			return mlfeed.Buffer{}, err
		}
		return rd.strings(a, raw, from)
	}
	if rd.region != nil && a.stored {
		// One system call maps the pages in, instead of a fault per page as they are read.
		rd.region.Populate(a.off+lo, a.off+hi)
	}
	if a.copyFree() {
		if a.mem != nil {
			return mlfeed.Buffer{Type: a.h.Type, Bytes: a.mem[lo:hi]}, nil
		}
		raw, err := rd.raw(a, lo, hi, old)
		return mlfeed.Buffer{Type: a.h.Type, Bytes: raw}, err
	}
	out := mlfeed.Buffer{Type: a.h.Type}
	if need := elems * a.h.Type.Size(); len(old) > 0 && cap(old) >= need && !a.copyFree() {
		out.Bytes = old[:need]
	} else {
		out = mlfeed.NewBuffer(a.h.Type, elems)
	}
	if a.h.Half {
		// float16: the stored values (C order; read or gathered into the second half of
		// out), widened into out
		raw := out.Bytes[len(out.Bytes)/2:]
		if a.fortran() {
			gatherFortran(raw, a.mem, a.h.Shape, a.h.ItemSize, from, to)
		} else {
			var err error
			if raw, err = rd.raw(a, lo, hi, raw); err != nil {
				return mlfeed.Buffer{}, err
			}
		}
		half.Widen(out.Bytes, raw, a.h.BigEndian)
		return out, nil
	}
	if a.fortran() {
		gatherFortran(out.Bytes, a.mem, a.h.Shape, a.h.ItemSize, from, to)
	} else {
		raw := a.mem
		if raw != nil {
			raw = raw[lo:hi]
		} else {
			var err error
			if raw, err = rd.raw(a, lo, hi, out.Bytes); err != nil {
				return mlfeed.Buffer{}, err
			}
		}
		copy(out.Bytes, raw)
	}
	if a.h.BigEndian {
		unit := a.h.ItemSize
		if a.h.Type == mlfeed.Complex64 || a.h.Type == mlfeed.Complex128 {
			unit /= 2
		}
		swapBytes(out.Bytes, unit)
	}
	if a.h.Unit != "" {
		if k, err := a.h.toTicks(out.Bytes); err != nil {
			off := a.off + lo + 8*int64(k)
			if a.fortran() {
				off = a.off // the element's place differs in Fortran order: its index says it
			}
			return out, mlfeed.OffsetError(rd.name, off, fmt.Sprintf("array %q element %d", a.stream.Name, int64(from)*int64(a.h.RecordElems())+int64(k)), err)
		}
	}
	return out, nil
}

// raw returns the data bytes [lo, hi) of a, from memory or read into dst (or a new buffer).
func (rd *Reader) raw(a *array, lo, hi int64, dst []byte) ([]byte, error) {
	if a.mem != nil {
		return a.mem[lo:hi], nil
	}
	if cap(dst) >= int(hi-lo) {
		dst = dst[:hi-lo]
	} else {
		dst = mlfeed.NewBuffer(mlfeed.Uint8, int(hi-lo)).Bytes
	}
	if a.inflate != nil {
		return dst, a.inflate.read(dst, lo)
	}
	return dst, rd.readAt(dst, a.off+lo)
}

// strings decodes fixed-width UTF-32 strings, dropping the trailing NULs numpy pads with.
func (rd *Reader) strings(a *array, raw []byte, from int) (mlfeed.Buffer, error) {
	width := a.h.ItemSize
	var order binary.ByteOrder = binary.LittleEndian
	if a.h.BigEndian {
		order = binary.BigEndian
	}
	if a.fortran() {
		g := make([]byte, len(raw))
		gatherFortran(g, a.mem, a.h.Shape, width, from, from+len(raw)/width/max(a.h.RecordElems(), 1))
		raw = g
	}
	out := mlfeed.NewBuffer(mlfeed.String, len(raw)/max(width, 1))
	var sb []byte
	for k := range out.Strings {
		cell := raw[k*width : (k+1)*width]
		end := len(cell)
		for end >= 4 && order.Uint32(cell[end-4:]) == 0 {
			end -= 4
		}
		sb = sb[:0]
		for j := 0; j < end; j += 4 {
			r := rune(order.Uint32(cell[j:]))
			if !utf8.ValidRune(r) {
				off := a.off + int64(from)*int64(a.h.RecordElems()*width) + int64(k*width+j)
				return out, mlfeed.OffsetError(rd.name, off, "string", fmt.Errorf("%w: %#x is not a Unicode code point", ErrFormat, uint32(r)))
			}
			sb = utf8.AppendRune(sb, r)
		}
		out.Strings[k] = string(sb)
	}
	return out, nil
}

// gatherFortran copies records [from, to) of a Fortran-order array (the first axis varies
// fastest) into dst in C order.
func gatherFortran(dst, src []byte, shape []int, size, from, to int) {
	rec := shape[1:]
	stride := make([]int, len(rec)) // element strides of the record axes in src
	s := shape[0]
	for k := range rec {
		stride[k] = s
		s *= rec[k]
	}
	idx := make([]int, len(rec))
	p := 0
	for r := from; r < to; r++ {
		for k := range idx {
			idx[k] = 0
		}
		off := r
		for {
			copy(dst[p:p+size], src[off*size:(off+1)*size])
			p += size
			k := len(rec) - 1
			for ; k >= 0; k-- {
				idx[k]++
				off += stride[k]
				if idx[k] < rec[k] {
					break
				}
				off -= stride[k] * rec[k]
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
}

// swapBytes reverses the byte order of each size-byte unit of b.
func swapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			binary.LittleEndian.PutUint16(b[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(b[i:])))
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(b[i:])))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(b[i:])))
		}
	}
}

// SequenceLengths returns the length of each sequence of chunk i: all ones.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("npy: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	return mlfeed.Ones(rd.chunks[i].Sequences), nil
}

// Close releases the mapping, the file and any member being inflated.
func (rd *Reader) Close() error {
	for _, a := range rd.arrays {
		if a.inflate != nil {
			a.inflate.closeStream()
		}
	}
	return rd.closers.Close()
}
