package cbf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/keep"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// FileName names the data in error messages. Open sets it to the file's path when empty.
	FileName string
	// Alias renames streams, as CNTK's `input = [ newName = [ alias = "nameInFile" ] ]` does:
	// each key is the name to expose, its value the stream's name in the file, which the
	// exposed stream keeps as its Alias. Streams not named keep their file names. Nil renames
	// nothing.
	Alias map[string]string
	// KeepDataInMemory keeps every decoded chunk for the reader's lifetime, so each chunk is
	// decoded once (CNTK's keepDataInMemory). Memory use grows to the whole data set.
	KeepDataInMemory bool
	// NoMmap makes Open read chunks with ReadAt instead of memory-mapping the file.
	NoMmap bool

	// strict turns the checks that reading leaves out on: bytes between or after structures,
	// the order of sparse indices. Validate sets it.
	strict bool
	// inputs are streams declared through format.Options.Inputs, checked against the file.
	inputs []mlfeed.Stream
}

// Options is the former name of ReaderOptions.
//
// Deprecated: use ReaderOptions.
type Options = ReaderOptions

// Reader reads a CBF file. It implements mlfeed.Source and mlfeed.Detailer; its methods are
// safe for concurrent use.
type Reader struct {
	name    string
	size    int64
	header  Header
	schema  mlfeed.Schema
	chunks  []mlfeed.ChunkInfo
	ends    []int64 // end offset of each chunk (the next chunk's offset, or the header's)
	ra      io.ReaderAt
	mem     []byte       // the whole file, when mapped
	region  *mmap.Region // the mapping, when mapped
	mapped  bool
	strict  bool
	kept    *keep.Chunks[*mlfeed.Chunk] // with KeepDataInMemory: the chunks decoded so far
	closers closer.Stack

	inPlace bool     // every stream dense: chunks read with ReadAt are decoded in place
	backing sync.Map // weak.Pointer[mlfeed.Chunk] -> []byte: the memory of chunks decoded in place

	populated []atomic.Bool  // per chunk, when mapped: its pages are mapped in
	raw       []atomic.Int32 // per chunk, when mapped: rawUnknown, rawYes or rawNo
}

// What RawSamples found of a chunk's layout.
const (
	rawUnknown = iota
	rawYes     // every stream dense, every sequence one sample
	rawNo
)

// NewReader returns a reader of the CBF data in r, which holds size bytes. It reads and checks
// the prefix, the trailer, the header and the chunk table; chunk data is read by ReadChunk.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	rd := &Reader{name: opts.FileName, size: size, ra: r, strict: opts.strict}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	if err := rd.buildSchema(opts.Alias); err != nil {
		return nil, err
	}
	if err := rd.checkInputs(opts.inputs); err != nil {
		return nil, err
	}
	rd.inPlace = rd.inPlaceOK()
	if opts.KeepDataInMemory {
		rd.kept = keep.New(len(rd.chunks), func(_ context.Context, i int) (*mlfeed.Chunk, error) { return rd.load(i) })
	}
	return rd, nil
}

// Open opens the named CBF file. The file is memory-mapped, unless Options.NoMmap is set or
// the platform cannot map files, in which case chunks are read with ReadAt.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	rd, mf, err := mmap.Open(name, mmap.Unless(o.NoMmap), func(mf *mmap.File) (*Reader, error) {
		return NewReader(mf.File, mf.Size, &o)
	})
	if err != nil {
		return nil, err
	}
	rd.closers = append(rd.closers, mf.Close)
	if mf.Region != nil {
		rd.mem, rd.region = mf.Bytes(), mf.Region
		rd.mapped = true
		rd.populated = make([]atomic.Bool, len(rd.chunks))
		rd.raw = make([]atomic.Int32, len(rd.chunks))
	}
	return rd, nil
}

// posErr returns a positional error at byte offset off, naming field, that wraps kind.
func (rd *Reader) posErr(off int64, field string, kind error, format string, args ...any) error {
	return mlfeed.OffsetError(rd.name, off, field, fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...)))
}

// readAt reads n bytes at off; a short read is ErrTruncated at the first missing byte.
func (rd *Reader) readAt(off int64, n int, field string) ([]byte, error) {
	buf := mlfeed.NewBuffer(mlfeed.Uint8, n).Bytes
	got, err := rd.ra.ReadAt(buf, off)
	if got == n {
		return buf, nil
	}
	if err == nil || err == io.EOF {
		return nil, rd.posErr(off+int64(got), field, ErrTruncated, "the data ends (it has %d bytes)", rd.size)
	}
	return nil, mlfeed.OffsetError(rd.name, off+int64(got), field, err)
}

func (rd *Reader) readHeader() error {
	h := &rd.header
	// Prefix.
	pre, err := rd.readAt(0, int(min(prefixSize, rd.size)), "magic")
	if err != nil {
		return err
	}
	magic := le.AppendUint64(nil, Magic)
	if n := len(pre); n < 8 {
		if string(pre) == string(magic[:n]) {
			return rd.posErr(rd.size, "magic", ErrTruncated, "the data ends after %d bytes", rd.size)
		}
		return rd.posErr(0, "magic", ErrFormat, "not a CNTK binary format file")
	}
	if m := le.Uint64(pre); m != Magic {
		return rd.posErr(0, "magic", ErrFormat, "not a CNTK binary format file (magic %#016x, want %#016x)", m, Magic)
	}
	if len(pre) < prefixSize {
		return rd.posErr(rd.size, "version", ErrTruncated, "the data ends after %d bytes", rd.size)
	}
	if h.Version = le.Uint32(pre[8:]); h.Version != Version {
		return rd.posErr(8, "version", ErrUnsupported, "version %d; only version %d is supported", h.Version, Version)
	}

	// Trailer: the header offset.
	if rd.size < prefixSize+headerFixed+trailerSize {
		return rd.posErr(rd.size, "header", ErrTruncated, "the data ends after %d bytes, before a header and trailer", rd.size)
	}
	tr, err := rd.readAt(rd.size-trailerSize, trailerSize, "header offset")
	if err != nil {
		return err
	}
	hoff := int64(le.Uint64(tr))
	maxOff := rd.size - trailerSize - headerFixed
	if hoff < prefixSize || hoff > maxOff {
		return rd.posErr(rd.size-trailerSize, "header offset", ErrFormat, "header offset %d outside [%d, %d]", hoff, prefixSize, maxOff)
	}
	h.Offset = hoff
	// The header runs to the trailer. It is read as far as its fields need, so that a bogus
	// header offset does not make us read the whole file.
	hlen := int(rd.size - trailerSize - hoff)
	var hb []byte
	need := func(n int) error { // n <= hlen
		if n <= len(hb) {
			return nil
		}
		want := min(hlen, max(n, 2*len(hb), 4096))
		more, err := rd.readAt(hoff+int64(len(hb)), want-len(hb), "header")
		hb = append(hb, more...)
		return err
	}
	at := func(p int) int64 { return hoff + int64(p) }
	if err := need(headerFixed); err != nil {
		return err
	}

	if m := le.Uint64(hb); m != Magic {
		return rd.posErr(hoff, "header magic", ErrFormat, "magic %#016x at the header offset, want %#016x", m, Magic)
	}
	numChunks := le.Uint32(hb[8:])
	numStreams := le.Uint32(hb[12:])
	p := headerFixed
	if numStreams == 0 {
		return rd.posErr(at(12), "numStreams", ErrFormat, "the file declares no streams")
	}
	if uint64(numStreams) > uint64(hlen-p)/minStreamDesc {
		return rd.posErr(at(12), "numStreams", ErrTooLarge, "%d streams need at least %d bytes, the header has %d left", numStreams, uint64(numStreams)*minStreamDesc, hlen-p)
	}
	h.Streams = make([]StreamHeader, numStreams)
	seen := make(map[string]bool, numStreams)
	for k := range h.Streams {
		s := &h.Streams[k]
		field := func(f string) string { return fmt.Sprintf("stream %d %s", k, f) }
		if hlen-p < 5 {
			return rd.posErr(at(hlen), field("encoding"), ErrTruncated, "the header ends")
		}
		if err := need(p + 5); err != nil {
			return err
		}
		switch hb[p] {
		case encDense:
			s.Storage = mlfeed.Dense
		case encSparse:
			s.Storage = mlfeed.Sparse
		default:
			return rd.posErr(at(p), field("encoding"), ErrFormat, "unknown encoding %d (want 0 dense or 1 sparse)", hb[p])
		}
		n := le.Uint32(hb[p+1:])
		if int64(n) > int64(hlen-p-10) {
			return rd.posErr(at(p+1), field("name length"), ErrTooLarge, "name length %d, the header has %d bytes left", n, hlen-p-5)
		}
		p += 5
		if err := need(p + int(n) + 5); err != nil {
			return err
		}
		name := hb[p : p+int(n)]
		if err := checkName(name); err != nil {
			return rd.posErr(at(p), field("name"), ErrFormat, "%v", err)
		}
		s.Name = string(name)
		if seen[s.Name] {
			return rd.posErr(at(p), field("name"), ErrFormat, "stream name %q used twice", s.Name)
		}
		seen[s.Name] = true
		p += int(n)
		switch hb[p] {
		case elemFloat:
			s.Type = mlfeed.Float32
		case elemDouble:
			s.Type = mlfeed.Float64
		default:
			return rd.posErr(at(p), field("element type"), ErrFormat, "unknown element type %d (want 0 float or 1 double)", hb[p])
		}
		dim := le.Uint32(hb[p+1:])
		switch {
		case dim == 0:
			return rd.posErr(at(p+1), field("dim"), ErrFormat, "dimension 0")
		case s.Storage == mlfeed.Sparse && dim > math.MaxInt32:
			return rd.posErr(at(p+1), field("dim"), ErrFormat, "sparse dimension %d does not fit int32", dim)
		}
		s.Dim = int(dim)
		p += 5
	}

	if uint64(numChunks) > uint64(hlen-p)/chunkEntrySize {
		return rd.posErr(at(8), "numChunks", ErrTooLarge, "%d chunks need a %d-byte table, the header has %d bytes left", numChunks, uint64(numChunks)*chunkEntrySize, hlen-p)
	}
	if err := need(p + int(numChunks)*chunkEntrySize); err != nil {
		return err
	}
	table := p
	h.Chunks = make([]ChunkEntry, numChunks)
	for k := range h.Chunks {
		c := &h.Chunks[k]
		c.Offset = int64(le.Uint64(hb[p:]))
		c.Sequences = le.Uint32(hb[p+8:])
		c.Samples = le.Uint32(hb[p+12:])
		field := fmt.Sprintf("chunk table entry %d", k)
		switch {
		case c.Offset < prefixSize || c.Offset > hoff:
			return rd.posErr(at(p), field, ErrFormat, "chunk offset %d outside the data section [%d, %d]", c.Offset, prefixSize, hoff)
		case k > 0 && c.Offset < h.Chunks[k-1].Offset:
			return rd.posErr(at(p), field, ErrFormat, "chunk offset %d is before chunk %d's offset %d", c.Offset, k-1, h.Chunks[k-1].Offset)
		case k == 0 && rd.strict && c.Offset != prefixSize:
			return rd.posErr(at(p), field, ErrFormat, "%d bytes between the prefix and the first chunk", c.Offset-prefixSize)
		}
		p += chunkEntrySize
	}
	if rd.strict && p != hlen {
		return rd.posErr(at(p), "trailer", ErrFormat, "%d bytes between the chunk table and the trailer", hlen-p)
	}
	if rd.strict && numChunks == 0 && hoff != prefixSize {
		return rd.posErr(prefixSize, "data", ErrFormat, "%d bytes of data, but no chunks", hoff-prefixSize)
	}

	// Each chunk's counts against its size: every sequence has a length and, per stream, at
	// least a sample count (dense) or a sample count and an nnz (sparse); every sample of a
	// sequence's longest stream takes at least 4 bytes.
	perSeq := int64(4)
	for _, s := range h.Streams {
		perSeq += 4
		if s.Storage == mlfeed.Sparse {
			perSeq += 4
		}
	}
	rd.ends = make([]int64, len(h.Chunks))
	rd.chunks = make([]mlfeed.ChunkInfo, len(h.Chunks))
	for k, c := range h.Chunks {
		end := hoff
		if k+1 < len(h.Chunks) {
			end = h.Chunks[k+1].Offset
		}
		rd.ends[k] = end
		size := end - c.Offset
		entry := at(table + k*chunkEntrySize)
		switch {
		case int64(c.Sequences) > size/perSeq:
			return rd.posErr(entry+8, fmt.Sprintf("chunk table entry %d numSequences", k), ErrTooLarge,
				"%d sequences need at least %d bytes each, the chunk has %d bytes", c.Sequences, perSeq, size)
		case int64(c.Samples) > size/4:
			return rd.posErr(entry+12, fmt.Sprintf("chunk table entry %d numSamples", k), ErrTooLarge,
				"%d samples need at least 4 bytes each, the chunk has %d bytes", c.Samples, size)
		case c.Sequences == 0 && c.Samples != 0:
			return rd.posErr(entry+12, fmt.Sprintf("chunk table entry %d numSamples", k), ErrFormat,
				"%d samples in a chunk of no sequences", c.Samples)
		}
		rd.chunks[k] = mlfeed.ChunkInfo{Sequences: int(c.Sequences), Samples: int64(c.Samples)}
	}
	return nil
}

// checkName accepts non-empty, printable UTF-8 stream names.
func checkName(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty stream name")
	}
	if !utf8.Valid(b) {
		return fmt.Errorf("stream name %q is not UTF-8", b)
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Errorf("stream name %q holds a non-printable character", b)
		}
	}
	return nil
}

func (rd *Reader) buildSchema(alias map[string]string) error {
	rd.schema.Streams = make([]mlfeed.Stream, len(rd.header.Streams))
	for k, s := range rd.header.Streams {
		rd.schema.Streams[k] = mlfeed.Stream{Name: s.Name, Storage: s.Storage, Type: s.Type, Dim: s.Dim}
	}
	renamed := map[string]string{} // name in file -> new name
	for newName, inFile := range alias {
		if prev, ok := renamed[inFile]; ok {
			return fmt.Errorf("%w: streams %q and %q both alias %q", format.ErrUsage, prev, newName, inFile)
		}
		renamed[inFile] = newName
		k := rd.fileIndex(inFile)
		if k < 0 {
			return fmt.Errorf("%w: alias %q of %q: %s has no stream %q (streams: %s)", format.ErrUsage, inFile, newName, rd.displayName(), inFile, rd.fileNames())
		}
		st := &rd.schema.Streams[k]
		st.Name = newName
		if newName != inFile {
			st.Alias = inFile
		}
	}
	if err := rd.schema.Validate(); err != nil {
		return fmt.Errorf("%w: %s: renaming streams: %v", format.ErrUsage, rd.displayName(), err)
	}
	return nil
}

func (rd *Reader) fileIndex(name string) int {
	for k, s := range rd.header.Streams {
		if s.Name == name {
			return k
		}
	}
	return -1
}

func (rd *Reader) fileNames() string {
	s := ""
	for k, st := range rd.header.Streams {
		if k > 0 {
			s += ", "
		}
		s += st.Name
	}
	return s
}

func (rd *Reader) displayName() string {
	if rd.name == "" {
		return "<input>"
	}
	return rd.name
}

// Header returns the file's header and chunk table.
func (rd *Reader) Header() Header { return rd.header }

// Schema returns the streams in file order, renamed as Options.Alias says.
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table: the file's chunks, with their sequence and sample counts.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Details reports the version, where the header is and how chunks are read.
func (rd *Reader) Details() map[string]any {
	return map[string]any{
		"version":             rd.header.Version,
		"header_offset":       rd.header.Offset,
		"header_bytes":        rd.size - rd.header.Offset,
		"mmap":                rd.mapped,
		"keep_data_in_memory": rd.kept != nil,
	}
}

// ReadChunk decodes chunk i. Values of a chunk that holds one sequence are not copied: they
// point into the mapped file (or the chunk's bytes), and stay valid until Close.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("cbf: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rd.kept != nil {
		c, _, err := rd.kept.Chunk(ctx, i)
		return c, err
	}
	return rd.load(i)
}

// ReadChunkReuse decodes chunk i as ReadChunk does, writing into the memory of prev where it
// is large enough: prev is a chunk an earlier ReadChunkReuse call of this reader returned,
// which the caller no longer uses (nil for the first call). A loop that handles one chunk at
// a time then allocates almost nothing. With KeepDataInMemory, prev is ignored.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if rd.kept != nil || i < 0 || i >= len(rd.chunks) {
		return rd.ReadChunk(ctx, i)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if prev != nil && len(prev.Streams) != len(rd.header.Streams) {
		prev = nil
	}
	return rd.loadInto(i, prev)
}

func (rd *Reader) load(i int) (*mlfeed.Chunk, error) { return rd.loadInto(i, nil) }

// RawSamples reports where chunk i's samples of a stream lie in the mapped file, for the
// minibatch engine to pack them from there without decoding the chunk
// (mlfeed.RawSampler): when every stream is dense and every sequence one sample long,
// sample q's values are b[off+q*stride:], little-endian, after its one-sample count. ok is
// false for other chunks and for files read with ReadAt (ReaderOptions.NoMmap). The first
// call for a chunk maps its pages in and checks its layout as ReadChunk would (the length
// array, each count, and in strict mode the chunk's end); a chunk that fails is left to
// ReadChunk, which reports why. The bytes may fault if the file shrinks: call it, and read
// them, under internal/mmap's guard, as the engine does.
func (rd *Reader) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if rd.raw == nil || i < 0 || i >= len(rd.chunks) || stream < 0 || stream >= len(rd.header.Streams) {
		return nil, 0, 0, 0, false
	}
	st := rd.raw[i].Load()
	if st == rawUnknown {
		st = rawNo
		if rd.rawLayout(i) {
			st = rawYes
		}
		rd.raw[i].Store(st)
	}
	if st != rawYes {
		return nil, 0, 0, 0, false
	}
	ent := rd.header.Chunks[i]
	nseq := int(ent.Sequences)
	p := 4 * nseq
	for k := range stream {
		p += nseq * (4 + rd.rowBytes(k))
	}
	return rd.mem[ent.Offset:rd.ends[i]], p + 4, 4 + rd.rowBytes(stream), 0, true
}

// rowBytes returns the bytes of one sample of dense stream k.
func (rd *Reader) rowBytes(k int) int {
	return rd.header.Streams[k].Dim * rd.header.Streams[k].Type.Size()
}

// rawLayout maps chunk i's pages in and reports whether every stream is dense and every
// sequence one sample long in it, with the counts that say so all in place.
func (rd *Reader) rawLayout(i int) bool {
	ent := rd.header.Chunks[i]
	nseq := int(ent.Sequences)
	if int64(ent.Samples) != int64(nseq) {
		return false
	}
	rd.populate(i)
	b := rd.mem[ent.Offset:rd.ends[i]]
	if len(b) < 4*nseq {
		return false
	}
	for q := range nseq {
		if le.Uint32(b[4*q:]) != 1 {
			return false
		}
	}
	p := 4 * nseq
	for k := range rd.header.Streams {
		row := rd.rowBytes(k)
		if rd.header.Streams[k].Storage != mlfeed.Dense || row <= 0 || (len(b)-p)/(4+row) < nseq {
			return false
		}
		for range nseq {
			if le.Uint32(b[p:]) != 1 {
				return false
			}
			p += 4 + row
		}
	}
	return !rd.strict || p == len(b)
}

// SequenceLengths returns the length of every sequence of chunk i (its longest stream's sample
// count) from the chunk's length array, without decoding the chunk: the minibatch engine uses
// it (Source.SequenceLengths) to seek and to skip other workers' sequences. The lengths
// must add up to the chunk table's sample count.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("cbf: chunk %d outside [0, %d)", i, len(rd.chunks))
	}
	ent := rd.header.Chunks[i]
	field := fmt.Sprintf("chunk %d sequence lengths", i)
	var b []byte
	if rd.mem != nil {
		b = rd.mem[ent.Offset : ent.Offset+4*int64(ent.Sequences)]
	} else {
		var err error
		if b, err = rd.readAt(ent.Offset, 4*int(ent.Sequences), field); err != nil {
			return nil, err
		}
	}
	out := make([]int64, ent.Sequences)
	var sum int64
	for q := range out {
		out[q] = int64(le.Uint32(b[4*q:]))
		sum += out[q]
	}
	if sum != int64(ent.Samples) {
		return nil, rd.posErr(ent.Offset, field, ErrFormat, "they add up to %d samples, the chunk table says %d", sum, ent.Samples)
	}
	return out, nil
}

func (rd *Reader) loadInto(i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	off, end := rd.header.Chunks[i].Offset, rd.ends[i]
	var b []byte
	if rd.mem != nil {
		rd.populate(i)
		b = rd.mem[off:end]
	} else if rd.inPlace {
		return rd.readInPlace(i, prev)
	} else {
		var err error
		if b, err = rd.readAt(off, int(end-off), fmt.Sprintf("chunk %d", i)); err != nil {
			return nil, err
		}
	}
	d := decoder{rd: rd, chunk: i, b: b, base: off, prev: prev}
	return d.decode()
}

// populate maps the pages of chunk i in, on the caller's goroutine, unless that has been
// done: one system call instead of a page fault per page. Reading ahead is the caller's
// (a scheduler reading the next chunk on another thread).
func (rd *Reader) populate(i int) {
	if !mmap.CanPopulate || rd.populated[i].Swap(true) {
		return
	}
	rd.region.Populate(rd.header.Chunks[i].Offset, rd.ends[i])
}

// Close releases the mapping and the file. Chunks read before must not be used after it.
func (rd *Reader) Close() error {
	rd.mem = nil
	return rd.closers.Close()
}

// decoder decodes the bytes b of one chunk, which start at file offset base, into new memory
// or into the memory of prev. It reads the chunk once, front to back: each sequence's counts
// are checked, its sparse indices checked, and its values (and indices) copied in one pass.
type decoder struct {
	rd    *Reader
	chunk int
	b     []byte
	base  int64
	prev  *mlfeed.Chunk
}

// old returns stream k's data in prev, or an empty StreamData.
func (d *decoder) old(k int) *mlfeed.StreamData {
	if d.prev == nil {
		return &mlfeed.StreamData{}
	}
	return &d.prev.Streams[k]
}

// reusable returns old's memory as an empty slice to append to, or nil when it points into
// the mapped file, which must not be written.
func (d *decoder) reusable(old []byte) []byte {
	if d.rd.mem != nil && overlaps(old[:cap(old)], d.rd.mem) {
		return nil
	}
	return old[:0]
}

// grow returns dst with room for n more bytes. New memory (aligned for typed views) holds
// hint bytes, or twice dst's, but never more than an eighth more than limit, which bounds
// what the stream can need (len(dst)+n <= limit). A good hint makes one allocation do for
// the whole chunk; the eighth lets memory that ReadChunkReuse outgrew fit the next chunks.
func grow(dst []byte, n, hint, limit int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	c := max(min(max(hint, 2*cap(dst)), limit+limit/8), len(dst)+n)
	out := mlfeed.NewBuffer(mlfeed.Uint8, c).Bytes
	return out[:copy(out, dst)]
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}

// int64s returns old resliced to n elements when it can hold them, else a new slice.
func int64s(old []int64, n int) []int64 {
	if cap(old) >= n {
		return old[:n]
	}
	return make([]int64, n)
}

func (d *decoder) fail(p int, field string, kind error, format string, args ...any) error {
	return d.rd.posErr(d.base+int64(p), fmt.Sprintf("chunk %d %s", d.chunk, field), kind, format, args...)
}

func (d *decoder) decode() (*mlfeed.Chunk, error) {
	ent := d.rd.header.Chunks[d.chunk]
	nseq := int(ent.Sequences)
	var sum uint64
	for q := 0; q < nseq; q++ {
		sum += uint64(le.Uint32(d.b[4*q:]))
	}
	if sum != uint64(ent.Samples) {
		return nil, d.fail(0, "sequence lengths", ErrFormat, "they add up to %d samples, the chunk table says %d", sum, ent.Samples)
	}
	c := &mlfeed.Chunk{Sequences: nseq, Streams: make([]mlfeed.StreamData, len(d.rd.header.Streams))}
	p := 4 * nseq
	for k := range d.rd.header.Streams {
		var err error
		if d.rd.header.Streams[k].Storage == mlfeed.Dense {
			p, err = d.dense(k, p, nseq, &c.Streams[k])
		} else {
			p, err = d.sparse(k, p, nseq, &c.Streams[k])
		}
		if err != nil {
			return nil, err
		}
	}
	for q := 0; q < nseq; q++ {
		var longest int64
		for k := range c.Streams {
			longest = max(longest, c.Streams[k].SeqStart[q+1]-c.Streams[k].SeqStart[q])
		}
		if l := int64(le.Uint32(d.b[4*q:])); l != longest {
			return nil, d.fail(4*q, fmt.Sprintf("sequence %d length", q), ErrFormat, "the length table says %d samples, the longest stream has %d", l, longest)
		}
	}
	if d.rd.strict && p != len(d.b) {
		return nil, d.fail(p, "end", ErrFormat, "%d bytes after the last stream's data", len(d.b)-p)
	}
	return c, nil
}

// dense decodes stream k's sequences starting at p and returns the offset after them. The
// values of a chunk of one sequence are not copied.
func (d *decoder) dense(k, p, nseq int, out *mlfeed.StreamData) (int, error) {
	st := &d.rd.header.Streams[k]
	per := int64(st.Dim) * int64(st.Type.Size()) // bytes per sample
	old := d.old(k)
	out.SeqStart = int64s(old.SeqStart, nseq+1)
	out.SeqStart[0] = 0
	var vals []byte
	if nseq > 1 {
		vals = d.reusable(old.Values.Bytes)
	}
	// The stream has at most the chunk table's samples (the sum of the sequence lengths),
	// and no more bytes than the chunk has left.
	limit := len(d.b) - p
	hint := int(min(int64(d.rd.header.Chunks[d.chunk].Samples)*per, int64(limit)))
	for q := range nseq {
		if len(d.b)-p < 4 {
			return 0, d.fail(p, d.field(k, q, "nSamples"), ErrTruncated, "the chunk ends")
		}
		n := int64(le.Uint32(d.b[p:]))
		if left := int64(len(d.b) - p - 4); n > left/per {
			return 0, d.fail(p, d.field(k, q, "nSamples"), ErrTooLarge, "%d samples of %d bytes each, the chunk has %d bytes left", n, per, left)
		}
		out.SeqStart[q+1] = out.SeqStart[q] + n
		end := p + 4 + int(n*per)
		if seg := d.b[p+4 : end : end]; nseq == 1 {
			vals = seg
		} else {
			vals = append(grow(vals, len(seg), hint, limit), seg...)
		}
		p = end
	}
	if vals == nil {
		vals = []byte{}
	}
	out.Values = mlfeed.Buffer{Type: st.Type, Bytes: vals}
	return p, nil
}

// sparse decodes stream k's sequences starting at p and returns the offset after them. The
// values and indices of a chunk of one sequence are not copied (the indices when aligned).
func (d *decoder) sparse(k, p, nseq int, out *mlfeed.StreamData) (int, error) {
	st := &d.rd.header.Streams[k]
	es := int64(st.Type.Size())
	old := d.old(k)
	out.SeqStart = int64s(old.SeqStart, nseq+1)
	out.SeqStart[0] = 0
	ss := old.SampleStart[:0]
	if n := int(d.rd.header.Chunks[d.chunk].Samples) + 1; cap(ss) < n {
		ss = make([]int64, 0, n) // the stream's samples, unless the chunk is invalid
	}
	ss = append(ss, 0)
	var vals, idx []byte
	if nseq > 1 {
		vals, idx = d.reusable(old.Values.Bytes), d.reusable(int32Bytes(old.Indices))
	}
	// The stream has at most maxNNZ values; when other streams follow, guess that it has
	// its share of them.
	maxNNZ := int64(len(d.b)-p) / (es + 4)
	guess := maxNNZ / int64(len(d.rd.header.Streams)-k)
	// The first index outside [0, dim), and in strict mode the first that does not increase,
	// are reported after the counts of every sequence have been checked.
	type mark struct{ at, q, j int } // offset in the chunk, sequence, index within the sequence
	bad, unsorted := mark{at: -1}, mark{at: -1}
	var bix []byte   // the sequence's indices where bad is
	base := int64(0) // values so far
	for q := range nseq {
		if len(d.b)-p < 8 {
			return 0, d.fail(p, d.field(k, q, "nSamples"), ErrTruncated, "the chunk ends")
		}
		n := int64(le.Uint32(d.b[p:]))
		nnz := int64(int32(le.Uint32(d.b[p+4:])))
		left := int64(len(d.b) - p - 8)
		switch {
		case nnz < 0:
			return 0, d.fail(p+4, d.field(k, q, "nnz"), ErrFormat, "negative nnz %d", nnz)
		case nnz > left/(es+4):
			return 0, d.fail(p+4, d.field(k, q, "nnz"), ErrTooLarge, "%d values and indices of %d bytes each, the chunk has %d bytes left", nnz, es+4, left)
		case n > (left-nnz*(es+4))/4:
			return 0, d.fail(p, d.field(k, q, "nSamples"), ErrTooLarge, "%d per-sample counts after %d values and indices, the chunk has %d bytes left", n, nnz, left)
		}
		at, mid, end := p+8, p+8+int(nnz*es), p+8+int(nnz*(es+4))
		p = end + int(n)*4
		// In file order, so that the memory is read front to back: the values, the indices
		// (an index outside [0, dim) is reported once the counts are known good), then the
		// per-sample counts.
		v, ix := d.b[at:mid:mid], d.b[mid:end:end]
		if nseq == 1 {
			vals = v
		} else {
			vals = append(grow(vals, len(v), int(guess*es), int(maxNNZ*es)), v...)
		}
		j := -1
		if nseq == 1 {
			idx = ix
			j = badIndex(ix, uint32(st.Dim))
		} else {
			// Copied and checked in one pass over the indices, which come from memory.
			idx = grow(idx, len(ix), int(guess*4), int(maxNNZ*4))
			n := len(idx)
			idx = idx[:n+len(ix)]
			j = copyIndices(idx[n:], ix, uint32(st.Dim))
		}
		if bad.at < 0 && j >= 0 {
			bad, bix = mark{mid + 4*j, q, j}, ix
		}
		// Per-sample counts: each within what is left of nnz, together nnz.
		s0 := len(ss)
		ss = slices.Grow(ss, int(n))[:s0+int(n)]
		acc := int64(0)
		for j, cb := 0, d.b[end:p]; j < len(cb); j += 4 {
			c := int64(int32(le.Uint32(cb[j:])))
			if c < 0 || c > nnz-acc {
				return 0, d.fail(end+j, d.field(k, q, "sample nnz"), ErrFormat, "sample %d has %d values, %d of the sequence's %d remain", j/4, c, nnz-acc, nnz)
			}
			acc += c
			ss[s0+j/4] = base + acc
		}
		if acc != nnz {
			return 0, d.fail(end, d.field(k, q, "sample nnz"), ErrFormat, "the per-sample counts add up to %d, nnz is %d", acc, nnz)
		}
		if d.rd.strict && unsorted.at < 0 {
			for s := s0; s < len(ss); s++ {
				from, to := int(ss[s-1]-base), int(ss[s]-base)
				if j := unsortedIndex(ix[4*from : 4*to]); j >= 0 {
					unsorted = mark{mid + 4*(from+j), q, from + j}
					break
				}
			}
		}
		out.SeqStart[q+1] = out.SeqStart[q] + n
		base += nnz
	}
	if bad.at >= 0 {
		return 0, d.fail(bad.at, d.field(k, bad.q, "index"), ErrFormat, "index %d outside [0, %d)", int32(le.Uint32(bix[4*bad.j:])), st.Dim)
	}
	if unsorted.at >= 0 {
		ix := d.b[unsorted.at-4:]
		return 0, d.fail(unsorted.at, d.field(k, unsorted.q, "index"), ErrFormat, "index %d follows %d in the same sample; indices must increase", int32(le.Uint32(ix[4:])), int32(le.Uint32(ix)))
	}
	if vals == nil {
		vals = []byte{}
	}
	out.SampleStart = ss
	out.Values = mlfeed.Buffer{Type: st.Type, Bytes: vals}
	out.Indices = int32s(idx)
	return p, nil
}

// badIndex returns the position of the first little-endian int32 in ix that is outside
// [0, dim), or -1 when all are inside; dim <= math.MaxInt32.
func badIndex(ix []byte, dim uint32) int {
	// Two indices per 64-bit word: x is outside iff its top bit is set or, when it is not,
	// the top bit of x + 2^31 - dim is (no lane borrows from the next).
	const top = 0x8000_0000_8000_0000
	d2 := uint64(dim) * 0x1_0000_0001
	var acc uint64
	i := 0
	for ; len(ix)-i >= 32; i += 32 {
		w := ix[i : i+32 : i+32]
		w0, w1, w2, w3 := le.Uint64(w), le.Uint64(w[8:]), le.Uint64(w[16:]), le.Uint64(w[24:])
		acc |= w0 | w1 | w2 | w3 | ((w0 | top) - d2) | ((w1 | top) - d2) | ((w2 | top) - d2) | ((w3 | top) - d2)
	}
	if acc&top != 0 {
		i = 0 // some index is outside: find the first
	}
	for ; len(ix)-i >= 4; i += 4 {
		if le.Uint32(ix[i:]) >= dim {
			return i / 4
		}
	}
	return -1
}

// copyIndices copies the little-endian int32s of ix to dst (as long) and returns badIndex(ix,
// dim), checking them as they are copied.
func copyIndices(dst, ix []byte, dim uint32) int {
	const top = 0x8000_0000_8000_0000
	d2 := uint64(dim) * 0x1_0000_0001
	var acc uint64
	i := 0
	dst = dst[:len(ix)]
	for ; len(ix)-i >= 32; i += 32 {
		w, o := ix[i:i+32:i+32], dst[i:i+32:i+32]
		w0, w1, w2, w3 := le.Uint64(w), le.Uint64(w[8:]), le.Uint64(w[16:]), le.Uint64(w[24:])
		le.PutUint64(o, w0)
		le.PutUint64(o[8:], w1)
		le.PutUint64(o[16:], w2)
		le.PutUint64(o[24:], w3)
		acc |= w0 | w1 | w2 | w3 | ((w0 | top) - d2) | ((w1 | top) - d2) | ((w2 | top) - d2) | ((w3 | top) - d2)
	}
	copy(dst[i:], ix[i:])
	if acc&top != 0 {
		return badIndex(ix, dim)
	}
	for ; len(ix)-i >= 4; i += 4 {
		if le.Uint32(ix[i:]) >= dim {
			return i / 4
		}
	}
	return -1
}

// unsortedIndex returns the position of the first little-endian int32 in ix that is not
// greater than the one before it, or -1 when they increase; CNTK's reader assumes they do.
func unsortedIndex(ix []byte) int {
	for j := 4; j+4 <= len(ix); j += 4 {
		if int32(le.Uint32(ix[j:])) <= int32(le.Uint32(ix[j-4:])) {
			return j / 4
		}
	}
	return -1
}

// int32s views little-endian bytes as []int32 without copying when the machine is
// little-endian and b is aligned, else decodes them into a new slice. A view keeps b's
// capacity, for ReadChunkReuse to find.
func int32s(b []byte) []int32 {
	n := len(b) / 4
	if p := unsafe.SliceData(b); nativeLE && cap(b) >= 4 && uintptr(unsafe.Pointer(p))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(p)), cap(b)/4)[:n]
	}
	if n == 0 {
		return []int32{}
	}
	out := make([]int32, n)
	for j := range out {
		out[j] = int32(le.Uint32(b[4*j:]))
	}
	return out
}

// int32Bytes returns the memory of v (up to its capacity) as bytes, for reuse.
func int32Bytes(v []int32) []byte {
	if cap(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*cap(v))[:0]
}

// nativeLE reports whether the machine is little-endian, like CBF.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (d *decoder) field(k, q int, f string) string {
	return fmt.Sprintf("stream %q sequence %d %s", d.rd.header.Streams[k].Name, q, f)
}
