package mlfeed

import (
	"context"
	"fmt"
)

// StreamData holds one stream's values for the sequences of a chunk, in columnar form.
//
// Sample s of the chunk (counting across sequences) holds:
//   - dense, fixed Dim: Values[s*Dim : (s+1)*Dim];
//   - dense, variable (Dim == 0): Values[SampleStart[s] : SampleStart[s+1]];
//   - sparse: Indices and Values [SampleStart[s] : SampleStart[s+1]] (CSC-like, as CBF stores
//     it), indices below Dim when Dim > 0.
//
// Sequence q holds samples [SeqStart[q], SeqStart[q+1]).
type StreamData struct {
	SeqStart    []int64 // len Sequences+1: first sample of each sequence
	SampleStart []int64 // sparse or variable-size dense only, len samples+1: first value of each sample
	Indices     []int32 // sparse only, parallel to Values
	Values      Buffer  // element-typed values
}

// Samples returns the number of samples the stream holds in the chunk.
func (d *StreamData) Samples() int64 {
	if len(d.SeqStart) == 0 {
		return 0
	}
	return d.SeqStart[len(d.SeqStart)-1]
}

// SampleRange returns the range [from, to) of Values (and Indices) that sample s occupies.
func (d *StreamData) SampleRange(st *Stream, s int64) (from, to int) {
	if d.SampleStart != nil {
		return int(d.SampleStart[s]), int(d.SampleStart[s+1])
	}
	return int(s) * st.Dim, int(s+1) * st.Dim
}

// ReuseStream returns an empty dense StreamData of element type t for a decoder to append
// sequences to, taking over old's memory: old is the same stream of a chunk the caller no
// longer uses (ReadChunkReuse's prev), or the zero StreamData. SeqStart is [0]; Values has
// type t and no values, with Bytes or Strings empty but not nil; SampleStart is [0] when
// ragged (a stream whose samples vary in length, Dim 0), else nil.
func ReuseStream(old StreamData, t ElemType, ragged bool) StreamData {
	d := StreamData{SeqStart: append(old.SeqStart[:0], 0)}
	d.Values.Type = t
	if t.IsVarLen() {
		if d.Values.Strings = old.Values.Strings[:0]; d.Values.Strings == nil {
			d.Values.Strings = []string{}
		}
	} else if d.Values.Bytes = old.Values.Bytes[:0]; d.Values.Bytes == nil {
		d.Values.Bytes = []byte{}
	}
	if ragged {
		d.SampleStart = append(old.SampleStart[:0], 0)
	}
	return d
}

// Chunk holds the data of consecutive sequences for every stream of a schema.
type Chunk struct {
	// Sequences is the number of sequences in the chunk.
	Sequences int
	// IDs holds the sequences' ids when the schema has ids (Schema.HasIDs), else nil.
	IDs []string
	// Streams holds the data of each stream, parallel to Schema.Streams.
	Streams []StreamData
}

// SequenceLength returns the length of sequence q: the largest number of samples any stream
// has in it (CNTK's definition of a sequence's sample count).
func (c *Chunk) SequenceLength(q int) int64 {
	var n int64
	for i := range c.Streams {
		if l := c.Streams[i].SeqStart[q+1] - c.Streams[i].SeqStart[q]; l > n {
			n = l
		}
	}
	return n
}

// Slice returns sequences [from, to) of the chunk as a new chunk. Values are shared, offsets
// are rebased and copied.
func (c *Chunk) Slice(from, to int) *Chunk {
	out := &Chunk{Sequences: to - from, Streams: make([]StreamData, len(c.Streams))}
	if c.IDs != nil {
		out.IDs = c.IDs[from:to]
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		s0, s1 := d.SeqStart[from], d.SeqStart[to]
		o := StreamData{SeqStart: rebase(d.SeqStart[from:to+1], s0)}
		v0, v1 := s0, s1
		if d.SampleStart != nil {
			v0, v1 = d.SampleStart[s0], d.SampleStart[s1]
			o.SampleStart = rebase(d.SampleStart[s0:s1+1], v0)
		} else if n := d.Samples(); n > 0 {
			per := int64(d.Values.Len()) / n
			v0, v1 = s0*per, s1*per
		}
		o.Values = d.Values.Slice(int(v0), int(v1))
		if d.Indices != nil {
			o.Indices = d.Indices[v0:v1]
		}
		out.Streams[i] = o
	}
	return out
}

func rebase(offs []int64, base int64) []int64 {
	out := make([]int64, len(offs))
	for i, v := range offs {
		out[i] = v - base
	}
	return out
}

// Validate checks that the chunk is consistent with the schema: one StreamData per stream,
// offsets of the right length and monotone, value counts matching Dim, element types matching,
// sparse indices within [0, Dim). Writers call it on chunks they did not build themselves.
func (c *Chunk) Validate(s *Schema) error {
	if len(c.Streams) != len(s.Streams) {
		return fmt.Errorf("mlfeed: chunk has %d streams, schema %d", len(c.Streams), len(s.Streams))
	}
	if c.IDs != nil && len(c.IDs) != c.Sequences {
		return fmt.Errorf("mlfeed: chunk has %d ids for %d sequences", len(c.IDs), c.Sequences)
	}
	for i := range c.Streams {
		if err := c.Streams[i].validate(&s.Streams[i], c.Sequences); err != nil {
			return fmt.Errorf("mlfeed: stream %q: %w", s.Streams[i].Name, err)
		}
	}
	return nil
}

func (d *StreamData) validate(st *Stream, nseq int) error {
	if len(d.SeqStart) != nseq+1 || d.SeqStart[0] != 0 {
		return fmt.Errorf("SeqStart has %d entries for %d sequences", len(d.SeqStart), nseq)
	}
	if !monotone(d.SeqStart) {
		return fmt.Errorf("SeqStart decreases")
	}
	if d.Values.Type != st.Type {
		return fmt.Errorf("values are %s, stream is %s", d.Values.Type, st.Type)
	}
	n := d.Samples()
	nv := int64(d.Values.Len())
	if st.Storage == Dense && (st.Dim > 0 || st.Shape != nil) {
		if d.SampleStart != nil {
			return fmt.Errorf("fixed-size dense stream has SampleStart")
		}
		if nv != n*int64(st.Dim) {
			return fmt.Errorf("%d values for %d samples of dim %d", nv, n, st.Dim)
		}
		return nil
	}
	if int64(len(d.SampleStart)) != n+1 || d.SampleStart[0] != 0 || !monotone(d.SampleStart) {
		return fmt.Errorf("SampleStart has %d entries for %d samples or decreases", len(d.SampleStart), n)
	}
	if d.SampleStart[n] != nv {
		return fmt.Errorf("SampleStart ends at %d, %d values", d.SampleStart[n], nv)
	}
	if st.Storage == Sparse {
		if int64(len(d.Indices)) != nv {
			return fmt.Errorf("%d indices for %d values", len(d.Indices), nv)
		}
		for k, ix := range d.Indices {
			if ix < 0 || st.Dim > 0 && int(ix) >= st.Dim {
				return fmt.Errorf("index %d at value %d is outside [0, %d)", ix, k, st.Dim)
			}
		}
	}
	return nil
}

func monotone(v []int64) bool {
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return false
		}
	}
	return true
}

// ChunkInfo describes a chunk without its data.
type ChunkInfo struct {
	// Sequences is the number of sequences in the chunk.
	Sequences int
	// Samples is the sum over the chunk's sequences of their lengths (Chunk.SequenceLength),
	// or, when a stream defines the minibatch size, of that stream's sample counts.
	Samples int64
}

// Source is a data set that can be read chunk by chunk: a format reader, or several combined
// (see Zip). CNTK calls this a deserializer.
//
// A Source decodes synchronously on the goroutine that calls it and starts no goroutine of its
// own; concurrency belongs to the caller (package internal/sched). A decoder that can split one
// chunk into parts runs them with sched.Parallel on the ctx it was given. Wrappers (Zip,
// Select, renaming) implement every method by passing it through, so that what the source
// beneath can do is never lost.
type Source interface {
	// Schema describes the streams.
	Schema() Schema
	// Chunks returns the chunk table. It is known without decoding any data.
	Chunks() []ChunkInfo
	// ReadChunk decodes chunk i. The returned chunk may share memory with the source (a
	// memory-mapped file, a cache) and stays valid until Close; callers must not modify it.
	// It is safe to call ReadChunk from several goroutines at once. ReadChunk(ctx, i) is
	// ReadChunkReuse(ctx, i, nil).
	ReadChunk(ctx context.Context, i int) (*Chunk, error)
	// ReadChunkReuse decodes chunk i into the memory of prev when it can, sparing the
	// allocation (and the clearing of fresh memory) that a decode otherwise costs. prev is a
	// chunk that an earlier ReadChunkReuse of the same source returned and that the caller no
	// longer uses, or nil; the source may write into it, or ignore it (when it is too small,
	// or when the source's chunks share memory with a file or a cache: a source that hands
	// out chunks it keeps must never write into them when they come back as prev). The
	// minibatch engine and sched.ReadAhead recycle chunks this way.
	ReadChunkReuse(ctx context.Context, i int, prev *Chunk) (*Chunk, error)
	// SequenceLengths returns the length (Chunk.SequenceLength) of every sequence of chunk i,
	// from an index where the format has one; the minibatch engine uses it to plan without
	// decoding. A table of one sample per sequence returns Ones; a source with no cheaper way
	// returns LengthsOf the decoded chunk.
	SequenceLengths(i int) ([]int64, error)
	// Close releases the source's resources.
	Close() error
}

// Ones returns n lengths of 1: the sequence lengths of a chunk of a table (one sample per
// sequence).
func Ones(n int) []int64 {
	l := make([]int64, n)
	for i := range l {
		l[i] = 1
	}
	return l
}

// LengthsOf returns the length of every sequence of c.
func LengthsOf(c *Chunk) []int64 {
	l := make([]int64, c.Sequences)
	for q := range l {
		l[q] = c.SequenceLength(q)
	}
	return l
}

// Sink receives a data set and writes it in some format.
type Sink interface {
	// WriteChunk writes the sequences of c, which follows the schema the sink was created
	// with. The sink does not keep c after returning.
	WriteChunk(c *Chunk) error
	// Close writes whatever the format puts last (headers, tables) and flushes. It does not
	// close the underlying writer. A file is complete only after Close returns nil.
	Close() error
}

// Detailer is implemented by sources that have format-specific facts to show in `mlfeed
// info` (codecs, compression, chunk offsets). The map's values must marshal to JSON.
type Detailer interface {
	Details() map[string]any
}

// NumChunks returns the number of chunks of src, len(src.Chunks()), without making the chunk
// table of a source that makes it on first use: a CTF file opened for a sequential read
// (format.Options.Sequential) counts its sequences on the first call to Chunks, and has a
// method NumChunks that does not. A caller that reads every chunk once needs only this.
func NumChunks(src Source) int {
	if n, ok := src.(interface{ NumChunks() int }); ok {
		return n.NumChunks()
	}
	return len(src.Chunks())
}

// Totals returns the number of sequences and samples in a chunk table.
func Totals(chunks []ChunkInfo) (sequences, samples int64) {
	for _, c := range chunks {
		sequences += int64(c.Sequences)
		samples += c.Samples
	}
	return sequences, samples
}

// MemSize returns the number of bytes the chunk's buffers hold (values, offsets, indices and
// ids), the figure a memory budget counts. Memory the chunk shares with a mapped file counts
// too: it is resident while the chunk is used.
func (c *Chunk) MemSize() int64 {
	n := int64(len(c.IDs)) * 16
	for _, id := range c.IDs {
		n += int64(len(id))
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		n += int64(cap(d.SeqStart)+cap(d.SampleStart))*8 + int64(cap(d.Indices))*4
		n += int64(cap(d.Values.Bytes)) + int64(cap(d.Values.Strings))*16
		for _, s := range d.Values.Strings {
			n += int64(len(s))
		}
	}
	return n
}
