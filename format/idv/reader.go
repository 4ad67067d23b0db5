package idv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Vectors says how fixed-size vector columns are exposed.
type Vectors uint8

const (
	// VectorsAuto (the default) exposes a fixed-size vector column as a Sparse stream when
	// any of its rows is stored sparsely and as a Dense stream otherwise. Deciding this reads
	// the small per-row header of every block of such columns when the file is opened.
	VectorsAuto Vectors = iota
	// VectorsDense exposes every fixed-size vector column as a Dense stream, expanding sparse
	// rows (within a memory limit).
	VectorsDense
	// VectorsSparse exposes every fixed-size vector column as a Sparse stream.
	VectorsSparse
)

// ReaderOptions control a Reader. The zero value is the default.
type ReaderOptions struct {
	// FileName names the data in error messages. Open sets it to the file's path when empty.
	FileName string
	// Vectors selects dense or sparse streams for fixed-size vector columns (default
	// VectorsAuto).
	Vectors Vectors
	// BlocksPerChunk is the number of IDV blocks (of every column) in one chunk. Zero picks
	// enough blocks for at least 8192 rows per chunk.
	BlocksPerChunk int
	// Log receives warnings: columns and metadata items skipped because ML.NET does not
	// know their codec or compression. Nil discards them.
	Log io.Writer
	// Columns, if not nil, names the columns to read (in file order, whatever the order of
	// the names); the others are not decoded. A name that matches no readable column is an
	// error (ErrNoColumn). Nil reads every column.
	Columns []string
	// Memory is the memory budget in bytes (the scheduler's, the CLI's --memory): a block
	// that inflates to more is refused when the file is opened (ErrTooLarge, naming the size
	// and --memory), before anything is inflated. Zero means sched.DefaultMemory.
	Memory int64
}

// Reader reads an IDV stream. It implements mlfeed.Source and mlfeed.Detailer; ReadChunk may
// be called from several goroutines at once.
type Reader struct {
	// Header is the stream's header.
	Header Header

	r        io.ReaderAt
	size     int64
	opts     ReaderOptions
	name     string
	cols     []*column // every column of the table of contents
	alive    []*column // the columns of the schema
	schema   mlfeed.Schema
	rpb      int64
	nblocks  int
	bpc      int
	chunks   []mlfeed.ChunkInfo
	seq      []int64 // SeqStart shared by full chunks
	closer   io.Closer
	warnings []string
	inflated int64 // sum of the blocks' inflated lengths
}

type column struct {
	index     int
	name      string
	codec     *codec
	codecDesc string // the codec as described in the file, for dead columns too
	comp      byte
	rpb       int64
	lookupOff int64
	metaOff   int64
	dead      string
	blocks    []blockEntry
	lay       layout
	meta      []metaEntry
	metaAnns  []mlfeed.Annotation
}

type blockEntry struct {
	off              int64
	stored, inflated int32
}

type metaEntry struct {
	kind  string
	codec string
	comp  byte
	off   int64
	size  int64
	dead  string
}

// Open opens the named IDV file. Close closes the file.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	f, size, err := mmap.OpenFile(name)
	if err != nil {
		return nil, err
	}
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = name
	}
	r, err := NewReader(f, size, &o)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the header, table of contents, lookup tables and metadata of the IDV
// stream of the given size in r. Offsets are relative to r's start, so an IDV embedded in a
// larger file (an ML.NET model zip entry) is read through io.NewSectionReader(f, start, size).
// Data blocks are decoded by ReadChunk.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	rd := &Reader{r: r, size: size}
	if opts != nil {
		rd.opts = *opts
	}
	rd.name = rd.opts.FileName
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	if err := rd.readTOC(); err != nil {
		return nil, err
	}
	if err := rd.selectColumns(); err != nil {
		return nil, err
	}
	for _, c := range rd.alive {
		if err := rd.readLookup(c); err != nil {
			return nil, err
		}
	}
	for _, c := range rd.alive {
		if err := rd.readMetadata(c); err != nil {
			return nil, err
		}
	}
	if err := rd.chooseLayouts(); err != nil {
		return nil, err
	}
	rd.makeChunks()
	return rd, nil
}

func (r *Reader) errf(off int64, field string, err error) error {
	return mlfeed.OffsetError(r.name, off, field, err)
}

func (r *Reader) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.warnings = append(r.warnings, msg)
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, "idv: %s: warning: %s\n", r.name, msg)
	}
}

// readAt reads n bytes at off, checking them against the stream's size first.
func (r *Reader) readAt(off int64, n int64, field string) ([]byte, error) {
	if off < 0 || n < 0 || off > r.size || n > r.size-off {
		return nil, r.errf(off, field, fmt.Errorf("%w: %d bytes at offset %d lie beyond the end of the %d-byte stream", ErrTruncated, n, off, r.size))
	}
	p := make([]byte, n)
	if _, err := r.r.ReadAt(p, off); err != nil && !(err == io.EOF && n > 0) {
		return nil, r.errf(off, field, err)
	}
	return p, nil
}

func (r *Reader) readHeader() error {
	if r.size < headerSize {
		return r.errf(0, "header", fmt.Errorf("%w: %d bytes, an IDV header takes %d", ErrTruncated, r.size, headerSize))
	}
	p, err := r.readAt(0, headerSize, "header")
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint64(p) != signature {
		return r.errf(0, "signature", fmt.Errorf("%w: not an IDV stream (signature % x)", ErrFormat, p[:8]))
	}
	h := Header{
		Version: le.Uint64(p[8:]), CompatibleVersion: le.Uint64(p[16:]),
		TOCOffset: int64(le.Uint64(p[24:])), TailOffset: int64(le.Uint64(p[32:])),
		RowCount: int64(le.Uint64(p[40:])), ColumnCount: int32(le.Uint32(p[48:])),
	}
	r.Header = h
	switch {
	case h.CompatibleVersion > h.Version:
		return r.errf(16, "compatible version", fmt.Errorf("%w: compatible version %s is above version %s", ErrFormat, VersionString(h.CompatibleVersion), VersionString(h.Version)))
	case h.Version < minVersion:
		return r.errf(8, "version", fmt.Errorf("%w: version %s is older than 1.1.1.2", ErrUnsupported, VersionString(h.Version)))
	case h.CompatibleVersion < minCompatible:
		return r.errf(16, "compatible version", fmt.Errorf("%w: compatible version %s predates 1.1.1.4 and cannot be read (as in ML.NET)", ErrUnsupported, VersionString(h.CompatibleVersion)))
	case h.CompatibleVersion > WriterVersion:
		return r.errf(16, "compatible version", fmt.Errorf("%w: file needs a reader of version %s, this one is %s", ErrUnsupported, VersionString(h.CompatibleVersion), VersionString(WriterVersion)))
	case h.RowCount < 0:
		return r.errf(40, "row count", fmt.Errorf("%w: negative row count %d", ErrFormat, h.RowCount))
	case h.ColumnCount < 0:
		return r.errf(48, "column count", fmt.Errorf("%w: negative column count %d", ErrFormat, h.ColumnCount))
	case h.TailOffset < headerSize || h.TailOffset > r.size-8:
		return r.errf(32, "tail offset", fmt.Errorf("%w: tail offset %d outside [256, %d]", ErrTruncated, h.TailOffset, r.size-8))
	case h.ColumnCount > 0 && (h.TOCOffset < headerSize || h.TOCOffset >= r.size):
		return r.errf(24, "table of contents offset", fmt.Errorf("%w: table of contents offset %d outside [256, %d)", ErrFormat, h.TOCOffset, r.size))
	}
	t, err := r.readAt(h.TailOffset, 8, "tail signature")
	if err != nil {
		return err
	}
	if le.Uint64(t) != tailSignature {
		return r.errf(h.TailOffset, "tail signature", fmt.Errorf("%w: bad tail signature % x", ErrFormat, t))
	}
	return nil
}

// ErrNoColumn is returned by NewReader when ReaderOptions.Columns names a column the stream
// does not have (or one that is skipped).
var ErrNoColumn = errors.New("idv: no such column")

// selectColumns keeps the columns ReaderOptions.Columns names, in file order.
func (r *Reader) selectColumns() error {
	if r.opts.Columns == nil {
		return nil
	}
	var keep []*column
	for _, name := range r.opts.Columns {
		found := false
		for _, c := range r.alive {
			found = found || c.name == name
		}
		if !found {
			return fmt.Errorf("%w %q in %s", ErrNoColumn, name, r.name)
		}
	}
	for _, c := range r.alive {
		for _, name := range r.opts.Columns {
			if c.name == name {
				keep = append(keep, c)
				break
			}
		}
	}
	r.alive = keep
	return nil
}

// minTOCEntry is the smallest possible column TOC entry: 1-byte name, 1-byte codec name,
// parameter length, compression, rows per block, two int64 offsets.
const minTOCEntry = 2 + 2 + 1 + 1 + 1 + 16

func (r *Reader) readTOC() error {
	h := &r.Header
	if h.ColumnCount == 0 {
		return nil
	}
	avail := r.size - h.TOCOffset
	if int64(h.ColumnCount)*minTOCEntry > avail {
		return r.errf(48, "column count", fmt.Errorf("%w: %d columns cannot fit in the %d bytes after the table of contents offset", ErrTooLarge, h.ColumnCount, avail))
	}
	if err := r.parseWindow(h.TOCOffset, int64(h.ColumnCount)*64, "table of contents", r.parseTOC); err != nil {
		return err
	}
	for _, c := range r.cols {
		if c.dead != "" {
			r.warn("column %d %q skipped: %s", c.index, c.name, c.dead)
		}
	}
	return nil
}

// parseWindow reads bytes from off and parses them, widening the window (up to the end of
// the stream) while parse fails for lack of bytes, so that a table is read whole without
// reading the rest of the file.
func (r *Reader) parseWindow(off, guess int64, field string, parse func([]byte) error) error {
	avail := r.size - off
	window := min(avail, max(guess, 4096))
	for {
		p, err := r.readAt(off, window, field)
		if err != nil {
			return err
		}
		err = parse(p)
		if err == nil || !errors.Is(err, errShort) || window == avail {
			return err
		}
		window = min(avail, window*4)
	}
}

func (r *Reader) parseTOC(p []byte) error {
	h := &r.Header
	br := &bytesReader{b: p}
	r.cols, r.alive = r.cols[:0], r.alive[:0]
	for i := 0; i < int(h.ColumnCount); i++ {
		c := &column{index: i}
		start := br.off
		fail := func(what string, err error) error {
			if errors.Is(err, errShort) {
				err = fmt.Errorf("%w: %s runs past the end of the stream: %w", ErrTruncated, what, errShort)
			}
			return r.errf(h.TOCOffset+int64(start), fmt.Sprintf("column %d %q table of contents entry", i, c.name), err)
		}
		name, err := br.str()
		if err != nil {
			return fail("column name", err)
		}
		c.name = name
		if name == "" {
			return fail("", fmt.Errorf("%w: empty column name", ErrFormat))
		}
		cd, err := br.readCodec()
		switch {
		case errors.Is(err, errDead):
			c.dead = err.Error()
		case err != nil:
			return fail("codec", err)
		default:
			c.codec, c.codecDesc = cd, cd.String()
		}
		if c.comp, err = br.u8(); err != nil {
			return fail("compression", err)
		}
		if c.comp > compDeflate && c.dead == "" {
			c.dead = fmt.Sprintf("unknown compression kind %d", c.comp)
		}
		rpb, err := br.leb()
		if err != nil {
			return fail("rows per block", err)
		}
		if rpb > math.MaxInt32 {
			return fail("", fmt.Errorf("%w: rows per block %d exceeds 2^31-1", ErrFormat, rpb))
		}
		c.rpb = int64(rpb)
		lo, err := br.u64()
		if err != nil {
			return fail("lookup table offset", err)
		}
		mo, err := br.u64()
		if err != nil {
			return fail("metadata offset", err)
		}
		c.lookupOff, c.metaOff = int64(lo), int64(mo)
		r.cols = append(r.cols, c)
		if c.dead != "" {
			continue
		}
		if err := r.checkColumn(c); err != nil {
			return fail("", err)
		}
		r.alive = append(r.alive, c)
	}
	return nil
}

func (r *Reader) checkColumn(c *column) error {
	h := &r.Header
	if h.RowCount == 0 {
		if c.rpb < 0 {
			return fmt.Errorf("%w: negative rows per block", ErrFormat)
		}
	} else if c.rpb <= 0 {
		return fmt.Errorf("%w: rows per block is 0 with %d rows", ErrFormat, h.RowCount)
	}
	if len(r.alive) > 0 && r.alive[0].rpb != c.rpb {
		return fmt.Errorf("%w: rows per block %d differs from column %q's %d (ML.NET requires one value)", ErrUnsupported, c.rpb, r.alive[0].name, r.alive[0].rpb)
	}
	if c.metaOff != 0 && (c.metaOff < headerSize || c.metaOff > h.TailOffset) {
		return fmt.Errorf("%w: metadata offset %d outside [256, %d]", ErrFormat, c.metaOff, h.TailOffset)
	}
	r.rpb = c.rpb
	if h.RowCount == 0 {
		return nil
	}
	nb := (h.RowCount-1)/c.rpb + 1
	if nb > math.MaxInt32 {
		return fmt.Errorf("%w: %d blocks per column", ErrUnsupported, nb)
	}
	if c.lookupOff < headerSize || c.lookupOff > h.TailOffset-16*nb {
		return fmt.Errorf("%w: lookup table of %d blocks at offset %d does not fit in [256, %d)", ErrFormat, nb, c.lookupOff, h.TailOffset)
	}
	r.rpb, r.nblocks = c.rpb, int(nb)
	return nil
}

// maxRatio bounds how much DEFLATE can expand: a stored block of n bytes inflates to at
// most about 1032n bytes.
const maxRatio = 1032

func (r *Reader) readLookup(c *column) error {
	if r.nblocks == 0 {
		return nil
	}
	p, err := r.readAt(c.lookupOff, 16*int64(r.nblocks), fmt.Sprintf("column %q lookup table", c.name))
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	c.blocks = make([]blockEntry, r.nblocks)
	for b := range c.blocks {
		e := blockEntry{int64(le.Uint64(p[16*b:])), int32(le.Uint32(p[16*b+8:])), int32(le.Uint32(p[16*b+12:]))}
		field := fmt.Sprintf("column %q lookup entry of block %d", c.name, b)
		at := c.lookupOff + 16*int64(b)
		switch {
		case e.stored < 0 || e.inflated < 0:
			return r.errf(at, field, fmt.Errorf("%w: negative block length (stored %d, inflated %d)", ErrFormat, e.stored, e.inflated))
		case e.off < headerSize || e.off > r.Header.TailOffset-int64(e.stored):
			return r.errf(at, field, fmt.Errorf("%w: block of %d bytes at offset %d outside [256, %d)", ErrTruncated, e.stored, e.off, r.Header.TailOffset))
		case c.comp == compNone && e.stored != e.inflated:
			return r.errf(at, field, fmt.Errorf("%w: uncompressed block stored in %d bytes declares %d", ErrFormat, e.stored, e.inflated))
		case int64(e.inflated) > int64(e.stored)*maxRatio+258:
			return r.errf(at, field, fmt.Errorf("%w: %d stored bytes cannot inflate to %d", ErrTooLarge, e.stored, e.inflated))
		case int64(e.inflated) > r.memory():
			return r.errf(at, field, fmt.Errorf("%w: the block inflates to %d bytes, more than the memory budget of %d bytes (raise it with --memory)", ErrTooLarge, e.inflated, r.memory()))
		}
		c.blocks[b] = e
		// Blocks may share stored bytes, but all of them together cannot inflate to more than
		// the whole stream could: this bounds what decoding may allocate.
		r.inflated += int64(e.inflated)
		if r.inflated > r.size*maxRatio {
			return r.errf(at, field, fmt.Errorf("%w: the blocks declare %d inflated bytes, more than a %d-byte stream can hold", ErrTooLarge, r.inflated, r.size))
		}
	}
	return nil
}

// memory returns the memory budget (ReaderOptions.Memory).
func (r *Reader) memory() int64 {
	if r.opts.Memory > 0 {
		return r.opts.Memory
	}
	return sched.DefaultMemory
}

var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// inflate decompresses src into dst, which must be filled exactly; extra output is ignored,
// as ML.NET ignores it.
func inflate(dst, src []byte) error {
	fr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(fr)
	if err := fr.(flate.Resetter).Reset(bytes.NewReader(src), nil); err != nil {
		return fmt.Errorf("%w: DEFLATE data: %v", ErrFormat, err)
	}
	switch _, err := io.ReadFull(fr, dst); err {
	case nil:
		return nil
	case io.EOF, io.ErrUnexpectedEOF:
		return fmt.Errorf("%w: block inflates to fewer bytes than the %d declared", ErrFormat, len(dst))
	default:
		return fmt.Errorf("%w: DEFLATE data: %v", ErrFormat, err)
	}
}

// inflateAll decompresses a metadata block, which declares no inflated length, up to limit.
func inflateAll(src []byte, limit int64) ([]byte, error) {
	fr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(fr)
	if err := fr.(flate.Resetter).Reset(bytes.NewReader(src), nil); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(fr, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: DEFLATE data: %v", ErrFormat, err)
	}
	return out, nil
}

// blockData reads and decompresses block b of column c.
func (r *Reader) blockData(c *column, b int) ([]byte, error) {
	e := c.blocks[b]
	field := fmt.Sprintf("column %q block %d", c.name, b)
	if c.comp == compNone {
		dst := mlfeed.NewBuffer(mlfeed.Uint8, int(e.stored)).Bytes
		if _, err := r.r.ReadAt(dst, e.off); err != nil && !(err == io.EOF && len(dst) > 0) {
			return nil, r.errf(e.off, field, err)
		}
		return dst, nil
	}
	bp := storedBufs.Get().(*[]byte)
	defer storedBufs.Put(bp)
	if cap(*bp) < int(e.stored) {
		*bp = make([]byte, e.stored)
	}
	src := (*bp)[:e.stored]
	if _, err := r.r.ReadAt(src, e.off); err != nil && !(err == io.EOF && len(src) > 0) {
		return nil, r.errf(e.off, field, err)
	}
	dst := mlfeed.NewBuffer(mlfeed.Uint8, int(e.inflated)).Bytes
	if err := inflate(dst, src); err != nil {
		return nil, r.errf(e.off, field, err)
	}
	return dst, nil
}

// storedBufs holds buffers for compressed blocks, which are dropped once inflated.
var storedBufs = sync.Pool{New: func() any { return new([]byte) }}

// rowsIn returns the number of rows block b holds.
func (r *Reader) rowsIn(b int) int {
	if b == r.nblocks-1 {
		return int(r.Header.RowCount - int64(b)*r.rpb)
	}
	return int(r.rpb)
}

// decode reads and decodes block b of column c.
func (r *Reader) decode(c *column, b int) (frag, error) {
	data, err := r.blockData(c, b)
	if err != nil {
		return frag{}, err
	}
	f, err := decodeBlock(c.codec, data, r.rowsIn(b), c.lay, 64*int64(len(data))+1<<20)
	if err != nil {
		e := c.blocks[b]
		off := e.off
		var be *blockError
		if c.comp == compNone && errors.As(err, &be) {
			off += int64(be.off)
		}
		return frag{}, r.errf(off, fmt.Sprintf("column %q block %d", c.name, b), err)
	}
	return f, nil
}

func (r *Reader) readMetadata(c *column) error {
	if c.metaOff == 0 {
		return nil
	}
	err := r.parseWindow(c.metaOff, 1024, fmt.Sprintf("column %q metadata", c.name), func(p []byte) error {
		return r.parseMetadata(c, p)
	})
	if err != nil {
		return err
	}
	for _, me := range c.meta {
		if me.dead != "" {
			r.warn("column %q metadata %q skipped: %s", c.name, me.kind, me.dead)
		}
	}
	return nil
}

func (r *Reader) parseMetadata(c *column, p []byte) error {
	tail := r.Header.TailOffset
	c.meta, c.metaAnns = c.meta[:0], nil
	br := &bytesReader{b: p}
	fail := func(err error) error {
		if errors.Is(err, errShort) {
			err = fmt.Errorf("%w: metadata table runs past the end of the stream: %w", ErrTruncated, errShort)
		}
		return r.errf(c.metaOff+int64(br.off), fmt.Sprintf("column %q metadata table", c.name), err)
	}
	m, err := br.leb()
	if err != nil {
		return fail(err)
	}
	if m == 0 || m >= math.MaxInt32 || m > uint64(r.size-c.metaOff)/12 {
		return fail(fmt.Errorf("%w: %d metadata entries", ErrFormat, m))
	}
	kinds := map[string]bool{}
	var anns []mlfeed.Annotation
	for i := 0; i < int(m); i++ {
		var me metaEntry
		if me.kind, err = br.str(); err != nil {
			return fail(err)
		}
		if me.kind == "" || kinds[me.kind] {
			return fail(fmt.Errorf("%w: metadata kind %q is empty or repeated", ErrFormat, me.kind))
		}
		kinds[me.kind] = true
		cd, err := br.readCodec()
		if errors.Is(err, errDead) {
			me.dead = err.Error()
		} else if err != nil {
			return fail(err)
		} else {
			me.codec = cd.String()
		}
		if me.comp, err = br.u8(); err != nil {
			return fail(err)
		}
		if me.comp > compDeflate && me.dead == "" {
			me.dead = fmt.Sprintf("unknown compression kind %d", me.comp)
		}
		off, err := br.u64()
		if err != nil {
			return fail(err)
		}
		size, err := br.leb()
		if err != nil {
			return fail(err)
		}
		me.off = int64(off)
		if me.off < headerSize || me.off > tail || size == 0 || size > uint64(tail-me.off) {
			return fail(fmt.Errorf("%w: metadata %q block of %d bytes at offset %d outside [256, %d)", ErrFormat, me.kind, size, me.off, tail))
		}
		me.size = int64(size)
		c.meta = append(c.meta, me)
		if me.dead != "" {
			continue
		}
		a, err := r.readAnnotation(c, &me, cd)
		if err != nil {
			return err
		}
		anns = append(anns, a)
	}
	c.metaAnns = anns
	return nil
}

// readAnnotation reads and decodes the value of one metadata item.
func (r *Reader) readAnnotation(c *column, me *metaEntry, cd *codec) (mlfeed.Annotation, error) {
	field := fmt.Sprintf("column %q metadata %q", c.name, me.kind)
	src, err := r.readAt(me.off, me.size, field)
	if err != nil {
		return mlfeed.Annotation{}, err
	}
	data := src
	if me.comp == compDeflate {
		if data, err = inflateAll(src, me.size*maxRatio+258); err != nil {
			return mlfeed.Annotation{}, r.errf(me.off, field, err)
		}
	}
	f, err := decodeBlock(cd, data, 1, layAuto, 0)
	if err != nil {
		off := me.off
		var be *blockError
		if me.comp == compNone && errors.As(err, &be) {
			off += int64(be.off)
		}
		return mlfeed.Annotation{}, r.errf(off, field, err)
	}
	desc := streamOf(cd)
	if f.sparse {
		desc.Storage = mlfeed.Sparse
	}
	return mlfeed.Annotation{Name: me.kind, Desc: desc, Data: mlfeed.StreamData{
		SeqStart: []int64{0, 1}, SampleStart: f.starts, Indices: f.indices, Values: f.values,
	}}, nil
}

// chooseLayouts decides how each column's rows become samples, and builds the schema.
func (r *Reader) chooseLayouts() error {
	names := map[string]int{}
	for _, c := range r.alive {
		names[c.name]++
	}
	seen := map[string]int{}
	for _, c := range r.alive {
		cd := c.codec
		switch {
		case !cd.vector:
			c.lay = layScalar
		case cd.size() == 0:
			c.lay = layVar
		case r.opts.Vectors == VectorsDense:
			c.lay = layDense
		case r.opts.Vectors == VectorsSparse:
			c.lay = laySparse
		default:
			sparse, err := r.anySparse(c)
			if err != nil {
				return err
			}
			c.lay = layDense
			if sparse {
				c.lay = laySparse
			}
		}
		st := streamOf(cd)
		st.Name = c.name
		if c.lay == laySparse {
			st.Storage = mlfeed.Sparse
		}
		seen[c.name]++
		if seen[c.name] < names[c.name] { // hidden: a later column has the same name
			st.Alias = c.name
			st.Name = fmt.Sprintf("%s#%d", c.name, c.index)
			for names[st.Name] > 0 {
				st.Name += "#"
			}
			names[st.Name]++
		}
		st.Metadata = c.metaAnns
		r.schema.Streams = append(r.schema.Streams, st)
	}
	return nil
}

// anySparse reports whether any row of a fixed-size vector column is stored sparsely, reading
// only the per-row counts at the start of each block.
func (r *Reader) anySparse(c *column) (bool, error) {
	le := binary.LittleEndian
	for b := range c.blocks {
		n := r.rowsIn(b)
		p, err := r.blockPrefix(c, b, 8+4*int64(n))
		if err != nil {
			return false, err
		}
		if len(p) < 8 || le.Uint32(p[4:]) == 0 {
			continue // malformed; decoding reports it
		}
		for i := 8; i+4 <= len(p); i += 4 {
			if int32(le.Uint32(p[i:])) >= 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// blockPrefix returns up to n leading bytes of block b of column c, decompressed.
func (r *Reader) blockPrefix(c *column, b int, n int64) ([]byte, error) {
	e := c.blocks[b]
	field := fmt.Sprintf("column %q block %d", c.name, b)
	if c.comp == compNone {
		return r.readAt(e.off, min(n, int64(e.stored)), field)
	}
	fr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(fr)
	if err := fr.(flate.Resetter).Reset(io.NewSectionReader(r.r, e.off, int64(e.stored)), nil); err != nil {
		return nil, r.errf(e.off, field, err)
	}
	p := make([]byte, min(n, int64(e.inflated)))
	k, _ := io.ReadFull(fr, p)
	return p[:k], nil
}

func (r *Reader) makeChunks() {
	rows := r.Header.RowCount
	if len(r.alive) == 0 || r.nblocks == 0 {
		if rows > 0 {
			r.chunks = []mlfeed.ChunkInfo{{Sequences: int(rows), Samples: rows}}
		}
		return
	}
	r.bpc = r.opts.BlocksPerChunk
	if r.bpc <= 0 {
		r.bpc = int((8192 + r.rpb - 1) / r.rpb)
	}
	for b := 0; b < r.nblocks; b += r.bpc {
		n := int64(0)
		for k := b; k < min(b+r.bpc, r.nblocks); k++ {
			n += int64(r.rowsIn(k))
		}
		r.chunks = append(r.chunks, mlfeed.ChunkInfo{Sequences: int(n), Samples: n})
	}
	r.seq = seqStart(r.chunks[0].Sequences)
}

func seqStart(n int) []int64 {
	s := make([]int64, n+1)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}

// Schema returns the streams: one per readable column, in file order.
func (r *Reader) Schema() mlfeed.Schema { return r.schema }

// Chunks returns the chunk table: each chunk holds BlocksPerChunk blocks of every column.
func (r *Reader) Chunks() []mlfeed.ChunkInfo { return r.chunks }

// Warnings returns the warnings found while opening: skipped columns and metadata items.
func (r *Reader) Warnings() []string { return r.warnings }

// ReadChunkReuse reads chunk i as ReadChunk does; it does not reuse prev.
func (r *Reader) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return r.ReadChunk(ctx, i)
}

// SequenceLengths returns chunk i's sequence lengths: each row is a sequence of one sample.
func (r *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("idv: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	return mlfeed.Ones(r.chunks[i].Sequences), nil
}

// ReadChunk decodes chunk i on the calling goroutine, the blocks of its columns as tasks of
// the scheduler ctx carries (internal/sched: they run on its idle threads; without one, in
// turn). Cancelling ctx stops it between blocks.
func (r *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(r.chunks) {
		return nil, fmt.Errorf("idv: chunk %d out of range [0, %d)", i, len(r.chunks))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ch := &mlfeed.Chunk{Sequences: r.chunks[i].Sequences, Streams: make([]mlfeed.StreamData, len(r.alive))}
	if len(r.alive) == 0 {
		return ch, ctx.Err()
	}
	b0 := i * r.bpc
	b1 := min(b0+r.bpc, r.nblocks)
	nb := b1 - b0
	frags := make([]frag, len(r.alive)*nb)
	err := sched.Parallel(ctx, len(frags), func(ctx context.Context, k int) error {
		f, err := r.decode(r.alive[k/nb], b0+k%nb)
		frags[k] = f
		return err
	})
	if err != nil {
		return nil, err
	}
	seq := r.seq
	if ch.Sequences != len(seq)-1 {
		seq = seqStart(ch.Sequences)
	}
	for c := range r.alive {
		ch.Streams[c] = join(&r.schema.Streams[c], frags[c*nb:(c+1)*nb], seq)
	}
	return ch, nil
}

// join concatenates the decoded blocks of one column.
func join(st *mlfeed.Stream, fs []frag, seq []int64) mlfeed.StreamData {
	if len(fs) == 1 {
		f := fs[0]
		return mlfeed.StreamData{SeqStart: seq, SampleStart: f.starts, Indices: f.indices, Values: f.values}
	}
	total := 0
	for _, f := range fs {
		total += f.values.Len()
	}
	d := mlfeed.StreamData{SeqStart: seq, Values: mlfeed.NewBuffer(st.Type, total)}
	if fs[0].starts != nil {
		d.SampleStart = make([]int64, 1, len(seq))
	}
	if fs[0].indices != nil {
		d.Indices = make([]int32, 0, total)
	}
	at := 0
	for _, f := range fs {
		n := f.values.Len()
		copyItems(d.Values, at, f.values, 0, n)
		for _, s := range f.starts[min(1, len(f.starts)):] {
			d.SampleStart = append(d.SampleStart, int64(at)+s)
		}
		d.Indices = append(d.Indices, f.indices...)
		at += n
	}
	return d
}

// Close closes the file if the Reader was made by Open.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Details returns what `mlfeed info` shows beyond the schema: versions, rows per block, and
// under "column N NAME" for each column of the file its codec (as named in the file, legacy
// names included), compression, stored and inflated sizes, table offsets and metadata items;
// skipped columns with the reason.
func (r *Reader) Details() map[string]any {
	h := r.Header
	d := map[string]any{
		"version":            VersionString(h.Version),
		"compatible_version": VersionString(h.CompatibleVersion),
		"rows":               h.RowCount,
		"rows_per_block":     r.rpb,
		"blocks_per_column":  r.nblocks,
		"toc_offset":         h.TOCOffset,
		"tail_offset":        h.TailOffset,
	}
	read := map[*column]bool{}
	for _, c := range r.alive {
		read[c] = true
	}
	width := len(fmt.Sprint(len(r.cols) - 1))
	for _, c := range r.cols {
		m := map[string]any{"compression": compressionName(c.comp), "lookup_offset": c.lookupOff, "metadata_offset": c.metaOff}
		if c.codecDesc != "" {
			m["codec"] = c.codecDesc
		}
		switch {
		case c.dead != "":
			m["skipped"] = c.dead
		case !read[c]:
			m["skipped"] = "not among the columns to read"
		default:
			var stored, inflated int64
			for _, e := range c.blocks {
				stored += int64(e.stored)
				inflated += int64(e.inflated)
			}
			m["stored_bytes"], m["inflated_bytes"] = stored, inflated
		}
		var metas []string
		for _, me := range c.meta {
			what := me.codec
			if me.dead != "" {
				what = "skipped: " + me.dead
			}
			metas = append(metas, fmt.Sprintf("%s: %s, %s, %d bytes at %d", me.kind, what, compressionName(me.comp), me.size, me.off))
		}
		if metas != nil {
			m["metadata"] = metas
		}
		d[fmt.Sprintf("column %0*d %s", width, c.index, c.name)] = m
	}
	return d
}
