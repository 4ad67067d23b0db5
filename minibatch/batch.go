package minibatch

import (
	"fmt"
	"math"

	"github.com/mlfeed/mlfeed"
)

// Origin names where a sequence of a batch comes from: the source's chunk and the sequence's
// index in it.
type Origin struct {
	Chunk, Index int
}

// Batch is one minibatch: this worker's sequences of it, in minibatch order, and how each
// stream packs them.
//
// Data holds the sequences unpadded, in the data model's columnar form (a chunk whose
// sequences are the minibatch's). Layouts says how each stream lays them out CNTK's way
// (parallel rows of time steps, first fit); Dense, Sparse and Mask return the padded tensors of
// a stream in that layout.
//
// A Batch and everything it returns are reused by the next call to Reader.Next; Clone makes a
// copy to keep.
type Batch struct {
	// Sweep is the sweep the sequences belong to.
	Sweep int64
	// Position is the global sample position after the minibatch.
	Position int64
	// Sequences is the number of sequences this worker received.
	Sequences int
	// Samples is their sample count, measured as the minibatch size is.
	Samples int64
	// GlobalSamples is the sample count of the whole minibatch, over all workers.
	GlobalSamples int64
	// EndOfSweep reports that the minibatch ends its sweep.
	EndOfSweep bool
	// EndOfEpoch reports that the minibatch reaches the end of an epoch (Config.EpochSize).
	EndOfEpoch bool
	// Data holds the sequences, unpadded, parallel to the schema's streams.
	Data mlfeed.Chunk
	// Origins tells where each sequence comes from.
	Origins []Origin
	// Layouts holds each stream's packing, parallel to the schema's streams.
	Layouts []Layout

	schema *mlfeed.Schema
	frame  bool
	padded []mlfeed.Buffer
	masks  [][]byte
	csc    []csc
	used   []int // first-fit scratch: used time steps per row
}

// Layout is how a stream's sequences are packed: Rows parallel rows of Width time steps, the
// time step t of row r being column t*Rows + r (CNTK's MBLayout). Sequences are placed in
// minibatch order into the first row with room (first fit); the rest of a row is a gap. In
// frame mode Rows is the number of samples and Width is 1.
type Layout struct {
	Rows, Width int
	// Row and Start give each sequence's row and first time step; Row is -1 for a sequence
	// with no sample in this stream.
	Row, Start []int
	// Cols gives, for each column, the sequence it holds, or -1 for a gap.
	Cols []int32
}

type csc struct {
	colStart []int32
	indices  []int32
	values   mlfeed.Buffer
	inOrder  bool // the batch's data is already in column order: indices and values are unused
}

func (b *Batch) init(schema *mlfeed.Schema, frame bool) {
	n := len(schema.Streams)
	b.schema = schema
	b.frame = frame
	b.Data.Streams = make([]mlfeed.StreamData, n)
	b.Layouts = make([]Layout, n)
	b.padded = make([]mlfeed.Buffer, n)
	b.masks = make([][]byte, n)
	b.csc = make([]csc, n)
	for i := range schema.Streams {
		st := &schema.Streams[i]
		d := &b.Data.Streams[i]
		d.Values = mlfeed.NewBuffer(st.Type, 0)
		if st.Storage == mlfeed.Sparse {
			d.Indices = []int32{}
		}
		if st.Storage == mlfeed.Sparse || st.Dim == 0 {
			d.SampleStart = []int64{0}
		}
		d.SeqStart = []int64{0}
	}
	if schema.HasIDs {
		b.Data.IDs = []string{}
	}
}

// SetMemory gives stream i of the batch memory of the caller's to hold its data, so that
// minibatches are packed where the caller wants them, with no copy (the Python package has the
// packers write into buffers it allocated this way). The stream's current data moves into m's
// SeqStart, SampleStart, Indices and Values.Bytes (those of them the stream uses: SampleStart
// for sparse and variable-size streams, Indices for sparse ones; Values.Bytes unless it holds
// strings), whose capacities must hold it (one of no capacity leaves the batch's own); then
// each time the batch is packed again they are refilled from the start. A minibatch that outgrows one of them gets memory of the Reader's
// own for it instead, and the caller's is no longer used: compare unsafe.SliceData of Data's
// slices with the memory given to know where the data is.
//
// Call it on the batch Reader.Batch returned, before the next call to Next: the batch is
// packed again, by another goroutine, once it is released. The caller keeps the memory valid,
// and touches it only while it holds the batch, until the Reader is closed or SetMemory
// replaces it.
func (b *Batch) SetMemory(i int, m mlfeed.StreamData) error {
	if i < 0 || i >= len(b.Data.Streams) {
		return fmt.Errorf("minibatch: SetMemory: no stream %d", i)
	}
	d := &b.Data.Streams[i]
	sampleStart, indices, values := d.SampleStart != nil, d.Indices != nil, d.Values.Strings == nil
	switch {
	case cap(m.SeqStart) < len(d.SeqStart),
		sampleStart && cap(m.SampleStart) < len(d.SampleStart),
		indices && cap(m.Indices) < len(d.Indices),
		values && cap(m.Values.Bytes) < len(d.Values.Bytes):
		return fmt.Errorf("minibatch: SetMemory: stream %q: the memory given is smaller than the minibatch's data", b.schema.Streams[i].Name)
	}
	d.SeqStart = moveTo(m.SeqStart, d.SeqStart)
	if sampleStart {
		d.SampleStart = moveTo(m.SampleStart, d.SampleStart)
	}
	if indices {
		d.Indices = moveTo(m.Indices, d.Indices)
	}
	if values {
		d.Values.Bytes = moveTo(m.Values.Bytes, d.Values.Bytes)
	}
	return nil
}

// moveTo copies data into the memory of dst (whose capacity holds it) and returns it there,
// or returns data as it is when dst has no capacity (then data is empty): a slice the batch
// uses stays non-nil.
func moveTo[T any](dst, data []T) []T {
	if cap(dst) == 0 {
		return data
	}
	return dst[:copy(dst[:cap(dst)], data)]
}

// reset empties the batch's sequences. Sweep, Position, GlobalSamples, EndOfSweep and
// EndOfEpoch are the planner's to set.
func (b *Batch) reset() {
	b.Sequences, b.Samples = 0, 0
	b.Data.Sequences = 0
	if b.Data.IDs != nil {
		b.Data.IDs = b.Data.IDs[:0]
	}
	b.Origins = b.Origins[:0]
	for i := range b.Data.Streams {
		d := &b.Data.Streams[i]
		d.SeqStart = d.SeqStart[:1]
		if d.SampleStart != nil {
			d.SampleStart = d.SampleStart[:1]
		}
		if d.Indices != nil {
			d.Indices = d.Indices[:0]
		}
		d.Values.Bytes = d.Values.Bytes[:0]
		if d.Values.Strings != nil {
			d.Values.Strings = d.Values.Strings[:0]
		}
		b.padded[i].Type = mlfeed.Invalid
		b.masks[i] = b.masks[i][:0]
		b.csc[i].colStart = b.csc[i].colStart[:0]
	}
}

// reserve gives the dense value buffers that have no memory yet (a batch's first job) room
// for the job's sequences at once: appended sample by sample they would grow by doubling,
// copying what they hold each time. refs' sample counts bound every dense stream's samples.
// Buffers that have memory keep it (a caller's, Batch.SetMemory) and grow only if a job
// needs more.
func (b *Batch) reserve(refs []jobRef) {
	var samples int64
	for k := range refs {
		samples += refs[k].n
	}
	for i := range b.Data.Streams {
		st := &b.schema.Streams[i]
		d := &b.Data.Streams[i]
		size := int64(st.Dim) * int64(st.Type.Size())
		if st.Storage != mlfeed.Dense || size <= 0 || cap(d.Values.Bytes) > 0 || samples > math.MaxInt/size {
			continue
		}
		d.Values.Bytes = make([]byte, 0, samples*size)
	}
}

// add appends sequence q of chunk c (chunk index ci) to the batch.
// Streams marked in unit hold one fixed-size dense sample per sequence, sample q at q: their
// sequence is copied without reading the chunk's offsets (a cache miss in a shuffled gather),
// from views (a raw chunk's, RawSampler) when they are not nil.
func (b *Batch) add(c *mlfeed.Chunk, unit []bool, views []rawView, ci, q int, samples int64) error {
	for i := range b.Data.Streams {
		st := &b.schema.Streams[i]
		src := &c.Streams[i]
		d := &b.Data.Streams[i]
		if unit[i] {
			if views != nil {
				d.Values.Bytes = appendRaw(d.Values.Bytes, &views[i], q)
			} else {
				row := st.Dim * src.Values.Type.Size()
				d.Values.Bytes = appendInOrder(d.Values.Bytes, src.Values.Bytes[q*row:(q+1)*row])
			}
			d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+1)
			continue
		}
		s0, s1 := src.SeqStart[q], src.SeqStart[q+1]
		if b.frame && s1-s0 != 1 {
			return fmt.Errorf("%w: frame mode: sequence %d of chunk %d has %d samples in stream %q", ErrFrameMode, q, ci, s1-s0, st.Name)
		}
		appendSequence(d, st, src, q)
	}
	if b.Data.IDs != nil && c.IDs != nil {
		b.Data.IDs = append(b.Data.IDs, c.IDs[q])
	}
	b.Origins = append(b.Origins, Origin{ci, q})
	b.Data.Sequences++
	b.Sequences++
	b.Samples += samples
	return nil
}

// pack computes every stream's layout.
func (b *Batch) pack() {
	for i := range b.Data.Streams {
		seq := b.Data.Streams[i].SeqStart
		l := &b.Layouts[i]
		n := len(seq) - 1
		l.Row = resize(l.Row, n)
		l.Start = resize(l.Start, n)
		width := 0
		for q := 0; q < n; q++ {
			width = max(width, int(seq[q+1]-seq[q]))
		}
		if width == 1 && seq[n]-seq[0] == int64(n) {
			// Every sequence is one sample (a table's rows): a row each, as first fit puts them.
			l.Rows, l.Width = n, 1
			l.Cols = resize(l.Cols, n)
			for q := 0; q < n; q++ {
				l.Row[q], l.Start[q], l.Cols[q] = q, 0, int32(q)
			}
			continue
		}
		if b.frame {
			width = min(width, 1)
		}
		b.used = b.used[:0]
		firstFree := 0 // rows before it are full
		for q := 0; q < n; q++ {
			ln := int(seq[q+1] - seq[q])
			if ln == 0 {
				l.Row[q], l.Start[q] = -1, 0
				continue
			}
			r := firstFree
			for r < len(b.used) && b.used[r]+ln > width {
				r++
			}
			if r == len(b.used) {
				b.used = append(b.used, 0)
			}
			l.Row[q], l.Start[q] = r, b.used[r]
			b.used[r] += ln
			for firstFree < len(b.used) && b.used[firstFree] == width {
				firstFree++
			}
		}
		l.Rows, l.Width = len(b.used), width
		l.Cols = resize(l.Cols, l.Rows*l.Width)
		for k := range l.Cols {
			l.Cols[k] = -1
		}
		for q := 0; q < n; q++ {
			if l.Row[q] < 0 {
				continue
			}
			for t := 0; t < int(seq[q+1]-seq[q]); t++ {
				l.Cols[(l.Start[q]+t)*l.Rows+l.Row[q]] = int32(q)
			}
		}
	}
}

// Lengths returns the number of samples each sequence has in stream i.
func (b *Batch) Lengths(i int, dst []int) []int {
	seq := b.Data.Streams[i].SeqStart
	dst = dst[:0]
	for q := 0; q+1 < len(seq); q++ {
		dst = append(dst, int(seq[q+1]-seq[q]))
	}
	return dst
}

// Sample returns the sample of stream i held by column col of its layout: the sample's index
// in Data.Streams[i], or -1 for a gap.
func (b *Batch) Sample(i, col int) int64 {
	l := &b.Layouts[i]
	q := l.Cols[col]
	if q < 0 {
		return -1
	}
	t := col / l.Rows
	return b.Data.Streams[i].SeqStart[q] + int64(t-l.Start[q])
}

// Mask returns stream i's mask: one byte per column of its layout, 1 for a sample, 0 for a gap.
func (b *Batch) Mask(i int) []byte {
	l := &b.Layouts[i]
	if len(b.masks[i]) == len(l.Cols) && len(l.Cols) > 0 {
		return b.masks[i]
	}
	m := resize(b.masks[i], len(l.Cols))
	for k, q := range l.Cols {
		m[k] = 0
		if q >= 0 {
			m[k] = 1
		}
	}
	b.masks[i] = m
	return m
}

// fixedDense reports whether stream i is dense with a fixed sample size.
func (b *Batch) fixedDense(i int) bool {
	st := &b.schema.Streams[i]
	return st.Storage == mlfeed.Dense && st.Dim > 0
}

// Dense returns dense stream i padded to its layout: Rows*Width samples of Dim values, column
// by column (column t*Rows + r), gaps zero. When no padding is needed (every sequence one
// sample long, or a single sequence) it is Data's buffer itself. It panics for a sparse or
// variable-size stream.
func (b *Batch) Dense(i int) mlfeed.Buffer {
	if !b.fixedDense(i) {
		panic(fmt.Sprintf("minibatch: Dense on %s stream %q", b.schema.Streams[i].Storage, b.schema.Streams[i].Name))
	}
	l := &b.Layouts[i]
	d := &b.Data.Streams[i]
	if l.Rows == b.Data.Sequences && l.Width <= 1 || l.Rows <= 1 {
		return d.Values
	}
	if b.padded[i].Type != mlfeed.Invalid {
		return b.padded[i]
	}
	dim := b.schema.Streams[i].Dim
	sz := d.Values.Type.Size() * dim
	p := b.padded[i]
	p.Type = d.Values.Type
	p.Bytes = resize(p.Bytes, len(l.Cols)*sz)
	for col := range l.Cols {
		dst := p.Bytes[col*sz : (col+1)*sz]
		s := b.Sample(i, col)
		if s < 0 {
			clear(dst)
			continue
		}
		copy(dst, d.Values.Bytes[int(s)*sz:int(s+1)*sz])
	}
	b.padded[i] = p
	return p
}

// Sparse returns sparse stream i in CSC form over the columns of its layout: column k holds
// entries colStart[k] to colStart[k+1] of indices and values; gap columns are empty. Entries
// keep their order within a sample. It panics for a dense stream.
func (b *Batch) Sparse(i int) (colStart, indices []int32, values mlfeed.Buffer) {
	st := &b.schema.Streams[i]
	if st.Storage != mlfeed.Sparse {
		panic(fmt.Sprintf("minibatch: Sparse on dense stream %q", st.Name))
	}
	l := &b.Layouts[i]
	d := &b.Data.Streams[i]
	c := &b.csc[i]
	if len(c.colStart) == len(l.Cols)+1 {
		if c.inOrder {
			return c.colStart, d.Indices, d.Values
		}
		return c.colStart, c.indices, c.values
	}
	c.colStart = append(c.colStart[:0], 0)
	c.inOrder = l.Rows == b.Data.Sequences && l.Width <= 1 || l.Rows <= 1
	if c.inOrder {
		// Columns are the samples in order: the data is already in column order.
		for col := range l.Cols {
			s := b.Sample(i, col)
			end := c.colStart[len(c.colStart)-1]
			if s >= 0 {
				end = int32(d.SampleStart[s+1])
			}
			c.colStart = append(c.colStart, end)
		}
		return c.colStart, d.Indices, d.Values
	}
	c.indices = c.indices[:0]
	if c.values.Type != d.Values.Type {
		c.values = mlfeed.NewBuffer(d.Values.Type, 0)
	}
	c.values.Bytes = c.values.Bytes[:0]
	for col := range l.Cols {
		if s := b.Sample(i, col); s >= 0 {
			v0, v1 := int(d.SampleStart[s]), int(d.SampleStart[s+1])
			c.indices = append(c.indices, d.Indices[v0:v1]...)
			c.values.Append(d.Values.Slice(v0, v1))
		}
		c.colStart = append(c.colStart, int32(len(c.indices)))
	}
	return c.colStart, c.indices, c.values
}

// Clone returns a deep copy of the batch that later calls to Next do not touch.
func (b *Batch) Clone() *Batch {
	c := &Batch{}
	c.init(b.schema, b.frame)
	c.reset()
	c.Sweep, c.Position, c.GlobalSamples = b.Sweep, b.Position, b.GlobalSamples
	c.EndOfSweep, c.EndOfEpoch = b.EndOfSweep, b.EndOfEpoch
	c.Data.Sequences, c.Sequences, c.Samples = b.Data.Sequences, b.Sequences, b.Samples
	if b.Data.IDs != nil {
		c.Data.IDs = append([]string{}, b.Data.IDs...)
	}
	c.Origins = append([]Origin{}, b.Origins...)
	for i := range b.Data.Streams {
		s, d := &b.Data.Streams[i], &c.Data.Streams[i]
		d.SeqStart = append([]int64{}, s.SeqStart...)
		if s.SampleStart != nil {
			d.SampleStart = append([]int64{}, s.SampleStart...)
		}
		if s.Indices != nil {
			d.Indices = append([]int32{}, s.Indices...)
		}
		d.Values = mlfeed.NewBuffer(s.Values.Type, 0)
		d.Values.Append(s.Values)
	}
	c.pack()
	return c
}
