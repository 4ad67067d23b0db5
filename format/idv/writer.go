package idv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Writer defaults, as in ML.NET's BinarySaver.
const (
	// DefaultMaxRowsPerBlock is BinarySaver's default cap on rows per block.
	DefaultMaxRowsPerBlock = 8192
	// DefaultMaxBytesPerBlock is BinarySaver's default cap on the estimated bytes of the rows
	// of one block (all columns together): 80 MiB.
	DefaultMaxBytesPerBlock = 80 << 20
	// DefaultLevel is the DEFLATE level: zlib's default, which .NET's DeflateStream uses.
	DefaultLevel = 6
)

// WriterOptions control a Writer. The zero value is BinarySaver's default: DEFLATE, at most
// 8192 rows and 80 MiB per block.
type WriterOptions struct {
	// Uncompressed stores blocks as they are (compression kind None) instead of DEFLATE.
	Uncompressed bool
	// Level is the DEFLATE level, 1 (fastest) to 9 (smallest). Zero means DefaultLevel.
	Level int
	// MaxRowsPerBlock caps the rows of a block. Zero means DefaultMaxRowsPerBlock; negative
	// means no cap (MaxBytesPerBlock alone decides).
	MaxRowsPerBlock int
	// MaxBytesPerBlock caps the estimated size of a block's rows over all columns, as
	// BinarySaver estimates it. Zero means DefaultMaxBytesPerBlock; negative means no cap, and
	// then every block holds MaxRowsPerBlock rows (the last one fewer), as in BinarySaver.
	MaxBytesPerBlock int64
	// Context, if not nil, carries the scheduler (internal/sched, as package convert sets up)
	// whose idle threads compress the columns of a block at once. Nil compresses them in
	// turn on the goroutine that calls WriteChunk and Close; the Writer starts no goroutines.
	Context context.Context
}

// Writer writes an IDV stream as BinarySaver does: a header (written last), the data blocks
// in block-major order (block 0 of every column, then block 1, ...), the lookup tables, each
// column's metadata blocks and metadata table, the column table of contents and the tail
// signature. Every column has the same rows per block, chosen from the first rows with
// BinarySaver's rule. It implements mlfeed.Sink; memory holds about one block of rows.
type Writer struct {
	w        io.WriteSeeker
	bw       *bufio.Writer
	start    int64 // position of the stream's first byte in w
	pos      int64 // bytes written, relative to start
	schema   mlfeed.Schema
	codecs   []*codec
	builders []*builder
	opts     WriterOptions
	maxRows  int64
	maxBytes int64
	rpb      int64 // 0 until decided
	rows     int64
	lookups  [][]blockEntry
	err      error
	closed   bool
}

// NewWriter returns a Writer of schema to w, starting at w's current position (offsets in
// the stream are relative to it). w must be seekable: the header is written last. Streams
// must hold one sample per sequence; complex element types cannot be stored.
func NewWriter(w io.WriteSeeker, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	wr := &Writer{w: w, schema: schema}
	if opts != nil {
		wr.opts = *opts
	}
	o := &wr.opts
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if o.Level < 1 || o.Level > 9 {
		return nil, fmt.Errorf("idv: DEFLATE level %d outside 1..9", o.Level)
	}
	wr.maxRows, wr.maxBytes = int64(o.MaxRowsPerBlock), o.MaxBytesPerBlock
	if wr.maxRows == 0 {
		wr.maxRows = DefaultMaxRowsPerBlock
	}
	if wr.maxBytes == 0 {
		wr.maxBytes = DefaultMaxBytesPerBlock
	}
	if wr.maxRows < 0 && wr.maxBytes < 0 {
		return nil, errors.New("idv: rows per block and bytes per block cannot both be unlimited")
	}
	if wr.maxBytes < 0 {
		// Without a byte cap BinarySaver uses the row cap as it is, whatever the data.
		wr.rpb = wr.maxRows
	}
	if err := schema.Validate(); err != nil {
		return nil, fmt.Errorf("idv: %w", err)
	}
	for i := range schema.Streams {
		st := &wr.schema.Streams[i]
		if columnName(st) == "" {
			return nil, fmt.Errorf("%w: stream %d has no name", ErrFormat, i)
		}
		c, err := codecFor(st)
		if err != nil {
			return nil, err
		}
		kinds := map[string]bool{}
		for k := range st.Metadata {
			a := &st.Metadata[k]
			if a.Name == "" || kinds[a.Name] {
				return nil, fmt.Errorf("%w: stream %q: metadata kind %q is empty or repeated", ErrFormat, st.Name, a.Name)
			}
			kinds[a.Name] = true
			d := a.Desc
			d.Name = st.Name + " metadata " + a.Name
			if _, err := codecFor(&d); err != nil {
				return nil, err
			}
		}
		wr.codecs = append(wr.codecs, c)
		wr.builders = append(wr.builders, newBuilder(st, c))
	}
	wr.lookups = make([][]blockEntry, len(schema.Streams))
	start, err := w.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("idv: the output must be seekable: %w", err)
	}
	wr.start = start
	wr.bw = bufio.NewWriterSize(w, 1<<20)
	wr.write(make([]byte, headerSize))
	return wr, wr.err
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.pos += int64(n)
	w.err = err
}

// columnName is the name a stream's column gets: its Name, except for a hidden column as the
// reader names them ("x#3" with alias "x"), which gets its alias back. Other aliases (CTF's
// short names) are not column names.
func columnName(st *mlfeed.Stream) string {
	if st.Alias != "" && strings.HasPrefix(st.Name, st.Alias+"#") {
		return st.Alias
	}
	return st.Name
}

// WriteChunk appends the rows of c: every stream must hold exactly one sample per sequence.
// Sequence ids are not stored (IDV has no place for them).
func (w *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("idv: WriteChunk after Close")
	}
	if err := c.Validate(&w.schema); err != nil {
		return err
	}
	for i := range c.Streams {
		seq := c.Streams[i].SeqStart
		for q := 0; q < c.Sequences; q++ {
			if k := seq[q+1] - seq[q]; k != 1 {
				return fmt.Errorf("%w: stream %q: sequence %d has %d samples; an IDV row holds exactly one value per column, so sequences of other lengths cannot be stored", ErrUnsupported, w.schema.Streams[i].Name, q, k)
			}
		}
	}
	s, n := 0, c.Sequences
	if len(w.builders) == 0 {
		w.rows += int64(n)
		return nil
	}
	var marks []mark
	for s < n && w.rpb == 0 {
		// Rows per block not decided yet: add rows one at a time, as BinarySaver does.
		if marks == nil {
			marks = make([]mark, len(w.builders))
		}
		var est int64
		for i, b := range w.builders {
			marks[i] = b.mark()
			if err := b.add(&c.Streams[i], s, s+1); err != nil {
				return w.fail(err)
			}
			est += b.estimate()
		}
		rows := int64(w.builders[0].rows)
		if w.maxBytes >= 0 && est > w.maxBytes && rows > 1 {
			for i, b := range w.builders {
				b.undo(marks[i])
			}
			w.rpb = rows - 1
		} else {
			s++
			w.rows++
			if w.maxBytes >= 0 && est > w.maxBytes || w.maxRows >= 0 && rows >= w.maxRows {
				w.rpb = rows
			}
		}
		if w.rpb > 0 {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	for s < n {
		k := min(int64(n-s), w.rpb-int64(w.builders[0].rows))
		for i, b := range w.builders {
			if err := b.add(&c.Streams[i], s, s+int(k)); err != nil {
				return w.fail(err)
			}
		}
		s += int(k)
		w.rows += k
		if int64(w.builders[0].rows) == w.rpb {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

var deflaters sync.Map // level -> *sync.Pool of *flate.Writer

func compress(p []byte, level int) ([]byte, error) {
	pl, _ := deflaters.LoadOrStore(level, &sync.Pool{})
	pool := pl.(*sync.Pool)
	var buf bytes.Buffer
	buf.Grow(len(p)/2 + 64)
	fw, _ := pool.Get().(*flate.Writer)
	if fw == nil {
		var err error
		if fw, err = flate.NewWriter(&buf, level); err != nil {
			return nil, err
		}
	} else {
		fw.Reset(&buf)
	}
	defer pool.Put(fw)
	if _, err := fw.Write(p); err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// flush encodes and compresses the current block of every column (the columns as tasks of
// the scheduler in WriterOptions.Context) and writes it.
func (w *Writer) flush() error {
	raw := make([][]byte, len(w.builders))
	for i, b := range w.builders {
		r, err := b.encode()
		if err != nil {
			return w.fail(err)
		}
		raw[i] = r
	}
	out := raw
	if !w.opts.Uncompressed {
		out = make([][]byte, len(raw))
		ctx := w.opts.Context
		if ctx == nil {
			ctx = context.Background()
		}
		err := sched.Parallel(ctx, len(raw), func(_ context.Context, i int) error {
			var err error
			out[i], err = compress(raw[i], w.opts.Level)
			return err
		})
		if err != nil {
			return w.fail(err)
		}
	}
	for i := range out {
		w.lookups[i] = append(w.lookups[i], blockEntry{w.pos, int32(len(out[i])), int32(len(raw[i]))})
		w.write(out[i])
	}
	return w.err
}

// Close writes the remaining rows, the lookup tables, metadata, table of contents, tail and
// header, and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if len(w.builders) > 0 && w.builders[0].rows > 0 {
		if w.rpb == 0 {
			w.rpb = int64(w.builders[0].rows)
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.rpb == 0 {
		w.rpb = 1
	}
	le := binary.LittleEndian
	lookupOffs := make([]int64, len(w.builders))
	for i, entries := range w.lookups {
		lookupOffs[i] = w.pos
		p := make([]byte, 0, 16*len(entries))
		for _, e := range entries {
			p = le.AppendUint64(p, uint64(e.off))
			p = le.AppendUint32(p, uint32(e.stored))
			p = le.AppendUint32(p, uint32(e.inflated))
		}
		w.write(p)
	}
	metaOffs := make([]int64, len(w.builders))
	for i := range w.schema.Streams {
		off, err := w.writeMetadata(&w.schema.Streams[i])
		if err != nil {
			return w.fail(err)
		}
		metaOffs[i] = off
	}
	toc := w.pos
	var p []byte
	// The compression kind describes a column's blocks. Without rows there are none, and the
	// kind is BinarySaver's default, DEFLATE, as in the schema-only streams of ML.NET models.
	comp := byte(compDeflate)
	if w.opts.Uncompressed && w.rows > 0 {
		comp = compNone
	}
	for i := range w.schema.Streams {
		p = appendString(p, columnName(&w.schema.Streams[i]))
		p = w.codecs[i].encode(p)
		p = append(p, comp)
		p = appendLEB(p, uint64(w.rpb))
		p = le.AppendUint64(p, uint64(lookupOffs[i]))
		p = le.AppendUint64(p, uint64(metaOffs[i]))
	}
	w.write(p)
	tail := w.pos
	w.write(le.AppendUint64(nil, tailSignature))
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		return w.err
	}
	h := make([]byte, 0, headerSize)
	h = le.AppendUint64(h, signature)
	h = le.AppendUint64(h, WriterVersion)
	h = le.AppendUint64(h, WriterVersion)
	h = le.AppendUint64(h, uint64(toc))
	h = le.AppendUint64(h, uint64(tail))
	h = le.AppendUint64(h, uint64(w.rows))
	h = le.AppendUint32(h, uint32(len(w.builders)))
	h = h[:headerSize]
	if _, err := w.w.Seek(w.start, io.SeekStart); err != nil {
		return w.fail(err)
	}
	if _, err := w.w.Write(h); err != nil {
		return w.fail(err)
	}
	if _, err := w.w.Seek(w.start+w.pos, io.SeekStart); err != nil {
		return w.fail(err)
	}
	return nil
}

// writeMetadata writes a stream's metadata blocks and table and returns the table's offset,
// or 0 when the stream has no metadata. Each value is stored uncompressed when that is not
// larger than its DEFLATE form, as BinarySaver does.
func (w *Writer) writeMetadata(st *mlfeed.Stream) (int64, error) {
	if len(st.Metadata) == 0 {
		return 0, nil
	}
	le := binary.LittleEndian
	var toc []byte
	toc = appendLEB(toc, uint64(len(st.Metadata)))
	for k := range st.Metadata {
		a := &st.Metadata[k]
		d := a.Desc
		d.Name = st.Name + " metadata " + a.Name
		c, err := codecFor(&d)
		if err != nil {
			return 0, err
		}
		if n := a.Data.Samples(); n != 1 || len(a.Data.SeqStart) != 2 {
			return 0, fmt.Errorf("%w: %s holds %d samples, want one", ErrFormat, d.Name, n)
		}
		ms := mlfeed.Schema{Streams: []mlfeed.Stream{d}}
		if err := (&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{a.Data}}).Validate(&ms); err != nil {
			return 0, fmt.Errorf("idv: %s: %w", d.Name, err)
		}
		b := newBuilder(&d, c)
		if err := b.add(&a.Data, 0, 1); err != nil {
			return 0, err
		}
		raw, err := b.encode()
		if err != nil {
			return 0, err
		}
		block, comp := raw, byte(compNone)
		if !w.opts.Uncompressed {
			z, err := compress(raw, w.opts.Level)
			if err != nil {
				return 0, err
			}
			if len(z) < len(raw) {
				block, comp = z, compDeflate
			}
		}
		toc = appendString(toc, a.Name)
		toc = c.encode(toc)
		toc = append(toc, comp)
		toc = le.AppendUint64(toc, uint64(w.pos))
		toc = appendLEB(toc, uint64(len(block)))
		w.write(block)
	}
	off := w.pos
	w.write(toc)
	return off, w.err
}
