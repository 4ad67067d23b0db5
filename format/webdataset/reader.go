package webdataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/indexcache"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/spill"
)

// ReaderOptions configures a Reader. The zero value is the documented default.
type ReaderOptions struct {
	// FileName is the name errors report (Open sets it).
	FileName string
	// Decode is DecodeDefault (streams typed by extension, as webdataset's default decoders)
	// or DecodeNone (every stream Bytes, as stored).
	Decode string
	// Compression is CompressionAuto (the default: gzip by the data's header, else none),
	// CompressionNone or CompressionGzip.
	Compression string
	// ChunkSize is the number of bytes of members per chunk (whole samples; at least one);
	// zero means DefaultChunkSize.
	ChunkSize int64
	// MaxMemory bounds the decompressed data of a compressed shard kept in memory; beyond it
	// the data is decompressed into a temporary file. Zero means DefaultMaxMemory.
	MaxMemory int64
	// MaxMember bounds one member's size, checked before anything is read of it. Zero means
	// DefaultMaxMember.
	MaxMember int64
	// CacheIndex keeps the member-offset index and the schema in a file beside the input
	// (NAME.mlfeed-index), used instead of the scan while it is newer than the input. Open
	// only; failures to write it are ignored.
	CacheIndex bool
}

// Reader reads a WebDataset shard as an mlfeed.Source. Its methods may be called from several
// goroutines at once.
type Reader struct {
	name      string
	field     string // " (decompressed offset)" for compressed shards
	ra        io.ReaderAt
	mem       []byte // the archive in memory (mapped, or decompressed), or nil: read from ra
	mapped    bool   // mem is a file mapping: faults are caught
	region    *mmap.Region
	populated []atomic.Bool // per chunk: RawSamples mapped its pages in
	size      int64
	compress  string
	decode    string
	schema    mlfeed.Schema
	stats     []*streamStat
	members   []member
	first     []int // per sample, its first member; then len(members)
	keys      string
	keyEnd    []int // per sample, the end of its key in keys
	chunks    []mlfeed.ChunkInfo
	firstSeq  []int // first sample of every chunk, then the sample count
	skipped   int
	cached    string
	closers   closer.Stack
}

// Open opens the named shard, a tar file, plain or gzip-compressed.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	plain := func(f *os.File, size int64) bool { // a gzipped tar is decompressed, not mapped
		comp, err := detectCompression(f, o.Compression)
		return err == nil && comp == CompressionNone && size > 0
	}
	r, mf, err := mmap.Open(name, plain, func(mf *mmap.File) (*Reader, error) {
		return newReader(mf.File, mf.Size, &o, name, mf.Region)
	})
	if err != nil {
		return nil, err
	}
	r.mapped, r.region = mf.Region != nil, mf.Region
	r.closers = append(r.closers, mf.Close)
	return r, nil
}

// NewReader returns a reader of the size bytes of r, a tar file, plain or gzip-compressed.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	return newReader(r, size, &o, "", nil)
}

// newReader reads ra; input, when not empty, is the file's path, for the index cache; reg,
// when not nil, is ra's bytes mapped, used when the data is not compressed.
func newReader(ra io.ReaderAt, size int64, o *ReaderOptions, input string, reg *mmap.Region) (*Reader, error) {
	if o.Decode != DecodeDefault && o.Decode != DecodeNone {
		return nil, fmt.Errorf("%w: decode %q (want default or none)", ErrUnsupported, o.Decode)
	}
	rd := &Reader{name: o.FileName, ra: ra, size: size, decode: o.Decode}
	comp, err := detectCompression(ra, o.Compression)
	if err != nil {
		return nil, err
	}
	rd.compress = comp
	if comp == CompressionNone && reg != nil {
		rd.mem = reg.Bytes()
	} else if comp == CompressionGzip {
		rd.field = " (decompressed offset)"
		if err := rd.decompress(o); err != nil {
			rd.Close()
			return nil, err
		}
	}
	var cache string
	if o.CacheIndex && input != "" {
		cache = indexcache.Name(input)
		if rd.loadCache(cache, input, o) {
			return rd, nil
		}
	}
	maxMember := o.MaxMember
	if maxMember <= 0 {
		maxMember = DefaultMaxMember
	}
	s := &scanner{name: rd.name, field: rd.field, decode: o.Decode, maxMember: maxMember, mem: rd.mem, ra: rd.ra, size: rd.size}
	if s.mem != nil {
		s.ra = bytes.NewReader(s.mem)
		if rd.compress == CompressionNone {
			s.populate = reg.Populate
		}
	}
	if err := s.scan(); err != nil {
		rd.Close()
		return nil, err
	}
	streams, stats := s.schema()
	rd.members, rd.first, rd.keys, rd.keyEnd, rd.skipped = s.members, s.first, string(s.keys), s.keyEnd, s.skipped
	rd.setStreams(streams, stats)
	rd.cut(o.ChunkSize)
	if cache != "" {
		rd.writeCache(cache)
	}
	return rd, nil
}

func (rd *Reader) setStreams(streams []mlfeed.Stream, stats []*streamStat) {
	rd.schema = mlfeed.Schema{Streams: streams, HasIDs: true}
	rd.stats = stats
}

// cut groups the samples into chunks of about chunkSize bytes of members.
func (rd *Reader) cut(chunkSize int64) {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	n := len(rd.first) - 1
	rd.chunks, rd.firstSeq = nil, nil
	start := func(q int) int64 { return rd.members[rd.first[q]].off }
	end := func(q int) int64 { m := rd.members[rd.first[q+1]-1]; return m.off + m.size }
	for q := 0; q < n; {
		q0 := q
		for q < n && (q == q0 || end(q)-start(q0) <= chunkSize) {
			q++
		}
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: q - q0, Samples: int64(q - q0)})
		rd.firstSeq = append(rd.firstSeq, q0)
	}
	rd.firstSeq = append(rd.firstSeq, n)
	rd.populated = make([]atomic.Bool, len(rd.chunks))
}

// RawSamples reports where chunk i's samples of a stream lie in the memory the reader holds
// (the mapped shard, or a gzip shard's decompressed data), for the minibatch engine to pack
// them from there without decoding the chunk (mlfeed.RawSampler). It describes a .npy stream
// whose members all have the same header (dtype, shape, C order) when every sample of the
// chunk has the member and the members lie at a fixed stride, as in a shard whose samples are
// all alike; ok is false otherwise, and the chunk is decoded. For a mapped shard it first maps
// the chunk's pages in, once per chunk.
func (rd *Reader) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if rd.mem == nil || i < 0 || i >= len(rd.chunks) || stream < 0 || stream >= len(rd.stats) {
		return nil, 0, 0, 0, false
	}
	st := rd.stats[stream]
	if st.kind != kindNpy || st.raw <= 0 || st.vary {
		return nil, 0, 0, 0, false
	}
	size := int64(rd.schema.Streams[stream].Dim * st.typ.Size())
	var first, prev, step int64
	q0, q1 := rd.firstSeq[i], rd.firstSeq[i+1]
	for q := q0; q < q1; q++ {
		m := -1
		for k := rd.first[q]; k < rd.first[q+1]; k++ {
			if rd.members[k].stream == int32(stream) {
				m = k
				break
			}
		}
		if m < 0 || rd.members[m].size < st.raw+size {
			return nil, 0, 0, 0, false
		}
		o := rd.members[m].off + st.raw
		switch {
		case q == q0:
			first = o
		case q == q0+1:
			step = o - prev
		case o-prev != step:
			return nil, 0, 0, 0, false
		}
		prev = o
	}
	if q1-q0 == 1 {
		step = max(size, 1)
	}
	end := prev + size
	if step < size || end > int64(len(rd.mem)) {
		return nil, 0, 0, 0, false
	}
	if rd.region != nil && !rd.populated[i].Swap(true) {
		rd.region.Populate(first, end)
	}
	return rd.mem[first:end:end], 0, int(step), st.swap, true
}

// detectCompression returns the compression of the data: the one asked for, or the one its
// first bytes show.
func detectCompression(ra io.ReaderAt, asked string) (string, error) {
	switch asked {
	case CompressionNone, CompressionGzip:
		return asked, nil
	case CompressionAuto:
	default:
		return "", fmt.Errorf("%w: compression %q (want none or gzip)", ErrUnsupported, asked)
	}
	var head [2]byte
	if n, _ := ra.ReadAt(head[:], 0); n == 2 && head[0] == 0x1f && head[1] == 0x8b {
		return CompressionGzip, nil
	}
	return CompressionNone, nil
}

// decompress replaces rd.ra by the decompressed archive: in memory up to MaxMemory bytes,
// else in a temporary file.
func (rd *Reader) decompress(o *ReaderOptions) error {
	zr, err := gzip.NewReader(io.NewSectionReader(rd.ra, 0, rd.size))
	if err != nil {
		return mlfeed.OffsetError(rd.name, 0, "gzip header", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	defer zr.Close()
	limit := o.MaxMemory
	if limit <= 0 {
		limit = DefaultMaxMemory
	}
	d, err := spill.Read(zr, limit, "mlfeed-webdataset-*")
	var re *spill.ReadError
	if errors.As(err, &re) {
		return gzipError(rd.name, re.Offset, re.Err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rd.name, err)
	}
	rd.closers = append(rd.closers, d.Close)
	rd.mem, rd.ra, rd.size = d.Mem, d.ReaderAt(), d.Size
	return nil
}

// gzipError describes an error of the gzip stream after n decompressed bytes.
func gzipError(name string, n int64, err error) error {
	if err == io.ErrUnexpectedEOF {
		return mlfeed.OffsetError(name, n, "gzip data (decompressed offset)", fmt.Errorf("%w: the gzip stream ends early", ErrTruncated))
	}
	return mlfeed.OffsetError(name, n, "gzip data (decompressed offset)", fmt.Errorf("%w: %v", ErrFormat, err))
}

// Schema describes the streams, one per extension, in name order; sequences have ids (the
// samples' keys).
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Samples returns the number of samples (keys) of the shard.
func (rd *Reader) Samples() int { return len(rd.first) - 1 }

// Key returns the key of sample q.
func (rd *Reader) Key(q int) string {
	from := 0
	if q > 0 {
		from = rd.keyEnd[q-1]
	}
	return rd.keys[from:rd.keyEnd[q]]
}

// SequenceLengths returns the length of every sequence of chunk i: all ones (a sample has at
// least one member).
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("webdataset: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	return mlfeed.Ones(rd.chunks[i].Sequences), nil
}

// ReadChunk decodes chunk i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse decodes chunk i into the memory of prev when it is large enough. Bytes and
// String values point into the archive, so that no value is allocated on its own: into the
// mapped file or the decompressed data (valid until Close), or into the chunk's own copy of
// its members when the data is read with ReadAt.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (c *mlfeed.Chunk, err error) {
	if rd.mapped {
		defer mmap.Recover(mmap.Catch(), &err)
	}
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("webdataset: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q0, q1 := rd.firstSeq[i], rd.firstSeq[i+1]
	m0, m1 := rd.first[q0], rd.first[q1]
	base := rd.members[m0].off
	last := rd.members[m1-1]
	end := last.off + last.size
	var raw []byte
	if rd.mem != nil {
		if end > int64(len(rd.mem)) {
			return nil, mlfeed.OffsetError(rd.name, base, "sample "+quote(rd.Key(q0))+rd.field, fmt.Errorf("%w: the index does not fit the data", ErrFormat))
		}
		raw = rd.mem[base:end:end]
	} else {
		raw = make([]byte, end-base)
		if n, err := rd.ra.ReadAt(raw, base); n < len(raw) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("%w: the data ends at byte %d (file changed since it was opened?)", ErrTruncated, base+int64(n))
			}
			return nil, mlfeed.OffsetError(rd.name, base, "sample "+quote(rd.Key(q0))+rd.field, err)
		}
	}
	c = rd.newChunk(q1-q0, prev)
	count := make([]int64, len(c.Streams)) // samples of each stream so far
	npys := make([]npyCache, len(c.Streams))
	for q := q0; q < q1; q++ {
		c.IDs = append(c.IDs, rd.Key(q))
		for m := rd.first[q]; m < rd.first[q+1]; m++ {
			mb := rd.members[m]
			data := raw[mb.off-base : mb.off-base+mb.size]
			if err := rd.decodeMember(&c.Streams[mb.stream], mb.stream, data, &npys[mb.stream]); err != nil {
				return nil, mlfeed.OffsetError(rd.name, mb.off, "member "+quote(rd.Key(q)+"."+rd.schema.Streams[mb.stream].Name)+rd.field, err)
			}
			count[mb.stream]++
		}
		for s := range c.Streams {
			c.Streams[s].SeqStart = append(c.Streams[s].SeqStart, count[s])
		}
	}
	return c, nil
}

// newChunk returns an empty chunk of n sequences, reusing prev's buffers.
func (rd *Reader) newChunk(n int, prev *mlfeed.Chunk) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(rd.stats))}
	if prev != nil {
		c.IDs = prev.IDs[:0]
	}
	for s := range rd.stats {
		var old mlfeed.StreamData
		if prev != nil && len(prev.Streams) == len(rd.stats) {
			old = prev.Streams[s]
		}
		st := &rd.schema.Streams[s]
		c.Streams[s] = mlfeed.ReuseStream(old, st.Type, st.Dim == 0 && st.Shape == nil)
	}
	return c
}

// npyCache is the last .npy header of a stream a chunk decoded: members of one stream mostly
// share their header, and comparing its bytes is cheaper than parsing them.
type npyCache struct {
	head []byte
	h    *npy.Header
}

// decodeMember appends one member's sample to stream s.
func (rd *Reader) decodeMember(d *mlfeed.StreamData, s int32, data []byte, nc *npyCache) error {
	st := rd.stats[s]
	switch st.kind {
	case kindBytes:
		d.Values.Strings = append(d.Values.Strings, unsafe.String(unsafe.SliceData(data), len(data)))
	case kindText:
		if !utf8.Valid(data) {
			return fmt.Errorf("%w: the text is not UTF-8 (read with decode=none for its bytes)", ErrFormat)
		}
		d.Values.Strings = append(d.Values.Strings, unsafe.String(unsafe.SliceData(data), len(data)))
	case kindInt:
		v, err := parseInt(data)
		if err != nil {
			return err
		}
		d.Values.Bytes = binary.LittleEndian.AppendUint64(d.Values.Bytes, uint64(v))
	case kindNpy:
		h := nc.h
		if h == nil || !bytes.HasPrefix(data, nc.head) {
			var err error
			h, err = npy.ParseHeader(data, "")
			h, err = checkNpy(h, err, func(at int64, e error) error { return fmt.Errorf("byte %d of the member: %w", at, e) }, int64(len(data)))
			if err != nil {
				return err
			}
			if h.Type != st.typ || st.vary && len(h.Shape) != 1 || !st.vary && !slices.Equal(h.Shape, st.shape) {
				return fmt.Errorf("%w: a %s array of shape %v, not what the index says (file changed since it was opened?)", ErrFormat, h.Type, h.Shape)
			}
			nc.h, nc.head = h, data[:h.DataOffset:h.DataOffset]
		}
		var err error
		if d.Values.Bytes, err = h.AppendC(d.Values.Bytes, data[h.DataOffset:]); err != nil {
			return err
		}
		if d.SampleStart != nil {
			d.SampleStart = append(d.SampleStart, int64(d.Values.Len()))
		}
	}
	return nil
}

// parseInt parses a member as Python's int() parses bytes: decimal digits with an optional
// sign, surrounding whitespace and single underscores between digits; it must fit int64.
func parseInt(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return v, nil
	}
	if t, ok := dropUnderscores(s); ok {
		if v, err = strconv.ParseInt(t, 10, 64); err == nil {
			return v, nil
		}
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%w: %q is beyond int64", ErrFormat, s)
	}
	return 0, fmt.Errorf("%w: %q is not a decimal integer", ErrFormat, s)
}

// dropUnderscores removes the underscores of s when each stands between two digits.
func dropUnderscores(s string) (string, bool) {
	if !strings.Contains(s, "_") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			if i == 0 || i+1 == len(s) || !isDigit(s[i-1]) || !isDigit(s[i+1]) {
				return "", false
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Details reports the compression, the decode mode, the sample and member counts, the members
// skipped (not regular files, metadata, names without an extension) and the index cache.
func (rd *Reader) Details() map[string]any {
	d := map[string]any{"compression": rd.compress, "samples": rd.Samples(), "members": len(rd.members)}
	if rd.decode == DecodeNone {
		d["decode"] = DecodeNone
	}
	if rd.skipped > 0 {
		d["members_skipped"] = rd.skipped
	}
	if rd.cached != "" {
		d["index_cache"] = rd.cached
	}
	return d
}

// Close releases the file.
func (rd *Reader) Close() error { return rd.closers.Close() }
