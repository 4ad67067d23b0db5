package tfrecord

import (
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/indexcache"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/spill"
)

// ReaderOptions configures a Reader. The zero value is the documented default.
type ReaderOptions struct {
	// FileName is the name errors report (Open sets it).
	FileName string
	// Records says what the records hold: RecordsAuto (the default: Example, or
	// SequenceExample when a record has feature_lists), RecordsExample,
	// RecordsSequenceExample or RecordsRaw.
	Records string
	// Compression is CompressionAuto (the default: gzip or zlib by the data's header, else
	// none), CompressionNone, CompressionGzip or CompressionZlib.
	Compression string
	// ChunkSize is the number of bytes of records per chunk (whole records; at least one);
	// zero means DefaultChunkSize.
	ChunkSize int64
	// MaxMemory bounds the decompressed data of a compressed file kept in memory; beyond it
	// the data is decompressed into a temporary file. Zero means DefaultMaxMemory.
	MaxMemory int64
	// MaxRecord bounds one record's length, checked before anything is allocated for it.
	// Zero means DefaultMaxRecord.
	MaxRecord int64
	// CacheIndex keeps the record-offset index and the schema in a file beside the input
	// (NAME.mlfeed-index), used instead of the scan while it is newer than the input. Open
	// only; failures to write it are ignored.
	CacheIndex bool
	// Log receives notes (features left out because no record gives them a kind). Nil
	// discards them.
	Log io.Writer
}

// Reader reads a TFRecord file as an mlfeed.Source. Its methods may be called from several
// goroutines at once.
type Reader struct {
	name     string
	ra       io.ReaderAt
	mem      []byte // the records in memory (mapped, or decompressed), or nil: read from ra
	mapped   bool   // mem is a file mapping: faults are caught
	verified bool   // the scan checked the data CRC of every record of mem
	size     int64  // bytes of (decompressed) records
	mode     string
	compress string
	schema   mlfeed.Schema
	offsets  []int64 // start of every record, then the end of the data
	lengths  []int64 // every record's sequence length
	chunks   []mlfeed.ChunkInfo
	firstRec []int // first record of every chunk, then the record count
	streams  []streamInfo
	byName   map[string]int
	skipped  []string
	cached   string
	closers  closer.Stack
	raw      []atomic.Pointer[rawChunk] // per chunk, where RawSamples finds its samples; nil: never
	rawKept  atomic.Int64               // bytes RawSamples keeps decoded
}

// streamInfo is how a stream's values are laid out.
type streamInfo struct {
	list bool // a feature list: one sample per entry
	seq  bool // a context feature of scalar samples: one sample per value
	kind kind
	dim  int // values per sample; 0 varies (feature lists)
}

// Open opens the named TFRecord file, plain, GZIP or ZLIB.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	plain := func(f *os.File, size int64) bool { // compressed data is decompressed, not mapped
		comp, err := detectCompression(f, size, o.Compression)
		return err == nil && comp == CompressionNone && size > 0
	}
	r, mf, err := mmap.Open(name, plain, func(mf *mmap.File) (*Reader, error) {
		return newReader(mf.File, mf.Size, &o, name, mf.Region)
	})
	if err != nil {
		return nil, err
	}
	r.mapped = mf.Region != nil
	r.closers = append(r.closers, mf.Close)
	return r, nil
}

// NewReader returns a reader of the size bytes of r, a TFRecord file, plain or compressed.
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
	var cache string
	if o.CacheIndex && input != "" {
		cache = indexcache.Name(input)
	}
	if err := checkRecords(o.Records); err != nil {
		return nil, err
	}
	rd := &Reader{name: o.FileName, ra: ra, size: size, mode: o.Records}
	comp, err := detectCompression(ra, size, o.Compression)
	if err != nil {
		return nil, err
	}
	rd.compress = comp
	if comp == CompressionNone && reg != nil {
		rd.mem = reg.Bytes()
	} else if comp != CompressionNone {
		if err := rd.decompress(o); err != nil {
			rd.Close()
			return nil, err
		}
	}
	if cache != "" && rd.loadCache(cache, input, o) {
		rd.rawReady()
		return rd, nil
	}
	maxRec := o.MaxRecord
	if maxRec <= 0 {
		maxRec = DefaultMaxRecord
	}
	s := &scanner{name: rd.name, mode: o.Records, maxRec: maxRec, feats: map[string]*featStat{}}
	if rd.mem != nil {
		if rd.compress == CompressionNone {
			s.populate = reg.Populate
		}
		err = s.scanMem(rd.mem)
	} else {
		err = s.scan(io.NewSectionReader(rd.ra, 0, rd.size), rd.size)
	}
	if err != nil {
		rd.Close()
		return nil, err
	}
	if rd.mode == RecordsAuto {
		rd.mode = RecordsExample
		if s.lists {
			rd.mode = RecordsSequenceExample
		}
	}
	rd.verified = rd.mem != nil
	streams, fs, skipped, lengths := s.schema()
	rd.offsets, rd.lengths, rd.skipped = s.offsets, lengths, skipped
	rd.setStreams(streams, fs)
	rd.cut(o.ChunkSize)
	if len(skipped) > 0 && o.Log != nil {
		fmt.Fprintf(o.Log, "%s: left out %d feature(s) that no record gives a kind or a value: %q\n", rd.name, len(skipped), skipped)
	}
	if cache != "" {
		rd.writeCache(cache, o.Records)
	}
	rd.rawReady()
	return rd, nil
}

func (rd *Reader) setStreams(streams []mlfeed.Stream, fs []*featStat) {
	rd.schema = mlfeed.Schema{Streams: streams}
	rd.streams = make([]streamInfo, len(streams))
	rd.byName = make(map[string]int, len(streams))
	for i, st := range streams {
		if rd.mode == RecordsRaw {
			rd.streams[i] = streamInfo{kind: kindBytes, dim: 1, seq: true}
			continue
		}
		f := fs[i]
		rd.streams[i] = streamInfo{list: f.list, seq: f.seq, kind: f.kind, dim: st.Dim}
		key := f.name
		if f.list {
			key = "\x00" + key // feature lists live in their own key space
		}
		rd.byName[key] = i
	}
}

// cut groups the records into chunks of about chunkSize bytes.
func (rd *Reader) cut(chunkSize int64) {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	n := len(rd.offsets) - 1
	rd.chunks, rd.firstRec = nil, nil
	for r := 0; r < n; {
		start := r
		var samples int64
		for r < n && (r == start || rd.offsets[r+1]-rd.offsets[start] <= chunkSize) {
			samples += rd.lengths[r]
			r++
		}
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: r - start, Samples: samples})
		rd.firstRec = append(rd.firstRec, start)
	}
	rd.firstRec = append(rd.firstRec, n)
}

// detectCompression returns the compression of the data: the one asked for, or the one its
// first bytes show.
func detectCompression(ra io.ReaderAt, size int64, asked string) (string, error) {
	switch asked {
	case CompressionNone, CompressionGzip, CompressionZlib:
		return asked, nil
	case CompressionAuto:
	default:
		return "", fmt.Errorf("%w: compression %q (want none, gzip or zlib)", ErrUnsupported, asked)
	}
	var head [headerSize]byte
	n, _ := ra.ReadAt(head[:], 0)
	h := head[:n]
	switch {
	case matchPlain(h) || n == 0:
		return CompressionNone, nil
	case n >= 2 && h[0] == 0x1f && h[1] == 0x8b:
		return CompressionGzip, nil
	case isZlib(h):
		return CompressionZlib, nil
	}
	return CompressionNone, nil
}

// decompress replaces rd.ra by the decompressed data: in memory up to MaxMemory bytes, else
// in a temporary file.
func (rd *Reader) decompress(o *ReaderOptions) error {
	src := io.NewSectionReader(rd.ra, 0, rd.size)
	var zr io.ReadCloser
	var err error
	if rd.compress == CompressionGzip {
		zr, err = gzip.NewReader(src)
	} else {
		zr, err = zlib.NewReader(src)
	}
	if err != nil {
		return mlfeed.OffsetError(rd.name, 0, rd.compress+" header", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	defer zr.Close()
	limit := o.MaxMemory
	if limit <= 0 {
		limit = DefaultMaxMemory
	}
	d, err := spill.Read(zr, limit, "mlfeed-tfrecord-*")
	var re *spill.ReadError
	if errors.As(err, &re) {
		return mlfeed.OffsetError(rd.name, re.Offset, rd.compress+" data (decompressed offset)", fmt.Errorf("%w: %v", ErrFormat, re.Err))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rd.name, err)
	}
	rd.closers = append(rd.closers, d.Close)
	rd.mem, rd.ra, rd.size = d.Mem, d.ReaderAt(), d.Size
	return nil
}

// Schema describes the streams.
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Records returns the number of records.
func (rd *Reader) Records() int { return len(rd.offsets) - 1 }

// Mode returns what the records are read as: RecordsExample, RecordsSequenceExample or
// RecordsRaw.
func (rd *Reader) Mode() string { return rd.mode }

// SequenceLengths returns the length of every sequence (record) of chunk i, from the index.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.chunks) {
		return nil, fmt.Errorf("tfrecord: chunk %d out of range [0, %d)", i, len(rd.chunks))
	}
	return append([]int64(nil), rd.lengths[rd.firstRec[i]:rd.firstRec[i+1]]...), nil
}

// ReadChunk decodes chunk i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// Details reports the records mode, the compression, the record count and the features left
// out.
func (rd *Reader) Details() map[string]any {
	d := map[string]any{"records": rd.mode, "compression": rd.compress, "record_count": rd.Records()}
	if len(rd.skipped) > 0 {
		d["features_without_kind"] = rd.skipped
	}
	if rd.cached != "" {
		d["index_cache"] = rd.cached
	}
	return d
}

// Close releases the file.
func (rd *Reader) Close() error { return rd.closers.Close() }
