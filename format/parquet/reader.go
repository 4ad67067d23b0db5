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

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlfeed/mlfeed"
	mlformat "github.com/mlfeed/mlfeed/format"
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
	// Memory is the memory budget in bytes (the scheduler's, the CLI's --memory): a row group
	// whose columns decode to more, or a page that decompresses to more, is refused with
	// ErrTooLarge before it is read; the stored Arrow schema is decoded allocating no more
	// than its own size. Zero means sched.DefaultMemory.
	Memory int64
	// Columns are the names of the columns to read, in stream order (the column of sequence
	// ids, if mlfeed wrote one, is read too). Empty means every column. The others are not
	// read, whatever their type; a name no column has is a usage error listing the columns.
	Columns []string
}

// Reader reads a Parquet file. It implements mlfeed.Source, mlfeed.ChunkReuser and
// SequenceLengths; its methods are safe for concurrent use.
type Reader struct {
	name    string
	ra      io.ReaderAt
	size    int64
	pf      *pq.File
	md      *format.FileMetaData
	fields  []*node          // the schema's top-level fields
	leaves  []*node          // every leaf column
	sel     []int            // the indices in fields of those read, in stream order: one per Arrow column
	need    []bool           // by leaf: under a field read
	types   []arrow.DataType // by Arrow column (sel)
	plan    *arrowmap.Plan
	dec     arrowmap.Decoder
	chunks  []mlfeed.ChunkInfo
	first   []int64
	memory  int64 // the memory budget (ReaderOptions.Memory)
	closers closer.Stack
}

// errSchemaMeta is wrapped by errors of the stored Arrow schema.
var errSchemaMeta = fmt.Errorf("%w: %s", ErrFormat, arrowSchemaKey)

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
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, mlfeed.OffsetError(name, size-8, "magic", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	if string(tail[4:]) != magic {
		return nil, mlfeed.OffsetError(name, size-4, "trailing magic", fmt.Errorf("%w: the file does not end with PAR1", ErrTruncated))
	}
	footerAt := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4]))
	if footerAt < 4 {
		return nil, mlfeed.OffsetError(name, size-8, "footer", fmt.Errorf("%w: a footer of %d bytes in a file of %d", ErrTruncated, binary.LittleEndian.Uint32(tail[:4]), size))
	}
	rd = &Reader{name: name, ra: r, size: size, memory: opts.Memory}
	if rd.memory <= 0 {
		rd.memory = sched.DefaultMemory
	}
	if int64(binary.LittleEndian.Uint32(tail[:4])) > rd.memory {
		return nil, mlfeed.OffsetError(name, size-8, "footer", fmt.Errorf("%w: a footer of %d bytes, more than the memory budget of %d bytes (raise it with --memory)", mlfeed.ErrTooLarge, binary.LittleEndian.Uint32(tail[:4]), rd.memory))
	}
	footerErr := func(field string, e error) (*Reader, error) {
		return nil, mlfeed.OffsetError(name, footerAt, field, e)
	}
	if rd.pf, err = openPQ(r, size, size-8-footerAt); err != nil {
		return footerErr("footer", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	rd.md = rd.pf.Metadata()
	if rd.fields, rd.leaves, err = schemaTree(rd.md.Schema); err != nil {
		return footerErr("schema", err)
	}
	stored, err := storedSchema(rd.pf)
	if err != nil {
		return footerErr(arrowSchemaKey+" metadata", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	if stored != nil && stored.NumFields() != len(rd.fields) {
		return footerErr(arrowSchemaKey+" metadata", fmt.Errorf("%w: %d fields for %d Parquet columns", errSchemaMeta, stored.NumFields(), len(rd.fields)))
	}
	if err := rd.selectColumns(opts.Columns, stored); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(rd.sel))
	for k, i := range rd.sel {
		n := rd.fields[i]
		var dt arrow.DataType
		if stored != nil {
			f := stored.Field(i)
			dt, err = resolve(f.Type, n, false)
			fields[k] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable, Metadata: ticksMeta(n, f.Metadata)}
		} else {
			dt, err = arrowOf(n, false)
			fields[k] = arrow.Field{Name: n.name(), Type: dt, Nullable: true, Metadata: ticksMeta(n, arrow.Metadata{})}
		}
		if err != nil {
			if errors.Is(err, errSchemaMeta) {
				return footerErr(arrowSchemaKey+" metadata", err)
			}
			return footerErr("schema", err)
		}
		rd.types = append(rd.types, dt)
	}
	var md *arrow.Metadata
	if stored != nil {
		m := stored.Metadata()
		md = &m
	}
	if rd.plan, err = arrowmap.NewPlan(arrow.NewSchema(fields, md), opts.VariableLists, nil, opts.Columns); err != nil {
		if errors.Is(err, mlformat.ErrUsage) {
			return nil, fmt.Errorf("parquet: %s: %w", name, err)
		}
		return footerErr("schema", mapErr(err))
	}
	rd.dec = arrowmap.Decoder{Plan: rd.plan}
	var row int64
	for i := range rd.md.RowGroups {
		rg := &rd.md.RowGroups[i]
		n := rg.NumRows
		if n < 0 || n > 1<<31-1 {
			return footerErr("row group", fmt.Errorf("%w: row group %d claims %d rows", ErrFormat, i, n))
		}
		if len(rg.Columns) != len(rd.leaves) {
			return footerErr("row group", fmt.Errorf("%w: row group %d has %d columns, the schema %d", ErrFormat, i, len(rg.Columns), len(rd.leaves)))
		}
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: n})
		rd.first = append(rd.first, row)
		row += n
	}
	if len(rd.plan.NeedsDim()) > 0 {
		if err := rd.learn(); err != nil {
			return nil, err
		}
	}
	if rd.plan.HasLists() {
		rd.sampleCounts(size)
	}
	return rd, nil
}

// selectColumns sets the top-level fields the reader reads (rd.sel), those the names select
// (ReaderOptions.Columns; all when there are none), and the leaf columns under them
// (rd.need). stored is the stored Arrow schema, or nil.
func (rd *Reader) selectColumns(names []string, stored *arrow.Schema) error {
	var all []arrow.Field
	if stored != nil {
		all = stored.Fields()
	} else {
		for _, n := range rd.fields {
			f := arrow.Field{Name: n.name(), Type: arrow.Null}
			if n.col < 0 && !n.repeated() && !isList(n) && !isMap(n) {
				f.Type = arrow.StructOf() // a struct column: its fields are named NAME.FIELD
			}
			all = append(all, f)
		}
	}
	sel, err := arrowmap.Select(names, all)
	if err != nil {
		return fmt.Errorf("parquet: %s: %w", rd.name, err)
	}
	if sel == nil {
		sel = make([]int, len(rd.fields))
		for i := range sel {
			sel[i] = i
		}
	}
	rd.sel = sel
	rd.need = make([]bool, len(rd.leaves))
	for _, i := range sel {
		end := len(rd.leaves)
		if i+1 < len(rd.fields) {
			end = rd.fields[i+1].first
		}
		for j := rd.fields[i].first; j < end; j++ {
			rd.need[j] = true
		}
	}
	return nil
}

// openPQ opens the Parquet file in r with parquet-go, turning a panic on a malformed footer
// into an error. Page indexes and bloom filters are not read. A footer parquet-go refuses is
// read again, once, with the edits of withKeyValueValues, where it needs any: the file's
// bytes up to the footer as they are, then the edited footer (r's footer of footerLen bytes
// ends 8 bytes before size).
func openPQ(r io.ReaderAt, size int64, footerLen int64) (*pq.File, error) {
	pf, err := openPQOnce(r, size)
	if err == nil {
		return pf, nil
	}
	footer := make([]byte, footerLen)
	if _, rerr := r.ReadAt(footer, size-8-footerLen); rerr != nil {
		return nil, err
	}
	edited := withKeyValueValues(footer)
	if edited == nil {
		return nil, err
	}
	at := size - 8 - footerLen
	tail := binary.LittleEndian.AppendUint32(edited, uint32(len(edited)))
	tail = append(tail, magic...)
	pf, err2 := openPQOnce(&retailed{r, at, tail}, at+int64(len(tail)))
	if err2 != nil {
		return nil, err
	}
	return pf, nil
}

func openPQOnce(r io.ReaderAt, size int64) (pf *pq.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("malformed footer (%v)", p)
		}
	}()
	return pq.OpenFile(r, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(1<<16))
}

// retailed reads r's bytes before at, then tail in place of the rest.
type retailed struct {
	r    io.ReaderAt
	at   int64
	tail []byte
}

func (t *retailed) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	n := 0
	if off < t.at {
		k := int(min(int64(len(p)), t.at-off))
		m, err := t.r.ReadAt(p[:k], off)
		if n += m; m < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		p, off = p[k:], t.at
	}
	if len(p) == 0 {
		return n, nil
	}
	if i := off - t.at; i < int64(len(t.tail)) {
		m := copy(p, t.tail[i:])
		if n += m; m == len(p) {
			return n, nil
		}
	}
	return n, io.EOF
}

// sampleCounts sets the chunk table's sample counts from what mlfeed records in the file
// metadata (samplesKey) for files whose columns hold lists of samples. Without it (another
// writer's file), a chunk's sample count stays its sequence count until it is read.
func (rd *Reader) sampleCounts(size int64) {
	v, ok := rd.pf.Lookup(samplesKey)
	if !ok {
		return
	}
	parts := strings.Split(v, ",")
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
	rd, mf, err := mmap.Open(name, nil, func(mf *mmap.File) (*Reader, error) {
		return NewReader(mf.ReaderAt(), mf.Size, name, opts)
	})
	if err != nil {
		return nil, err
	}
	rd.closers = append(rd.closers, mf.Close)
	return rd, nil
}

// storedSchema decodes the Arrow schema stored in the footer, or returns nil if there is none.
// The message is checked before it is decoded, and decoded allocating no buffer larger than
// itself: arrow-go trusts its lengths, and a corrupt one would have it allocate gigabytes (a 1
// KB file ran the process out of memory).
func storedSchema(pf *pq.File) (s *arrow.Schema, err error) {
	v, ok := pf.Lookup(arrowSchemaKey)
	if !ok {
		return nil, nil
	}
	var decoded []byte
	if len(v)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(v)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return nil, err
		}
	}
	if err := arrowfmt.CheckSchemaMessage(decoded); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("%v", p)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(decoded), ipc.WithAllocator(arrowmap.Allocator(int64(len(decoded)))))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
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
			return mlfeed.OffsetError(rd.name, rd.rowGroupAt(i), "row group", mapErr(err))
		}
		return nil
	}
	return mlfeed.OffsetError(rd.name, 0, "schema", fmt.Errorf("%w: no rows to learn the length of list column(s) from", ErrFormat))
}

// rowGroupAt returns the file offset of row group i: its first column chunk's first page.
func (rd *Reader) rowGroupAt(i int) int64 {
	rg := &rd.md.RowGroups[i]
	if rg.FileOffset > 0 {
		return rg.FileOffset
	}
	if len(rg.Columns) > 0 {
		if start, _ := chunkRange(&rg.Columns[0].MetaData); start > 0 {
			return start
		}
	}
	return 4
}

// chunkRange returns the byte range of a column chunk's pages.
func chunkRange(cm *format.ColumnMetaData) (start, end int64) {
	start = cm.DataPageOffset
	if d := cm.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	return start, start + cm.TotalCompressedSize
}

// record reads row group i as one record batch.
func (rd *Reader) record(ctx context.Context, i int) (arrow.RecordBatch, error) {
	off := rd.rowGroupAt(i)
	where := fmt.Sprintf("row group %d", i)
	rg := &rd.md.RowGroups[i]
	if n := rd.decodedSize(rg); n > rd.memory {
		return nil, mlfeed.OffsetError(rd.name, off, where, fmt.Errorf("%w: the row group decodes to %d bytes or more, more than the memory budget of %d bytes (raise it with --memory, or write smaller row groups)", mlfeed.ErrTooLarge, n, rd.memory))
	}
	ccs := rd.pf.RowGroups()[i].ColumnChunks()
	a := &assembler{leaves: make([]*leafData, len(rd.leaves)), rows: rd.chunks[i].Sequences}
	for j, n := range rd.leaves {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !rd.need[j] {
			continue
		}
		if a.rows == 0 {
			a.leaves[j] = newLeaf(n)
			continue
		}
		cm := &rg.Columns[j].MetaData
		if err := rd.checkPages(cm, n); err != nil {
			return nil, mlfeed.OffsetError(rd.name, off, where, err)
		}
		ld, err := readLeaf(ccs[j], n, min(cm.NumValues, rd.memory))
		if err != nil {
			if errors.Is(err, mlfeed.ErrTooLarge) || errors.Is(err, ErrFormat) || errors.Is(err, ErrUnsupported) {
				return nil, mlfeed.OffsetError(rd.name, off, where, fmt.Errorf("column %q: %w", n.name(), err))
			}
			return nil, mlfeed.OffsetError(rd.name, off, where, fmt.Errorf("%w: column %q: %v", ErrFormat, n.name(), err))
		}
		a.leaves[j] = ld
	}
	cols := make([]arrow.Array, len(rd.sel))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for k, i := range rd.sel {
		n := rd.fields[i]
		d, err := a.build(rd.types[k], n, 0, 0, false)
		if err != nil {
			return nil, mlfeed.OffsetError(rd.name, off, where, err)
		}
		cols[k] = array.MakeFromData(d)
		d.Release()
		if cols[k].Len() != a.rows {
			return nil, mlfeed.OffsetError(rd.name, off, where, fmt.Errorf("%w: column %q has %d rows, the footer says %d", ErrFormat, n.name(), cols[k].Len(), a.rows))
		}
	}
	return array.NewRecordBatch(rd.plan.Arrow, cols, int64(a.rows)), nil
}

// checkPages walks the page headers of the chunk of leaf column n before parquet-go reads it:
// every page lies within the chunk, and none decompresses to more than the memory budget
// (parquet-go allocates what a header claims). A version-2 data page of nulls only whose
// compressed body is empty (arrow-rs writes them; parquet-go cannot decompress an empty body)
// is refused here as the nulls it holds.
func (rd *Reader) checkPages(cm *format.ColumnMetaData, n *node) error {
	start, end := chunkRange(cm)
	if start < 4 || cm.TotalCompressedSize < 0 || end > rd.size-8 || end < start {
		return fmt.Errorf("%w: column %q: column chunk at byte %d of %d bytes outside the file", ErrFormat, n.name(), start, cm.TotalCompressedSize)
	}
	row, rowKnown := int64(0), true
	width := leafWidth(n)
	var proto thrift.CompactProtocol
	buf := make([]byte, 0, 256)
	for pos := start; pos < end; {
		window := min(end-pos, 256)
		var h format.PageHeader
		for {
			buf = buf[:window]
			if _, err := rd.ra.ReadAt(buf, pos); err != nil {
				return fmt.Errorf("%w: page header at byte %d: %v", ErrFormat, pos, err)
			}
			h = format.PageHeader{}
			r := proto.NewReaderFromBytes(buf)
			err := thrift.NewDecoder(r).Decode(&h)
			if err == nil {
				pos += int64(r.BytesRead())
				break
			}
			if window == end-pos || window >= 1<<24 {
				return fmt.Errorf("%w: page header at byte %d: %v", ErrFormat, pos, err)
			}
			window = min(end-pos, window*16)
		}
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > end-pos {
			return fmt.Errorf("%w: a page of %d bytes at byte %d, %d bytes left in the column chunk", ErrFormat, h.CompressedPageSize, pos, end-pos)
		}
		if int64(h.UncompressedPageSize) > rd.memory {
			return fmt.Errorf("%w: a page that decompresses to %d bytes, more than the memory budget of %d bytes (raise it with --memory)", mlfeed.ErrTooLarge, h.UncompressedPageSize, rd.memory)
		}
		if h.UncompressedPageSize < 0 {
			return fmt.Errorf("%w: a page of %d bytes decompressed", ErrFormat, h.UncompressedPageSize)
		}
		if err := plainFits(&h, n, width); err != nil {
			return fmt.Errorf("%w: column %q: page at byte %d: %v", ErrFormat, n.name(), pos, err)
		}
		if v2 := h.DataPageHeaderV2; v2.Valid && h.Type == format.DataPageV2 {
			body := int64(h.CompressedPageSize) - int64(v2.V.RepetitionLevelsByteLength) - int64(v2.V.DefinitionLevelsByteLength)
			if body == 0 && v2.V.NumValues > 0 && v2.V.NumNulls == v2.V.NumValues && cm.Codec != format.Uncompressed {
				if rowKnown {
					return fmt.Errorf("%w: column %q, row %d: null value (mlfeed holds no nulls: fill or drop them first, or read the other columns with the option columns=NAME,...)", ErrUnsupported, n.name(), row)
				}
				return fmt.Errorf("%w: column %q: a page of null values (mlfeed holds no nulls: fill or drop them first, or read the other columns with the option columns=NAME,...)", ErrUnsupported, n.name())
			}
			row += int64(v2.V.NumRows)
		} else if h.Type == format.DataPage {
			rowKnown = false
		}
		pos += int64(h.CompressedPageSize)
	}
	return nil
}

// plainFits checks that a data page of PLAIN values of a column that is neither optional nor
// repeated, whose values each take width bytes (0: byte arrays, unchecked; booleans take a
// bit), holds as many bytes as its values need: parquet-go pads a short page with zeros
// (the Parquet project's bad_data/ARROW-GH-47662.parquet: a required column written without
// its nulls' values, which DuckDB refuses).
func plainFits(h *format.PageHeader, n *node, width int) error {
	if width == 0 || n.def > 0 || n.rep > 0 {
		return nil
	}
	var values, body int64
	switch {
	case h.Type == format.DataPage && h.DataPageHeader.Valid:
		v1 := h.DataPageHeader.V
		if v1.Encoding != format.Plain {
			return nil
		}
		values, body = int64(v1.NumValues), int64(h.UncompressedPageSize)
	case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
		v2 := h.DataPageHeaderV2.V
		if v2.Encoding != format.Plain {
			return nil
		}
		values = int64(v2.NumValues)
		body = int64(h.UncompressedPageSize) - int64(v2.RepetitionLevelsByteLength) - int64(v2.DefinitionLevelsByteLength)
	default:
		return nil
	}
	need := values * int64(width)
	if n.el.Type.V == format.Boolean {
		need = (values + 7) / 8
	}
	if values < 0 || body < need {
		return fmt.Errorf("%d PLAIN values in %d bytes, %d needed", values, body, need)
	}
	return nil
}

// decodedSize returns a lower bound of the memory row group rg's columns take decoded, from
// the footer: each column's value count times its width (its uncompressed size for text),
// or the row group's uncompressed size if larger. Dictionary and run-length encodings make
// the uncompressed pages much smaller than the values they describe.
func (rd *Reader) decodedSize(rg *format.RowGroup) int64 {
	var n int64
	all := true
	for j := range rg.Columns {
		if j < len(rd.need) && !rd.need[j] {
			all = false
			continue
		}
		cm := &rg.Columns[j].MetaData
		var w int64
		switch cm.Type {
		case format.Boolean:
			w = 1
		case format.Int32, format.Float:
			w = 4
		case format.Int64, format.Double:
			w = 8
		case format.Int96:
			w = 12
		case format.FixedLenByteArray:
			if j < len(rd.leaves) {
				w = int64(max(rd.leaves[j].el.TypeLength.V, 1))
			}
		}
		if w > 0 && cm.NumValues > 0 {
			n += min(cm.NumValues, 1<<50) * w
		} else {
			n += max(cm.TotalUncompressedSize, 0)
		}
	}
	if !all {
		return n // rg.TotalByteSize counts the columns not read too
	}
	return max(n, rg.TotalByteSize)
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
// and dictionary lookups it computes (values parquet-go decodes are handed out as they are).
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
		return nil, mlfeed.OffsetError(rd.name, rd.rowGroupAt(i), fmt.Sprintf("row group %d", i),
			fmt.Errorf("%w: %d rows decoded, the footer says %d", ErrFormat, rec.NumRows(), rd.chunks[i].Sequences))
	}
	c, err = rd.dec.Decode(rec, rd.first[i], prev)
	if err != nil {
		return nil, mlfeed.OffsetError(rd.name, rd.rowGroupAt(i), fmt.Sprintf("row group %d", i), mapErr(err))
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
	d := map[string]any{"row_groups": len(rd.md.RowGroups), "created_by": rd.md.CreatedBy}
	if len(rd.md.RowGroups) > 0 && len(rd.md.RowGroups[0].Columns) > 0 {
		d["compression"] = rd.md.RowGroups[0].Columns[0].MetaData.Codec.String()
	}
	if h := rd.plan.HalfStreams(); h != nil {
		d["float16_read_as_float32"] = h
	}
	return d
}

// Close releases the file.
func (rd *Reader) Close() error {
	return rd.closers.Close()
}
