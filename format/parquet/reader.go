package parquet

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/mlfeed/mlfeed"
	arrowfmt "github.com/mlfeed/mlfeed/format/arrow"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// VariableLists reads list columns that carry no mlfeed dimension as variable-size dense
	// samples. By default such a column is a fixed-size dense stream whose dimension is the
	// length of the first row's list (read from the first row group), and a row of another
	// length is an error.
	VariableLists bool
	// Memory is the memory budget in bytes (the scheduler's, the CLI's --memory): no single
	// buffer arrow-go allocates for the file (a page, a column of a row group, the stored
	// Arrow schema) may be larger, else reading fails with ErrTooLarge before allocating it.
	// Zero means sched.DefaultMemory.
	Memory int64
}

// Reader reads a Parquet file. It implements mlfeed.Source, mlfeed.ChunkReuser and
// SequenceLengths; its methods are safe for concurrent use.
type Reader struct {
	name    string
	pf      *file.Reader
	leaves  []int // every leaf column, for pqarrow
	plan    *arrowmap.Plan
	dec     arrowmap.Decoder
	chunks  []mlfeed.ChunkInfo
	first   []int64
	readers sync.Pool // *pqarrow.FileReader over pf
	mem     memory.Allocator
	memory  int64 // the memory budget (ReaderOptions.Memory)
	closers closer.Stack
}

// NewReader returns a reader of the Parquet file in r, which holds size bytes. The footer is
// read and checked; no data is decoded, except the first row group's list columns that need
// their dimension (see ReaderOptions.VariableLists).
func NewReader(r io.ReaderAt, size int64, name string, opts *ReaderOptions) (rd *Reader, err error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	defer arrowmap.Catch(name, ErrFormat, &err)
	if size < 12 {
		return nil, mlfeed.OffsetError(name, 0, "magic", fmt.Errorf("%w: %d bytes is too short for Parquet", ErrTruncated, size))
	}
	var tail [4]byte
	if _, err := r.ReadAt(tail[:], size-4); err != nil {
		return nil, mlfeed.OffsetError(name, size-4, "magic", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	if string(tail[:]) != magic {
		return nil, mlfeed.OffsetError(name, size-4, "trailing magic", fmt.Errorf("%w: the file does not end with PAR1", ErrTruncated))
	}
	mem := arrowmap.Allocator(opts.Memory)
	props := pq.NewReaderProperties(mem)
	pf, err := openParquet(r, size, file.WithReadProps(props))
	if err != nil {
		if md := patchedFooter(r, size); md != nil {
			pf, err = openParquet(r, size, file.WithReadProps(props), file.WithMetadata(md))
		}
	}
	if err != nil {
		return nil, mlfeed.OffsetError(name, size-8, "footer", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	rd = &Reader{name: name, pf: pf, mem: mem, memory: opts.Memory}
	if rd.memory <= 0 {
		rd.memory = sched.DefaultMemory
	}
	rd.closers = append(rd.closers, pf.Close)
	fail := func(e error) (*Reader, error) {
		rd.Close()
		return nil, e
	}
	for i := 0; i < pf.MetaData().NumColumns(); i++ {
		rd.leaves = append(rd.leaves, i)
	}
	if err := checkArrowSchema(pf.MetaData()); err != nil {
		return fail(rd.schemaErr(size, err))
	}
	fr, err := rd.fileReader()
	if err != nil {
		return fail(rd.schemaErr(size, err))
	}
	schema, err := fr.Schema()
	rd.readers.Put(fr)
	if err != nil {
		return fail(rd.schemaErr(size, err))
	}
	if rd.plan, err = arrowmap.NewPlan(schema, opts.VariableLists); err != nil {
		return fail(mlfeed.OffsetError(name, size-8, "schema", mapErr(err)))
	}
	rd.dec = arrowmap.Decoder{Plan: rd.plan}
	var row int64
	md := pf.MetaData()
	for i := 0; i < md.NumRowGroups(); i++ {
		n := md.RowGroup(i).NumRows()
		if n < 0 || n > 1<<31-1 {
			return fail(mlfeed.OffsetError(name, md.RowGroup(i).FileOffset(), "row group", fmt.Errorf("%w: row group %d claims %d rows", ErrFormat, i, n)))
		}
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: n})
		rd.first = append(rd.first, row)
		row += n
	}
	if len(rd.plan.NeedsDim()) > 0 {
		if err := rd.learn(); err != nil {
			return fail(err)
		}
	}
	if rd.plan.HasLists() {
		rd.sampleCounts(size)
	}
	return rd, nil
}

// openParquet is file.NewParquetReader with its panics (a footer arrow-go cannot take) as errors.
func openParquet(r io.ReaderAt, size int64, opts ...file.ReadOption) (pf *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("malformed footer (%v)", p)
		}
	}()
	return file.NewParquetReader(io.NewSectionReader(r, 0, size), opts...)
}

// patchedFooter returns the file's footer without the logical types arrow-go does not know
// (withoutUnknownLogicalTypes), or nil when it has none or cannot be read so.
func patchedFooter(r io.ReaderAt, size int64) (md *metadata.FileMetaData) {
	defer func() {
		if recover() != nil {
			md = nil
		}
	}()
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return nil
	}
	patched := withoutUnknownLogicalTypes(footer)
	if patched == nil {
		return nil
	}
	md, err := metadata.NewFileMetaData(patched, nil)
	if err != nil {
		return nil
	}
	return md
}

// sampleCounts sets the chunk table's sample counts from what mlfeed records in the file
// metadata (samplesKey) for files whose columns hold lists of samples. Without it (another
// writer's file), a chunk's sample count stays its sequence count until it is read.
func (rd *Reader) sampleCounts(size int64) {
	v := rd.pf.MetaData().KeyValueMetadata().FindValue(samplesKey)
	if v == nil {
		return
	}
	parts := strings.Split(*v, ",")
	if len(parts) != len(rd.chunks) {
		return
	}
	counts := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 8*size {
			return // not what mlfeed writes: ignored
		}
		counts[i] = n
	}
	for i := range rd.chunks {
		rd.chunks[i].Samples = counts[i]
	}
}

// Open opens the named Parquet file. The file is mapped into memory where the platform
// allows, else read with ReadAt.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	f, size, err := mmap.OpenFile(name)
	if err != nil {
		return nil, err
	}
	var ra io.ReaderAt = f
	reg, merr := mmap.Map(f, size)
	if merr == nil {
		ra = bytes.NewReader(reg.Bytes())
	}
	rd, err := NewReader(ra, size, name, opts)
	if err != nil {
		if reg != nil {
			reg.Close()
		}
		f.Close()
		return nil, err
	}
	rd.closers = append(rd.closers, f.Close)
	if reg != nil {
		rd.closers = append(rd.closers, reg.Close)
	}
	return rd, nil
}

// fileReader returns a pqarrow reader over the file, one per concurrent caller.
func (rd *Reader) fileReader() (*pqarrow.FileReader, error) {
	if fr, ok := rd.readers.Get().(*pqarrow.FileReader); ok {
		return fr, nil
	}
	fr, err := pqarrow.NewFileReader(rd.pf, pqarrow.ArrowReadProperties{Parallel: false, BatchSize: 1 << 30}, rd.mem)
	if err != nil {
		return nil, err // NewReader made one before: it classified this error then
	}
	return fr, nil
}

// schemaErr describes an error of turning the file's schema into Arrow's, placed at the
// footer (of a file of size bytes): a corrupt ARROW:schema value (the schema converts without
// it) or any other failure is invalid data (exit 1); only what arrow-go reports as not
// implemented is unsupported (exit 2).
func (rd *Reader) schemaErr(size int64, err error) error {
	md := rd.pf.MetaData()
	at := max(size-8-int64(md.Size()), 0)
	field, sentinel := "schema", ErrFormat
	if arrowLacks(err) {
		sentinel = ErrUnsupported
	}
	if md.KeyValueMetadata().FindValue(arrowSchemaKey) != nil {
		if _, plain := pqarrow.FromParquet(md.Schema, &pqarrow.ArrowReadProperties{}, nil); plain == nil {
			field, sentinel = arrowSchemaKey+" metadata", ErrFormat
		}
	}
	return mlfeed.OffsetError(rd.name, at, field, fmt.Errorf("%w: %v", sentinel, err))
}

// checkArrowSchema checks the Arrow schema stored in the footer, if any, then decodes it as
// pqarrow will, but allocating no buffer larger than the decoded message: pqarrow decodes it
// with the default allocator, trusting its lengths, and a corrupt one would have it allocate
// gigabytes (a 1 KB file ran the process out of memory).
func checkArrowSchema(md *metadata.FileMetaData) (err error) {
	v := md.KeyValueMetadata().FindValue(arrowSchemaKey)
	if v == nil {
		return nil
	}
	var decoded []byte
	if len(*v)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(*v); err != nil {
			return err
		}
	}
	if err := arrowfmt.CheckSchemaMessage(decoded); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(decoded), ipc.WithAllocator(arrowmap.Allocator(int64(len(decoded)))))
	if err != nil {
		return err
	}
	r.Release()
	return nil
}

// arrowLacks reports whether err, from arrow-go, says that it lacks a feature the file uses
// (arrow.ErrNotImplemented, or a message saying "not supported", "unimplemented" or
// "unhandled"), rather than that the file is broken.
func arrowLacks(err error) bool {
	if errors.Is(err, arrow.ErrNotImplemented) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "not supported") || strings.Contains(msg, "unimplemented") || strings.Contains(msg, "unhandled")
}

// arrowSchemaKey is the footer key under which Arrow writers store the Arrow schema.
const arrowSchemaKey = "ARROW:schema"

// learn reads the first non-empty row group to learn the dimension of list columns that carry
// no mlfeed metadata.
func (rd *Reader) learn() error {
	for i := range rd.chunks {
		if rd.chunks[i].Sequences == 0 {
			continue
		}
		rec, err := rd.record(context.Background(), i)
		if err != nil {
			return err
		}
		defer rec.Release()
		if err := rd.plan.Learn(rec); err != nil {
			return mlfeed.OffsetError(rd.name, rd.pf.MetaData().RowGroup(i).FileOffset(), "row group", mapErr(err))
		}
		return nil
	}
	return mlfeed.OffsetError(rd.name, 0, "schema", fmt.Errorf("%w: no rows to learn the length of list column(s) from", ErrFormat))
}

// record reads row group i as one record batch.
func (rd *Reader) record(ctx context.Context, i int) (arrow.RecordBatch, error) {
	fr, err := rd.fileReader()
	if err != nil {
		return nil, err
	}
	defer rd.readers.Put(fr)
	rg := rd.pf.MetaData().RowGroup(i)
	off := rg.FileOffset()
	if n := rd.decodedSize(rg); n > rd.memory {
		return nil, mlfeed.OffsetError(rd.name, off, fmt.Sprintf("row group %d", i), fmt.Errorf("%w: the row group decodes to %d bytes or more, more than the memory budget of %d bytes (raise it with --memory, or write smaller row groups)", mlfeed.ErrTooLarge, n, rd.memory))
	}
	tbl, err := fr.ReadRowGroups(ctx, rd.leaves, []int{i})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sentinel := ErrFormat
		if errors.Is(err, mlfeed.ErrTooLarge) {
			sentinel = mlfeed.ErrTooLarge
		}
		return nil, mlfeed.OffsetError(rd.name, off, fmt.Sprintf("row group %d", i), fmt.Errorf("%w: %v", sentinel, err))
	}
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for k := range cols {
		ch := tbl.Column(k).Data().Chunks()
		switch len(ch) {
		case 0:
			cols[k] = array.MakeArrayOfNull(rd.mem, tbl.Column(k).DataType(), 0)
		case 1:
			ch[0].Retain()
			cols[k] = ch[0]
		default:
			if cols[k], err = array.Concatenate(ch, rd.mem); err != nil {
				return nil, mlfeed.OffsetError(rd.name, off, fmt.Sprintf("row group %d", i), fmt.Errorf("%w: %v", ErrFormat, err))
			}
		}
	}
	return array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows()), nil
}

// decodedSize returns a lower bound of the memory row group rg's columns take decoded, from
// the footer: each column's value count times its width (its uncompressed size for text),
// or the row group's uncompressed size if larger. Dictionary and run-length encodings make
// the uncompressed pages much smaller than the values they describe.
func (rd *Reader) decodedSize(rg *metadata.RowGroupMetaData) int64 {
	var n int64
	sc := rd.pf.MetaData().Schema
	for j := 0; j < rg.NumColumns(); j++ {
		cc, err := rg.ColumnChunk(j)
		if err != nil {
			continue
		}
		var w int64
		switch cc.Type() {
		case pq.Types.Boolean:
			w = 1
		case pq.Types.Int32, pq.Types.Float:
			w = 4
		case pq.Types.Int64, pq.Types.Double:
			w = 8
		case pq.Types.Int96:
			w = 12
		case pq.Types.FixedLenByteArray:
			if j < sc.NumColumns() {
				w = int64(max(sc.Column(j).TypeLength(), 1))
			}
		}
		if w > 0 && cc.NumValues() > 0 {
			n += min(cc.NumValues(), 1<<50) * w
		} else {
			n += max(cc.TotalUncompressedSize(), 0)
		}
	}
	return max(n, rg.TotalByteSize())
}

// Schema returns the streams, one per column (a column of sequence ids is not a stream).
func (rd *Reader) Schema() mlfeed.Schema { return rd.plan.Schema }

// Chunks returns one chunk per row group.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// ReadChunk decodes row group i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse decodes row group i, reusing prev's memory for the offsets, booleans, text
// and dictionary lookups it computes (values pqarrow decodes are handed out as they are).
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (c *mlfeed.Chunk, err error) {
	if err := arrowmap.CheckChunk("parquet", rd.name, i, len(rd.chunks)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer arrowmap.Catch(rd.name, ErrFormat, &err)
	rec, err := rd.record(ctx, i)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if rec.NumRows() != int64(rd.chunks[i].Sequences) {
		return nil, mlfeed.OffsetError(rd.name, rd.pf.MetaData().RowGroup(i).FileOffset(), fmt.Sprintf("row group %d", i),
			fmt.Errorf("%w: %d rows decoded, the footer says %d", ErrFormat, rec.NumRows(), rd.chunks[i].Sequences))
	}
	c, err = rd.dec.Decode(rec, rd.first[i], prev)
	if err != nil {
		return nil, mlfeed.OffsetError(rd.name, rd.pf.MetaData().RowGroup(i).FileOffset(), fmt.Sprintf("row group %d", i), mapErr(err))
	}
	return c, nil
}

// SequenceLengths returns the length of each sequence of chunk i: ones, unless a column holds
// lists of samples, whose lengths need the row group decoded.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	return arrowmap.SequenceLengths("parquet", rd.name, rd.chunks, i, rd.plan.HasLists(), rd.ReadChunk)
}

// Details reports the row groups, the compression of the first column and the writer, for
// `mlfeed info`.
func (rd *Reader) Details() map[string]any {
	md := rd.pf.MetaData()
	d := map[string]any{"row_groups": md.NumRowGroups(), "created_by": md.GetCreatedBy()}
	if md.NumRowGroups() > 0 && md.NumColumns() > 0 {
		if cc, err := md.RowGroup(0).ColumnChunk(0); err == nil {
			d["compression"] = cc.Compression().String()
		}
	}
	return d
}

// Close releases the file.
func (rd *Reader) Close() error {
	return rd.closers.Close()
}
