package idx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/byteswap"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sniff"
	"github.com/mlfeed/mlfeed/internal/spill"
)

// Default option values.
const (
	DefaultChunkSize = 4 << 20 // bytes of payload per chunk
	DefaultMaxMemory = 1 << 30 // decompressed bytes kept in memory before spilling to disk
)

// maxChunkRecords caps the records of one chunk.
const maxChunkRecords = 1 << 20

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// FileName names the data in error messages. Open sets it to the file's path when empty.
	FileName string
	// StreamName is the stream's name. Empty means "labels" for rank-1 files and "features"
	// for higher ranks (so an image file and a label file combine into features + labels).
	StreamName string
	// ChunkSize is the target payload size of one chunk in bytes; a chunk holds whole records,
	// at least one. Zero means DefaultChunkSize.
	ChunkSize int
	// MaxMemory bounds the decompressed bytes of a gzip file kept in memory; a larger payload
	// is decompressed into an unlinked temporary file that is memory-mapped. Zero means
	// DefaultMaxMemory; opened through the registry, a quarter of the memory budget of the
	// scheduler in format.Options.Context (--memory) when that is less.
	MaxMemory int64
	// NoMmap reads uncompressed files with ReadAt instead of mapping them.
	NoMmap bool
}

// Options is the former name of ReaderOptions.
//
// Deprecated: use ReaderOptions.
type Options = ReaderOptions

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "name", Doc: "the stream's name (default: labels for rank-1 files, features for higher ranks)"},
	{Name: "chunk_size", Doc: "target chunk size in bytes, whole records, at least one (default 4194304)", Aliases: []string{"chunkSize"}},
	{Name: "max_memory", Doc: "decompressed bytes of a gzip file kept in memory before spilling to a temporary file (default 1073741824)", Aliases: []string{"maxMemory"}},
	{Name: "mmap", Doc: "false reads a plain file with ReadAt instead of mapping it (default true)"},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "level", Doc: "gzip level 1..9 for .idx.gz output (default 6)"},
}

// Reader reads an IDX file. It implements mlfeed.Source with one stream. Its methods are safe
// for concurrent use.
type Reader struct {
	name     string
	header   Header
	stream   mlfeed.Stream
	chunks   []mlfeed.ChunkInfo
	perChk   int     // records per chunk
	identity []int64 // 0, 1, ..., perChk: the SeqStart of every chunk

	// The payload (big-endian elements, after the header) is in mem when mapped or held in
	// memory, else read through ra at base.
	mem  []byte
	ra   io.ReaderAt
	base int64

	gz        bool
	load      func() error // decompresses a gzip payload on first use
	loadOnce  sync.Once
	loadErr   error
	closers   closer.Stack
	mapped    bool
	maxMemory int64

	region    *mmap.Region  // the mapping of a plain file, when mapped
	populated []atomic.Bool // per chunk, when mapped: its pages are mapped in
}

// NewReader returns a reader of the IDX data in r, which holds size bytes. The header is
// checked against size before anything else is done; r must not be gzip-compressed (use Open
// or NewGzipReader for that).
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	name := fileName(opts)
	h, err := ReadHeader(io.NewSectionReader(r, 0, size), name)
	if err != nil {
		return nil, err
	}
	if err := checkPayload(h, size-h.Size(), name, false); err != nil {
		return nil, err
	}
	if err := checkEmptyRecords(h, name); err != nil {
		return nil, err
	}
	rd := newReader(h, name, opts)
	rd.ra, rd.base = r, h.Size()
	return rd, nil
}

// maxDeflateRatio bounds how much DEFLATE can expand its input (the format's limit is 1032:1).
const maxDeflateRatio = 1032

// NewGzipReader returns a reader of gzip-compressed IDX data read from r, which holds size
// compressed bytes (negative if unknown). The header is decoded at once and rejected if it
// announces more than DEFLATE could expand size bytes to; the payload is decompressed on the
// first ReadChunk (into memory, or into a temporary file beyond ReaderOptions.MaxMemory), so Schema
// and Chunks are cheap. The payload must hold exactly the bytes the header announces. reopen,
// when not nil, reopens r from its start for that later decompression; otherwise r is consumed
// where it stands.
func NewGzipReader(r io.Reader, size int64, opts *ReaderOptions, reopen func() (io.ReadCloser, error)) (*Reader, error) {
	name := fileName(opts)
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, mlfeed.OffsetError(name, 0, "gzip header", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	h, err := ReadHeader(zr, name)
	if err != nil {
		zr.Close()
		return nil, err
	}
	if want, _ := h.PayloadSize(); size >= 0 && want/maxDeflateRatio > size {
		zr.Close()
		return nil, mlfeed.OffsetError(name, h.Size(), "dimensions", fmt.Errorf("%w: header %v of %s announces %d bytes, more than %d compressed bytes can hold", ErrTooLarge, h.Dims, h.Type, want, size))
	}
	if err := checkEmptyRecords(h, name); err != nil {
		zr.Close()
		return nil, err
	}
	rd := newReader(h, name, opts)
	rd.gz = true
	rd.load = func() error {
		src := io.Reader(zr)
		if reopen != nil {
			zr.Close()
			f, err := reopen()
			if err != nil {
				return err
			}
			defer f.Close()
			z2, err := gzip.NewReader(f)
			if err != nil {
				return mlfeed.OffsetError(name, 0, "gzip header", fmt.Errorf("%w: %v", ErrFormat, err))
			}
			defer z2.Close()
			if _, err := io.CopyN(io.Discard, z2, h.Size()); err != nil {
				return err
			}
			src = z2
		} else {
			defer zr.Close()
		}
		return rd.decompress(src)
	}
	return rd, nil
}

// Open opens the named IDX file, plain or gzip-compressed (detected by its magic bytes).
// Plain files are memory-mapped unless ReaderOptions.NoMmap is set.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	opts = &o
	f, size, err := mmap.OpenFile(name)
	if err != nil {
		return nil, err
	}
	var magic [2]byte
	n, _ := f.ReadAt(magic[:], 0)
	if sniff.IsGzip(magic[:n]) {
		rd, err := NewGzipReader(f, size, opts, func() (io.ReadCloser, error) { return os.Open(name) })
		f.Close()
		return rd, err
	}
	rd, err := NewReader(f, size, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	rd.closers = append(rd.closers, f.Close)
	if !opts.NoMmap {
		if reg, err := mmap.Map(f, size); err == nil {
			rd.mem = reg.Bytes()[rd.base:]
			rd.mapped = true
			rd.region = reg
			rd.populated = make([]atomic.Bool, len(rd.chunks))
			rd.closers = append(rd.closers, reg.Close)
		}
	}
	return rd, nil
}

// fileName returns the name errors report.
func fileName(opts *ReaderOptions) string {
	if opts == nil {
		return ""
	}
	return opts.FileName
}

func newReader(h Header, name string, opts *ReaderOptions) *Reader {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	rd := &Reader{name: name, header: h, maxMemory: opts.MaxMemory}
	if rd.maxMemory <= 0 {
		rd.maxMemory = DefaultMaxMemory
	}
	st := mlfeed.Stream{Name: opts.StreamName, Storage: mlfeed.Dense, Type: h.Type, Dim: h.RecordElems()}
	if st.Name == "" {
		st.Name = "features"
		if len(h.Dims) == 1 {
			st.Name = "labels"
		}
	}
	// A shape when the dimension alone does not give the rank back: several dimensions, or
	// one of 0 or 1 (without a shape, Dim 1 means a rank-1 file, as MNIST labels are).
	if len(h.Dims) > 2 || len(h.Dims) == 2 && h.Dims[1] <= 1 {
		st.Shape = append([]int(nil), h.Dims[1:]...)
	}
	rd.stream = st
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	// Whole records of about chunk bytes, at least one and at most maxChunkRecords, so that
	// neither the chunk table nor a chunk's offsets outgrow the data.
	rd.perChk = min(h.Records(), maxChunkRecords)
	if rb := h.RecordBytes(); rb > 0 {
		rd.perChk = min(max(chunk/rb, 1), rd.perChk)
	}
	// Every sequence is one sample, so every chunk's SeqStart is a prefix of 0, 1, 2, ...:
	// one read-only slice serves them all.
	rd.identity = make([]int64, rd.perChk+1)
	for k := range rd.identity {
		rd.identity[k] = int64(k)
	}
	for left := h.Records(); left > 0; left -= rd.perChk {
		n := min(left, rd.perChk)
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: n, Samples: int64(n)})
	}
	return rd
}

// MaxEmptyRecords is the most records of zero bytes (a zero among the record dimensions) a
// file may announce: such records take no space in the file, so their number is bounded
// here instead of by the file's size.
const MaxEmptyRecords = 1 << 24

func checkEmptyRecords(h Header, name string) error {
	if h.RecordBytes() == 0 && h.Records() > MaxEmptyRecords {
		return mlfeed.OffsetError(name, 4, "dimensions", fmt.Errorf("%w: %d records of zero bytes (dimensions %v); at most %d are accepted", ErrTooLarge, h.Records(), h.Dims, MaxEmptyRecords))
	}
	return nil
}

// checkPayload compares the bytes after the header with what the header announces.
func checkPayload(h Header, have int64, name string, decompressed bool) error {
	want, _ := h.PayloadSize()
	field := "payload"
	if decompressed {
		field = "payload (decompressed)"
	}
	switch {
	case have < want:
		return mlfeed.OffsetError(name, h.Size()+have, field, fmt.Errorf("%w: header %v of %s announces %d data bytes, file has %d", ErrTruncated, h.Dims, h.Type, want, have))
	case have > want:
		return mlfeed.OffsetError(name, h.Size()+want, field, fmt.Errorf("%w: %d bytes of trailing data after the %d data bytes that header %v of %s announces", ErrFormat, have-want, want, h.Dims, h.Type))
	}
	return nil
}

// decompress reads the rest of a gzip payload into memory or, past maxMemory, into a mapped
// temporary file. Memory grows with the bytes actually decompressed, never with the header's
// claim alone.
func (rd *Reader) decompress(src io.Reader) error {
	want, _ := rd.header.PayloadSize()
	d, err := spill.ReadExpecting(io.LimitReader(src, want+1), want, rd.maxMemory, "mlfeed-idx-*")
	var re *spill.ReadError
	if errors.As(err, &re) {
		return rd.gzipError(re.Offset, re.Err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rd.name, err)
	}
	if err := checkPayload(rd.header, d.Size, rd.name, true); err != nil {
		d.Close()
		return err
	}
	if err := drain(src); err != nil {
		d.Close()
		return rd.gzipError(want, err)
	}
	if d.File == nil {
		rd.mem = d.Mem
		return nil
	}
	reg, err := mmap.Map(d.File, d.Size)
	if err != nil {
		rd.ra, rd.base = d.File, 0
		rd.closers = append(rd.closers, d.Close)
		return nil
	}
	rd.mem = reg.Bytes()
	rd.closers = append(rd.closers, reg.Close, d.Close)
	return nil
}

// drain reads to the end of the gzip stream, so that its checksum is verified and a corrupt
// or non-gzip tail is reported.
func drain(src io.Reader) error {
	n, err := io.Copy(io.Discard, src)
	if err == nil && n > 0 {
		return fmt.Errorf("%w: trailing data after the payload", ErrFormat)
	}
	return err
}

func (rd *Reader) gzipError(off int64, err error) error {
	if errors.Is(err, mlfeed.ErrFormat) {
		return mlfeed.OffsetError(rd.name, rd.header.Size()+off, "payload (decompressed)", err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return mlfeed.OffsetError(rd.name, rd.header.Size()+off, "payload (decompressed)", fmt.Errorf("%w: the gzip stream ends early", ErrTruncated))
	}
	return mlfeed.OffsetError(rd.name, rd.header.Size()+off, "payload (decompressed)", fmt.Errorf("%w: gzip: %v", ErrFormat, err))
}

// Header returns the file's header.
func (rd *Reader) Header() Header { return rd.header }

// Schema returns the one stream: Dim is the record's element count, Shape the record's
// dimensions when there are several.
func (rd *Reader) Schema() mlfeed.Schema { return mlfeed.Schema{Streams: []mlfeed.Stream{rd.stream}} }

// Chunks returns the chunk table: whole records, about Options.ChunkSize bytes each.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Details reports the type code, dimensions, compression and access method.
func (rd *Reader) Details() map[string]any {
	code, _ := typeCode(rd.header.Type)
	d := map[string]any{
		"idx_type":    fmt.Sprintf("0x%02X %s", code, rd.header.Type),
		"dims":        rd.header.Dims,
		"compression": "none",
		"mmap":        rd.mapped,
	}
	if rd.gz {
		d["compression"] = "gzip"
		if want, _ := rd.header.PayloadSize(); want > rd.maxMemory {
			d["decompressed_to"] = "temporary file" // past max_memory
		}
	}
	return d
}

// Payload returns the big-endian element bytes of records [from, to), without copying when the
// file is mapped or decompressed in memory.
func (rd *Reader) Payload(from, to int) ([]byte, error) {
	return rd.payload(from, to, nil)
}

// payload is Payload, reading a file read with ReadAt into buf when it has room (into new
// memory when not).
func (rd *Reader) payload(from, to int, buf []byte) ([]byte, error) {
	if from < 0 || to > rd.header.Records() || from > to {
		return nil, fmt.Errorf("idx: records [%d, %d) outside [0, %d)", from, to, rd.header.Records())
	}
	if rd.load != nil {
		rd.loadOnce.Do(func() { rd.loadErr = rd.load() })
		if rd.loadErr != nil {
			return nil, rd.loadErr
		}
	}
	rb := int64(rd.header.RecordBytes())
	a, b := int64(from)*rb, int64(to)*rb
	if rd.mem != nil {
		return rd.mem[a:b], nil
	}
	if int64(cap(buf)) >= b-a {
		buf = buf[:b-a]
	} else {
		buf = mlfeed.NewBuffer(mlfeed.Uint8, int(b-a)).Bytes
	}
	if n, err := rd.ra.ReadAt(buf, rd.base+a); n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: file shrank while reading", ErrTruncated)
		}
		return nil, mlfeed.OffsetError(rd.name, rd.base+a+int64(n), "payload", err)
	}
	return buf, nil
}

// ReadChunk decodes chunk i into little-endian values. uint8 and int8 values of mapped or
// in-memory files are not copied.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse decodes chunk i as ReadChunk does, into the values of prev when they are
// large enough (the Source contract): prev is a chunk an earlier ReadChunkReuse of this reader
// returned, which the caller no longer uses, or nil. Values that ReadChunk does not copy
// (uint8 and int8 of a mapped file) ignore prev.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("idx: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rd.load != nil {
		rd.loadOnce.Do(func() { rd.loadErr = rd.load() })
		if rd.loadErr != nil {
			return nil, rd.loadErr
		}
	}
	from := i * rd.perChk
	n := rd.chunks[i].Sequences
	sz := rd.header.Type.Size()
	// prev's values are memory to decode into unless they are the file's own bytes (the
	// one-byte values of mapped and decompressed files).
	var mem []byte
	if prev != nil && len(prev.Streams) == 1 && prev.Streams[0].Values.Type == rd.header.Type && (rd.mem == nil || sz > 1) {
		mem = prev.Streams[0].Values.Bytes
	}
	raw, err := rd.payload(from, from+n, mem) // files read with ReadAt: into mem if it fits
	if err != nil {
		return nil, err
	}
	values := mlfeed.Buffer{Type: rd.header.Type, Bytes: raw}
	if sz > 1 {
		switch {
		case rd.mem == nil: // raw is memory of our own: swapped where it is
		case cap(mem) >= len(raw):
			values.Bytes = mem[:len(raw)]
		default:
			values = mlfeed.NewBuffer(rd.header.Type, len(raw)/sz)
		}
		byteswap.Into(values.Bytes, raw, sz)
	}
	seq := rd.identity[: n+1 : n+1]
	c := prev
	if c == nil || len(c.Streams) != 1 {
		c = &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, 1)}
	}
	c.Sequences, c.IDs = n, nil
	c.Streams[0] = mlfeed.StreamData{SeqStart: seq, Values: values}
	return c, nil
}

// RawSamples reports where chunk i's records lie in the memory the reader holds (the mapped
// file, or a gzip file's decompressed payload), for the minibatch engine to pack them from
// there without decoding the chunk (mlfeed.RawSampler): record q's elements are
// b[q*stride:], big-endian (swap is the element size when above 1). ok is false for stream
// indices other than 0, for files read with ReadAt (ReaderOptions.NoMmap), and when a gzip
// payload fails to decompress (ReadChunk reports why). For a mapped file it first maps the
// chunk's pages in, once per chunk, on the caller's goroutine (one system call instead of a
// page fault per page); the bytes may fault if the file shrinks, so read them under
// internal/mmap's guard, as the engine does.
func (rd *Reader) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if stream != 0 || i < 0 || i >= len(rd.chunks) {
		return nil, 0, 0, 0, false
	}
	if rd.load != nil {
		rd.loadOnce.Do(func() { rd.loadErr = rd.load() })
		if rd.loadErr != nil {
			return nil, 0, 0, 0, false
		}
	}
	rb := rd.header.RecordBytes()
	if rd.mem == nil || rb <= 0 {
		return nil, 0, 0, 0, false
	}
	from, n := i*rd.perChk, rd.chunks[i].Sequences
	if rd.region != nil && !rd.populated[i].Swap(true) {
		rd.region.Populate(rd.base+int64(from*rb), rd.base+int64((from+n)*rb))
	}
	if sz := rd.header.Type.Size(); sz > 1 {
		swap = sz
	}
	return rd.mem[from*rb : (from+n)*rb], 0, rb, swap, true
}

// SequenceLengths returns chunk i's sequence lengths: an IDX file is a table, one sample per
// record.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("idx: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	return mlfeed.Ones(rd.chunks[i].Sequences), nil
}

// Close releases the mapping and the file.
func (rd *Reader) Close() error { return rd.closers.Close() }

// parseOptions reads the format options (ReadParams).
func parseOptions(params map[string]string) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("idx", params, ReadParams)
	if err != nil {
		return nil, err
	}
	o := &ReaderOptions{}
	for k, v := range params {
		var err error
		switch k {
		case "name":
			o.StreamName = v
		case "chunk_size":
			o.ChunkSize, err = strconv.Atoi(v)
		case "max_memory":
			o.MaxMemory, err = strconv.ParseInt(v, 10, 64)
		case "mmap":
			var b bool
			b, err = strconv.ParseBool(v)
			o.NoMmap = !b
		}
		if err != nil {
			return nil, format.UsageErrorf("idx: option %s=%s: %v", k, v, err)
		}
	}
	return o, nil
}
