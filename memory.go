package mlfeed

import (
	"context"
	"fmt"
)

// MemorySource is a Source over chunks held in memory, for tests, examples and generated
// data. ReadChunk returns the chunks themselves.
type MemorySource struct {
	schema Schema
	chunks []*Chunk
	info   []ChunkInfo
}

// NewMemorySource returns a source of the given chunks, which must follow schema. The chunk
// table's sample counts are the sum of each chunk's sequence lengths.
func NewMemorySource(schema Schema, chunks ...*Chunk) (*MemorySource, error) {
	if err := schema.Validate(); err != nil {
		return nil, err
	}
	m := &MemorySource{schema: schema, chunks: chunks}
	for i, c := range chunks {
		if err := c.Validate(&schema); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
		info := ChunkInfo{Sequences: c.Sequences}
		for q := 0; q < c.Sequences; q++ {
			info.Samples += c.SequenceLength(q)
		}
		m.info = append(m.info, info)
	}
	return m, nil
}

// Schema returns the schema.
func (m *MemorySource) Schema() Schema { return m.schema }

// Chunks returns the chunk table.
func (m *MemorySource) Chunks() []ChunkInfo { return m.info }

// ReadChunk returns chunk i.
func (m *MemorySource) ReadChunk(ctx context.Context, i int) (*Chunk, error) {
	if i < 0 || i >= len(m.chunks) {
		return nil, fmt.Errorf("mlfeed: chunk %d outside [0, %d)", i, len(m.chunks))
	}
	return m.chunks[i], ctx.Err()
}

// ReadChunkReuse returns chunk i; the source holds its chunks, so prev is not needed.
func (m *MemorySource) ReadChunkReuse(ctx context.Context, i int, _ *Chunk) (*Chunk, error) {
	return m.ReadChunk(ctx, i)
}

// SequenceLengths returns the lengths of chunk i's sequences.
func (m *MemorySource) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(m.chunks) {
		return nil, fmt.Errorf("mlfeed: chunk %d outside [0, %d)", i, len(m.chunks))
	}
	return LengthsOf(m.chunks[i]), nil
}

// Close does nothing.
func (m *MemorySource) Close() error { return nil }

// Select returns a source with only the named streams of src, in the order named. Closing it
// closes src.
func Select(src Source, names ...string) (Source, error) {
	sc := src.Schema()
	sel := selectSource{Source: src, schema: Schema{HasIDs: sc.HasIDs}}
	for _, n := range names {
		i := sc.Index(n)
		if i < 0 {
			var have []string
			for _, st := range sc.Streams {
				have = append(have, st.Name)
			}
			return nil, fmt.Errorf("mlfeed: no stream %q (streams: %v)", n, have)
		}
		sel.idx = append(sel.idx, i)
		sel.schema.Streams = append(sel.schema.Streams, sc.Streams[i])
	}
	return sel, nil
}

type selectSource struct {
	Source
	schema Schema
	idx    []int
}

func (s selectSource) Schema() Schema { return s.schema }

// NumChunks passes on the source's count, without making a chunk table it makes on first use.
func (s selectSource) NumChunks() int { return NumChunks(s.Source) }

func (s selectSource) ReadChunk(ctx context.Context, i int) (*Chunk, error) {
	return s.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse passes the selected streams of prev on to the source, in the places they
// came from; the streams left out are decoded afresh.
func (s selectSource) ReadChunkReuse(ctx context.Context, i int, prev *Chunk) (*Chunk, error) {
	var full *Chunk
	if prev != nil && len(prev.Streams) == len(s.idx) {
		full = &Chunk{Sequences: prev.Sequences, IDs: prev.IDs, Streams: make([]StreamData, len(s.Source.Schema().Streams))}
		for k, j := range s.idx {
			full.Streams[j] = prev.Streams[k]
		}
	}
	c, err := s.Source.ReadChunkReuse(ctx, i, full)
	if err != nil {
		return nil, err
	}
	out := &Chunk{Sequences: c.Sequences, IDs: c.IDs, Streams: make([]StreamData, len(s.idx))}
	for k, j := range s.idx {
		out.Streams[k] = c.Streams[j]
	}
	return out, nil
}

// SequenceLengths returns the lengths of chunk i's sequences over the selected streams: the
// source's own when every stream is selected, else those of the decoded chunk.
func (s selectSource) SequenceLengths(i int) ([]int64, error) {
	if len(s.idx) == len(s.Source.Schema().Streams) {
		return s.Source.SequenceLengths(i)
	}
	c, err := s.ReadChunk(context.Background(), i)
	if err != nil {
		return nil, err
	}
	return LengthsOf(c), nil
}

// RawSamples passes on where the source describes its samples of the selected stream
// (RawSampler).
func (s selectSource) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	rs, is := s.Source.(RawSampler)
	if !is || stream < 0 || stream >= len(s.idx) {
		return nil, 0, 0, 0, false
	}
	return rs.RawSamples(i, s.idx[stream])
}
