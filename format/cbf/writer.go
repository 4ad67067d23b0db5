package cbf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// WriterOptions control writing. The zero value is the documented default for every field.
type WriterOptions struct {
	// ChunkSize is the target size of a chunk in bytes. A chunk holds whole sequences: a
	// sequence that would take the chunk past ChunkSize starts the next one, and a sequence
	// larger than ChunkSize gets a chunk of its own. With Compat "ctf2bin" it is the
	// threshold of ctf2bin.py's estimate instead (its --chunk_size). Zero means
	// DefaultChunkSize.
	ChunkSize int64
	// Compat names a reference implementation whose output to reproduce byte for byte:
	// CompatCTF2Bin ("ctf2bin") or empty for mlfeed's own chunking.
	Compat string
}

// Writer writes a CBF file. It implements mlfeed.Sink. It buffers one chunk (about ChunkSize
// bytes) and the chunk table, and writes the header when closed.
type Writer struct {
	w         *bufio.Writer
	schema    mlfeed.Schema
	header    Header
	chunkSize int64
	compat    bool
	pos       int64 // bytes written so far
	err       error // sticky
	closed    bool

	// The chunk being built: its length table and each stream's encoded sequences.
	lengths []byte
	data    []spool
	nseq    uint32
	nsamp   uint32
	size    int64 // len(lengths) + the data's

	estimate int64 // ctf2bin.py's running estimate, never reset

	// The chunk table, encoded as flush adds to it (rather than all at once by Close, when
	// no other work overlaps it: ctf2bin's chunking makes a chunk of each sequence past its
	// estimate's threshold): chunkEntrySize bytes a chunk.
	table []byte

	keys []uint64 // one sample's sparse values as index<<32 | position, being sorted
}

// NewWriter returns a writer of a CBF file with the given schema to w. Every stream must hold
// float32 or float64 values; dense streams need a dimension. A sparse stream without a
// dimension (Dim 0) is written with the largest index seen plus one. The prefix is written
// at once, the rest by WriteChunk and Close.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	if err := schema.Validate(); err != nil {
		return nil, fmt.Errorf("cbf: %w", err)
	}
	cw := &Writer{w: bufio.NewWriterSize(w, 1<<20), schema: schema, chunkSize: opts.ChunkSize}
	switch opts.Compat {
	case "":
	case CompatCTF2Bin:
		cw.compat = true
	default:
		return nil, fmt.Errorf("%w: unknown compat mode %q (known: %s)", ErrUnsupported, opts.Compat, CompatCTF2Bin)
	}
	if cw.chunkSize <= 0 {
		cw.chunkSize = DefaultChunkSize
	}
	if len(schema.Streams) == 0 {
		return nil, fmt.Errorf("%w: a CBF file needs at least one stream", ErrUnsupported)
	}
	for _, st := range schema.Streams {
		if _, ok := elemCode(st.Type); !ok {
			return nil, format.Needs(fmt.Errorf("%w: stream %q holds %s values; CBF holds float32 and float64", ErrUnsupported, st.Name, st.Type), format.ErrNeedsType)
		}
		switch {
		case st.Storage == mlfeed.Dense && st.Dim == 0:
			return nil, fmt.Errorf("%w: stream %q has samples of varying size; CBF needs a fixed dimension", ErrUnsupported, st.Name)
		case st.Storage == mlfeed.Dense && int64(st.Dim) > math.MaxUint32, st.Storage == mlfeed.Sparse && st.Dim > math.MaxInt32:
			return nil, fmt.Errorf("%w: stream %q has dimension %d, beyond CBF's limit", ErrTooLarge, st.Name, st.Dim)
		case int64(len(st.Name)) > math.MaxUint32:
			return nil, fmt.Errorf("%w: stream name of %d bytes", ErrTooLarge, len(st.Name))
		}
		if err := checkName([]byte(st.Name)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		cw.header.Streams = append(cw.header.Streams, StreamHeader{Name: st.Name, Storage: st.Storage, Type: st.Type, Dim: st.Dim})
	}
	cw.data = make([]spool, len(schema.Streams))
	cw.header.Version = Version
	cw.write(prefix())
	return cw, cw.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.w.Write(b)
	w.pos += int64(len(b))
}

// WriteChunk adds the sequences of c, which must follow the writer's schema.
func (w *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if w.closed {
		return errors.New("cbf: WriteChunk after Close")
	}
	if w.err != nil {
		return w.err
	}
	if err := c.Validate(&w.schema); err != nil {
		return fmt.Errorf("cbf: chunk does not match the schema: %w", err)
	}
	for q := 0; q < c.Sequences; q++ {
		if w.err = w.encode(c, q); w.err != nil {
			return w.err
		}
	}
	return w.err
}

// encode appends sequence q of c to the current chunk, first closing the chunk when the
// sequence does not belong in it.
func (w *Writer) encode(c *mlfeed.Chunk, q int) error {
	var length int
	// est is ctf2bin.py's estimate of the sequence: its values, sparse indices and
	// per-sample counts (the encoded size without the length and per-stream counts).
	var est int64
	enc := int64(4)
	for k := range w.schema.Streams {
		st, d := &w.schema.Streams[k], &c.Streams[k]
		s0, s1 := d.SeqStart[q], d.SeqStart[q+1]
		n := s1 - s0
		sz := int64(st.Type.Size())
		enc += 4
		if st.Storage == mlfeed.Dense {
			est += n * int64(st.Dim) * sz
		} else {
			nnz := d.SampleStart[s1] - d.SampleStart[s0]
			if w.compat {
				n = nonEmpty(d.SampleStart[s0 : s1+1])
			}
			est += nnz*sz + 4*nnz + 4*n
			enc += 4
			if nnz > math.MaxInt32 {
				return fmt.Errorf("%w: a sequence of stream %q has %d values; CBF holds at most %d", ErrTooLarge, st.Name, nnz, math.MaxInt32)
			}
		}
		if n > math.MaxUint32 {
			return fmt.Errorf("%w: a sequence of stream %q has %d samples; CBF holds at most %d", ErrTooLarge, st.Name, n, uint32(math.MaxUint32))
		}
		length = max(length, int(n))
	}
	enc += est
	full := uint64(w.nsamp)+uint64(length) > math.MaxUint32 || w.nseq == math.MaxUint32
	if w.compat {
		full = full || w.estimate >= w.chunkSize
	} else {
		full = full || w.size+enc > w.chunkSize
	}
	if w.nseq > 0 && full {
		w.flush()
	}
	w.estimate += est
	w.lengths = le.AppendUint32(w.lengths, uint32(length))
	for k := range w.schema.Streams {
		st, d := &w.schema.Streams[k], &c.Streams[k]
		s0, s1 := d.SeqStart[q], d.SeqStart[q+1]
		if st.Storage == mlfeed.Dense {
			sz := st.Type.Size()
			vals := d.Values.Bytes[int(s0)*st.Dim*sz : int(s1)*st.Dim*sz]
			b := le.AppendUint32(w.data[k].room(4+len(vals)), uint32(s1-s0))
			w.data[k].set(append(b, vals...))
			continue
		}
		nnz := int(d.SampleStart[s1] - d.SampleStart[s0])
		w.data[k].set(w.sparse(w.data[k].room(8+nnz*(st.Type.Size()+4)+4*int(s1-s0)), k, st, d, s0, s1))
	}
	w.nseq++
	w.nsamp += uint32(length)
	w.size += enc
	return nil
}

// nonEmpty counts the samples with values among those whose value offsets start holds.
func nonEmpty(start []int64) int64 {
	var n int64
	for s := 1; s < len(start); s++ {
		if start[s] > start[s-1] {
			n++
		}
	}
	return n
}

// sparse appends samples [s0, s1) of sparse stream k as CBF encodes them in a sequence: the
// sample count, the value count, the values and the indices (sorted within each sample, a
// stable sort), and the values per sample. In ctf2bin mode empty samples are left out, as
// ctf2bin.py drops an input without values.
func (w *Writer) sparse(b []byte, k int, st *mlfeed.Stream, d *mlfeed.StreamData, s0, s1 int64) []byte {
	sz := st.Type.Size()
	a0, a1 := int(d.SampleStart[s0]), int(d.SampleStart[s1])
	nnz := a1 - a0
	n := s1 - s0
	if w.compat {
		n = nonEmpty(d.SampleStart[s0 : s1+1])
	}
	off := len(b)
	b = slices.Grow(b, 8+nnz*(sz+4)+4*int(n))
	b = b[:off+8+nnz*(sz+4)+4*int(n)]
	le.PutUint32(b[off:], uint32(n))
	le.PutUint32(b[off+4:], uint32(nnz))
	vals := b[off+8 : off+8+nnz*sz]
	idx := b[off+8+nnz*sz : off+8+nnz*(sz+4)]
	sizes := b[off+8+nnz*(sz+4):]
	src := d.Values.Bytes
	ns := 0
	for s := s0; s < s1; s++ {
		lo, hi := int(d.SampleStart[s]), int(d.SampleStart[s+1])
		if hi > lo || !w.compat {
			le.PutUint32(sizes[4*ns:], uint32(hi-lo))
			ns++
		}
		j := lo - a0
		ind := d.Indices[lo:hi]
		if slices.IsSorted(ind) {
			copy(vals[j*sz:], src[lo*sz:hi*sz])
			for t, ix := range ind {
				le.PutUint32(idx[4*(j+t):], uint32(ix))
			}
			continue
		}
		// keys orders the sample's values by index and then by position, so that sorting
		// them is a stable sort by index (indices are never negative).
		keys := w.keys[:0]
		for t, ix := range ind {
			keys = append(keys, uint64(ix)<<32|uint64(t))
		}
		sortKeys(keys)
		for t, key := range keys {
			from := lo + int(uint32(key))
			if sz == 4 {
				le.PutUint32(vals[4*(j+t):], le.Uint32(src[4*from:]))
			} else {
				le.PutUint64(vals[8*(j+t):], le.Uint64(src[8*from:]))
			}
			le.PutUint32(idx[4*(j+t):], uint32(key>>32))
		}
		w.keys = keys
	}
	if st.Dim == 0 {
		for _, i := range d.Indices[a0:a1] {
			w.header.Streams[k].Dim = max(w.header.Streams[k].Dim, int(i)+1)
		}
	}
	return b
}

// flush writes the current chunk and starts the next.
func (w *Writer) flush() {
	w.table = appendChunkEntry(w.table, ChunkEntry{Offset: w.pos, Sequences: w.nseq, Samples: w.nsamp})
	w.write(w.lengths)
	for k := range w.data {
		sp := &w.data[k]
		for _, b := range sp.blocks {
			w.write(b)
		}
		sp.reset()
	}
	w.lengths = w.lengths[:0]
	w.nseq, w.nsamp, w.size = 0, 0, 0
}

// Close writes the last chunk, the header and the trailer, and flushes. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	// ctf2bin.py writes its last chunk even when it is empty.
	if w.nseq > 0 || w.compat && len(w.table) == 0 {
		w.flush()
	}
	for k := range w.header.Streams {
		if w.header.Streams[k].Dim == 0 {
			w.header.Streams[k].Dim = 1
		}
	}
	off := w.pos
	w.write(appendHeaderStart(nil, &w.header, len(w.table)/chunkEntrySize))
	w.write(w.table)
	w.write(appendTrailer(nil, off))
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// sortKeys sorts keys in increasing order: with a sorting network for up to eight (the
// common case: no branch on the keys, whose order is random), by insertion for up to 32, else
// with slices.Sort.
func sortKeys(keys []uint64) {
	if len(keys) <= 8 {
		var k [8]uint64
		for i := range k {
			k[i] = ^uint64(0) // after every key
		}
		copy(k[:], keys)
		sort8(&k)
		copy(keys, k[:])
		return
	}
	if len(keys) > 32 {
		slices.Sort(keys)
		return
	}
	for i := 1; i < len(keys); i++ {
		x := keys[i]
		j := i
		for ; j > 0 && keys[j-1] > x; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = x
	}
}

// sort8 sorts k with the optimal 19-comparator network for eight values.
func sort8(k *[8]uint64) {
	cx := func(i, j int) { k[i], k[j] = min(k[i], k[j]), max(k[i], k[j]) }
	cx(0, 2)
	cx(1, 3)
	cx(4, 6)
	cx(5, 7)
	cx(0, 4)
	cx(1, 5)
	cx(2, 6)
	cx(3, 7)
	cx(0, 1)
	cx(2, 3)
	cx(4, 5)
	cx(6, 7)
	cx(2, 4)
	cx(3, 5)
	cx(1, 4)
	cx(3, 6)
	cx(1, 2)
	cx(3, 4)
	cx(5, 6)
}

// spool holds one stream's encoded sequences of the chunk being built, in blocks: it grows
// without copying what it holds, and keeps its blocks for the next chunk.
type spool struct {
	blocks [][]byte // the last one is being filled
	free   [][]byte // emptied blocks
	held   int      // bytes in blocks
}

// Blocks grow with the data a spool holds, from minBlock to maxBlock bytes (or the size of
// one sequence, if larger).
const (
	minBlock = 64 << 10
	maxBlock = 4 << 20
)

// room returns the block being filled, with at least n bytes free after its end: the caller
// appends to it and hands it to set.
func (s *spool) room(n int) []byte {
	if k := len(s.blocks); k > 0 && cap(s.blocks[k-1])-len(s.blocks[k-1]) >= n {
		return s.blocks[k-1]
	}
	size := max(n, min(max(s.held, minBlock), maxBlock))
	var b []byte
	for len(s.free) > 0 && b == nil {
		f := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		if cap(f) >= size {
			b = f
		}
	}
	if b == nil {
		b = make([]byte, 0, size)
	}
	s.blocks = append(s.blocks, b)
	return b
}

// set records b, the block room returned with bytes appended, as the block being filled.
func (s *spool) set(b []byte) {
	k := len(s.blocks) - 1
	s.held += len(b) - len(s.blocks[k])
	s.blocks[k] = b
}

// reset empties the spool, keeping its blocks for reuse.
func (s *spool) reset() {
	for _, b := range s.blocks {
		s.free = append(s.free, b[:0])
	}
	clear(s.blocks)
	s.blocks = s.blocks[:0]
	s.held = 0
}
