package arrow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// VariableLists reads List and LargeList columns that carry no mlfeed dimension as
	// variable-size dense samples. By default such a column is a fixed-size dense stream
	// whose dimension is the length of the first row's list, and a row of another length is
	// an error.
	VariableLists bool
	// NoMmap reads the file with ReadAt instead of mapping it (Open only).
	NoMmap bool
	// Memory is the memory budget in bytes (the scheduler's, the CLI's --memory): a
	// compressed record or dictionary batch whose buffers decompress to more is refused at
	// open (ErrTooLarge, naming the size and --memory), before anything is decompressed.
	// Zero means sched.DefaultMemory.
	Memory int64
	// Columns are the names of the columns to read, in stream order (the column of sequence
	// ids, if mlfeed wrote one, is read too). Empty means every column. The others are not
	// decoded into streams, whatever their type; a name no column has is a usage error
	// listing the columns.
	Columns []string
}

// budget returns the memory budget of ReaderOptions.Memory m.
func budget(m int64) int64 {
	if m > 0 {
		return m
	}
	return sched.DefaultMemory
}

// Reader reads Arrow IPC data. It implements mlfeed.Source, mlfeed.ChunkReuser and
// SequenceLengths; its methods are safe for concurrent use.
type Reader struct {
	name   string
	size   int64
	ra     io.ReaderAt
	stream bool
	file   *ipc.FileReader
	// dictMu serializes file.RecordBatchAt for files with dictionaries: arrow-go (v18.8.0)
	// says it is safe for concurrent use, but resolving a dictionary column writes to a hash
	// state its file reader shares (dictutils.Mapper), a data race that can pick another
	// column's dictionary.
	dictMu  *sync.Mutex
	msgs    []message // stream: every message; file: the record batches
	batches []int     // stream: index in msgs of each record batch
	plan    *arrowmap.Plan
	dec     arrowmap.Decoder
	chunks  []mlfeed.ChunkInfo
	first   []int64 // file row of each chunk's first row
	mapped  []byte
	zero    bool // batches are read from the mapping (no dictionaries)
	region  *mmap.Region
	faulted []atomic.Bool // per batch: its pages were mapped in (Populate)
	closers closer.Stack
}

// NewReader returns a reader of the Arrow IPC file or stream in r, which holds size bytes.
// The schema and the chunk table are read; no record batch is decoded, except the first one
// when a List column without mlfeed metadata needs its dimension (see
// ReaderOptions.VariableLists).
func NewReader(r io.ReaderAt, size int64, name string, opts *ReaderOptions) (*Reader, error) {
	return newReader(r, size, name, nil, opts)
}

// Open opens the named Arrow IPC file or stream, mapped into memory unless
// ReaderOptions.NoMmap is set.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	rd, mf, err := mmap.Open(name, mmap.Unless(opts != nil && opts.NoMmap), func(mf *mmap.File) (*Reader, error) {
		return newReader(mf.ReaderAt(), mf.Size, name, mf.Bytes(), opts)
	})
	if err != nil {
		return nil, err
	}
	rd.closers = append(rd.closers, mf.Close)
	if mf.Region != nil {
		rd.region = mf.Region
		rd.faulted = make([]atomic.Bool, len(rd.chunks))
	}
	return rd, nil
}

// bigEndian reports whether the Arrow file in r (its schema message, after the magic)
// declares big-endian data; false when that message cannot be read (the reader reports it).
func bigEndian(r io.ReaderAt, size int64, name string) bool {
	m, ok, err := readMessage(r, size, 8, name)
	return err == nil && ok && m.kind == headerSchema && m.bigEndian
}

// populate maps the pages of batch i in the first time it is read from the mapping: one
// system call instead of a page fault per page, on the caller's goroutine.
func (rd *Reader) populate(i int) {
	if !mmap.CanPopulate || rd.region == nil || !rd.zero || rd.faulted[i].Swap(true) {
		return
	}
	m := rd.batch(i)
	rd.region.Populate(m.bodyStart, m.bodyStart+m.body)
}

func newReader(r io.ReaderAt, size int64, name string, mapped []byte, opts *ReaderOptions) (rd *Reader, err error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	defer arrowmap.Catch(name, ErrFormat, &err)
	head := make([]byte, min(size, 512))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, mlfeed.OffsetError(name, 0, "magic", fmt.Errorf("%w: %v", ErrTruncated, err))
	}
	rd = &Reader{name: name, size: size, ra: r, mapped: mapped}
	var schema *arrow.Schema
	switch {
	case bytes.HasPrefix(head, []byte("FEA1")):
		return nil, mlfeed.OffsetError(name, 0, "magic", fmt.Errorf("%w: Feather version 1 (rewrite it as Feather version 2, the Arrow IPC file format)", ErrUnsupported))
	case bytes.HasPrefix(head, []byte(magic)):
		var dicts int
		if rd.msgs, dicts, err = fileBlocks(r, size, name, budget(opts.Memory)); err != nil {
			return nil, err
		}
		// arrow-go's mapped file reader cannot load dictionaries (v18.8.0 leaves its
		// dictionary memo nil): such files are read through ReadAt, with copies.
		if dicts > 0 {
			rd.dictMu = new(sync.Mutex)
		}
		// Nor can it swap the bytes of big-endian data, which it does in the buffers it
		// reads: such files are read through ReadAt too, and swapped in the copies.
		if mapped != nil && dicts == 0 && !bigEndian(r, size, name) {
			rd.zero = true
			rd.file, err = ipc.NewMappedFileReader(mapped, ipc.WithBodySizeLimit(size))
		} else {
			rd.file, err = ipc.NewFileReader(io.NewSectionReader(r, 0, size), ipc.WithBodySizeLimit(size))
		}
		if err != nil {
			return nil, mlfeed.OffsetError(name, 0, "schema", fmt.Errorf("%w: %v", ErrFormat, err))
		}
		if rd.file.NumRecords() != len(rd.msgs) {
			return nil, mlfeed.OffsetError(name, 0, "footer", fmt.Errorf("%w: %d record batches, %d blocks", ErrFormat, rd.file.NumRecords(), len(rd.msgs)))
		}
		schema = rd.file.Schema()
	default:
		rd.stream = true
		if rd.msgs, err = streamMessages(r, size, name, budget(opts.Memory)); err != nil {
			return nil, err
		}
		for i, m := range rd.msgs {
			if m.kind == headerRecordBatch {
				rd.batches = append(rd.batches, i)
			}
		}
		ir, err := ipc.NewReader(io.NewSectionReader(r, 0, rd.msgs[0].size), ipc.WithBodySizeLimit(size))
		if err != nil {
			return nil, mlfeed.OffsetError(name, 0, "schema", fmt.Errorf("%w: %v", ErrFormat, err))
		}
		schema = ir.Schema()
		ir.Release()
	}
	sel, err := arrowmap.Select(opts.Columns, schema.Fields())
	if err != nil {
		return nil, fmt.Errorf("arrow: %s: %w", name, err)
	}
	if rd.plan, err = arrowmap.NewPlan(schema, opts.VariableLists, sel, opts.Columns); err != nil {
		if errors.Is(err, format.ErrUsage) {
			return nil, fmt.Errorf("arrow: %s: %w", name, err)
		}
		return nil, mlfeed.OffsetError(name, 0, "schema", mapErr(err))
	}
	rd.dec = arrowmap.Decoder{Plan: rd.plan, Shared: rd.shared}
	var row int64
	for i := range rd.numBatches() {
		m := rd.batch(i)
		if m.rows > 1<<31-1 {
			return nil, mlfeed.OffsetError(name, m.offset, "record batch", fmt.Errorf("%w: %d rows in one batch", ErrTooLarge, m.rows))
		}
		// Every column mlfeed reads takes at least a bit per row (a boolean), so a body cannot
		// hold more rows than 8 per (uncompressed) byte: a larger claim is refused before
		// anything is allocated for it.
		if m.rows > 8*m.unpacked+64 {
			return nil, mlfeed.OffsetError(name, m.offset, "record batch", fmt.Errorf("%w: %d rows claimed in a body of %d bytes", ErrTooLarge, m.rows, m.unpacked))
		}
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: int(m.rows), Samples: m.rows})
		rd.first = append(rd.first, row)
		row += m.rows
	}
	if len(rd.plan.NeedsDim()) > 0 {
		if err := rd.learn(); err != nil {
			return nil, err
		}
	}
	if rd.plan.HasLists() {
		// The sample counts of columns of lists of samples are in their offsets: each batch is
		// loaded (from the mapping, without a copy, when uncompressed) and only the offsets
		// of those columns are read.
		for i := range rd.chunks {
			if rd.chunks[i].Sequences == 0 {
				continue
			}
			rec, err := rd.record(i)
			if err != nil {
				return nil, err
			}
			n, err := rd.plan.Samples(rec)
			rec.Release()
			if err != nil {
				return nil, mlfeed.OffsetError(name, rd.batch(i).offset, "record batch", mapErr(err))
			}
			rd.chunks[i].Samples = n
		}
	}
	return rd, nil
}

// learn reads the first non-empty batch to learn the dimension of list columns without
// mlfeed metadata.
func (rd *Reader) learn() error {
	for i := range rd.chunks {
		if rd.chunks[i].Sequences == 0 {
			continue
		}
		rec, err := rd.record(i)
		if err != nil {
			return err
		}
		defer rec.Release()
		if err := rd.plan.Learn(rec); err != nil {
			return mlfeed.OffsetError(rd.name, rd.batch(i).offset, "record batch", mapErr(err))
		}
		return nil
	}
	return mlfeed.OffsetError(rd.name, 0, "schema", fmt.Errorf("%w: no rows to learn the length of list column(s) from", ErrFormat))
}

// shared reports whether b lies in the file mapping, which must not be written.
func (rd *Reader) shared(b []byte) bool {
	if len(rd.mapped) == 0 || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(rd.mapped)))
	return p >= lo && p < lo+uintptr(len(rd.mapped))
}

func (rd *Reader) numBatches() int {
	if rd.stream {
		return len(rd.batches)
	}
	return len(rd.msgs)
}

func (rd *Reader) batch(i int) message {
	if rd.stream {
		return rd.msgs[rd.batches[i]]
	}
	return rd.msgs[i]
}

// record loads record batch i.
func (rd *Reader) record(i int) (arrow.RecordBatch, error) {
	m := rd.batch(i)
	if !rd.stream {
		if rd.dictMu != nil {
			rd.dictMu.Lock()
			defer rd.dictMu.Unlock()
		}
		rec, err := rd.file.RecordBatchAt(i)
		if err != nil {
			return nil, mlfeed.OffsetError(rd.name, m.offset, "record batch", fmt.Errorf("%w: %v", ErrFormat, err))
		}
		return rec, nil
	}
	// The schema, the dictionary batches before this record batch, and the batch.
	parts := []io.Reader{io.NewSectionReader(rd.ra, 0, rd.msgs[0].size)}
	for k := 1; k < rd.batches[i]; k++ {
		if d := rd.msgs[k]; d.kind == headerDictionaryBatch {
			parts = append(parts, io.NewSectionReader(rd.ra, d.offset, d.size))
		}
	}
	parts = append(parts, io.NewSectionReader(rd.ra, m.offset, m.size))
	ir, err := ipc.NewReader(io.MultiReader(parts...), ipc.WithBodySizeLimit(rd.size))
	if err != nil {
		return nil, mlfeed.OffsetError(rd.name, 0, "schema", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	defer ir.Release()
	if !ir.Next() {
		err := ir.Err()
		if err == nil {
			err = errors.New("no record batch")
		}
		return nil, mlfeed.OffsetError(rd.name, m.offset, "record batch", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	rec := ir.RecordBatch()
	rec.Retain()
	return rec, nil
}

// Schema returns the streams, one per column (a column of sequence ids is not a stream).
func (rd *Reader) Schema() mlfeed.Schema { return rd.plan.Schema }

// Chunks returns one chunk per record batch.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// ReadChunk decodes record batch i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse decodes record batch i, reusing prev's memory for what is not handed out
// from the file without a copy.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (c *mlfeed.Chunk, err error) {
	if err := arrowmap.CheckChunk("arrow", rd.name, i, len(rd.chunks)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer arrowmap.Catch(rd.name, ErrFormat, &err)
	rd.populate(i)
	rec, err := rd.record(i)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	m := rd.batch(i)
	if rec.NumRows() != m.rows {
		return nil, mlfeed.OffsetError(rd.name, m.offset, "record batch", fmt.Errorf("%w: %d rows, the header says %d", ErrFormat, rec.NumRows(), m.rows))
	}
	c, err = rd.dec.Decode(rec, rd.first[i], prev)
	if err != nil {
		return nil, mlfeed.OffsetError(rd.name, m.offset, "record batch "+fmt.Sprint(i), mapErr(err))
	}
	return c, nil
}

// SequenceLengths returns the length of each sequence of chunk i: ones, unless a column holds
// lists of samples, whose lengths need the chunk decoded.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	return arrowmap.SequenceLengths("arrow", rd.name, rd.chunks, i, rd.plan.HasLists(), rd.ReadChunk)
}

// Details reports the IPC flavour, the number of record batches and whether batches are
// loaded from the file mapping (uncompressed values then come without a copy), for `mlfeed
// info`.
func (rd *Reader) Details() map[string]any {
	kind := "file"
	if rd.stream {
		kind = "stream"
	}
	d := map[string]any{"ipc": kind, "record_batches": len(rd.chunks), "mapped": rd.zero}
	if h := rd.plan.HalfStreams(); h != nil {
		d["float16_read_as_float32"] = h
	}
	return d
}

// Close releases the file.
func (rd *Reader) Close() error {
	var first error
	if rd.file != nil {
		first = rd.file.Close()
		rd.file = nil
	}
	if err := rd.closers.Close(); first == nil {
		first = err
	}
	return first
}
