package mlfeed

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// Zip combines sources that hold the same number of sequences (IDX images and IDX labels, say)
// into one source whose streams are all of theirs, in order. Stream names must be unique
// across the sources. The chunk boundaries are those of the source with the most chunks (the
// finest); the others are read and sliced to match. A chunk's sample count is exact when every
// other source has one sample per sequence (a table); otherwise it is that source's count.
// Details, when the sources have any, are listed per source under "sources".
//
// Closing the zipped source closes every source.
func Zip(sources ...Source) (Source, error) {
	if len(sources) == 0 {
		return nil, errors.New("mlfeed: Zip of no sources")
	}
	if len(sources) == 1 {
		return sources[0], nil
	}
	z := &zipSource{srcs: sources}
	for i, s := range sources {
		if len(s.Chunks()) > len(sources[z.bound].Chunks()) {
			z.bound = i
		}
	}
	z.chunks = sources[z.bound].Chunks()
	n0, _ := Totals(z.chunks)
	for i, s := range sources {
		sc := s.Schema()
		if sc.HasIDs && !z.schema.HasIDs {
			z.schema.HasIDs = true
			z.idSource = i
		}
		z.schema.Streams = append(z.schema.Streams, sc.Streams...)
		n, _ := Totals(s.Chunks())
		if n != n0 {
			return nil, fmt.Errorf("%w: sources to combine hold different numbers of sequences: %d in source %d, %d in source %d", ErrFormat, n0, z.bound+1, n, i+1)
		}
		z.starts = append(z.starts, chunkStarts(s.Chunks()))
	}
	if err := z.schema.Validate(); err != nil {
		return nil, fmt.Errorf("%w: cannot combine sources: %v", ErrFormat, err)
	}
	return z, nil
}

type zipSource struct {
	srcs     []Source
	schema   Schema
	chunks   []ChunkInfo
	starts   [][]int64 // per source: first sequence of each chunk, plus the total
	idSource int
	bound    int // the source whose chunk boundaries are used
}

func chunkStarts(chunks []ChunkInfo) []int64 {
	s := make([]int64, len(chunks)+1)
	for i, c := range chunks {
		s[i+1] = s[i] + int64(c.Sequences)
	}
	return s
}

func (z *zipSource) Schema() Schema      { return z.schema }
func (z *zipSource) Chunks() []ChunkInfo { return z.chunks }

func (z *zipSource) Details() map[string]any {
	var per []any
	found := false
	for _, s := range z.srcs {
		var d map[string]any
		if dt, ok := s.(Detailer); ok {
			d = dt.Details()
			found = true
		}
		per = append(per, d)
	}
	if !found {
		return nil
	}
	return map[string]any{"sources": per}
}

func (z *zipSource) Close() error {
	var errs []error
	for _, s := range z.srcs {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func (z *zipSource) ReadChunk(ctx context.Context, i int) (*Chunk, error) {
	return z.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse reads chunk i from every source, passing each the part of prev that it
// returned earlier, when prev is a chunk of this source.
func (z *zipSource) ReadChunkReuse(ctx context.Context, i int, prev *Chunk) (*Chunk, error) {
	if i < 0 || i >= len(z.chunks) {
		return nil, fmt.Errorf("%w: chunk %d outside [0, %d)", ErrRange, i, len(z.chunks))
	}
	if prev != nil && len(prev.Streams) != len(z.schema.Streams) {
		prev = nil
	}
	from, to := z.starts[z.bound][i], z.starts[z.bound][i+1]
	out := &Chunk{Sequences: int(to - from), Streams: make([]StreamData, 0, len(z.schema.Streams))}
	off := 0
	for k, s := range z.srcs {
		n := len(s.Schema().Streams)
		var part *Chunk
		if prev != nil {
			part = &Chunk{Sequences: prev.Sequences, Streams: prev.Streams[off : off+n : off+n]}
			if k == z.idSource {
				part.IDs = prev.IDs
			}
		}
		off += n
		c, err := readRange(ctx, s, z.starts[k], from, to, part)
		if err != nil {
			return nil, err
		}
		if k == z.idSource && z.schema.HasIDs {
			out.IDs = c.IDs
		}
		out.Streams = append(out.Streams, c.Streams...)
	}
	return out, nil
}

// SequenceLengths returns, for every sequence of chunk i, the largest of the sources' lengths.
func (z *zipSource) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(z.chunks) {
		return nil, fmt.Errorf("%w: chunk %d outside [0, %d)", ErrRange, i, len(z.chunks))
	}
	from, to := z.starts[z.bound][i], z.starts[z.bound][i+1]
	out := make([]int64, to-from)
	for k, s := range z.srcs {
		starts := z.starts[k]
		first := sort.Search(len(starts), func(j int) bool { return starts[j] > from }) - 1
		for j := first; j < len(starts)-1 && starts[j] < to; j++ {
			l, err := s.SequenceLengths(j)
			if err != nil {
				return nil, err
			}
			if int64(len(l)) != starts[j+1]-starts[j] {
				return nil, fmt.Errorf("%w: source %d gives %d sequence lengths for chunk %d of %d sequences", ErrFormat, k+1, len(l), j, starts[j+1]-starts[j])
			}
			for q := max(from, starts[j]); q < min(to, starts[j+1]); q++ {
				out[q-from] = max(out[q-from], l[q-starts[j]])
			}
		}
	}
	return out, nil
}

// readRange reads sequences [from, to) of s, whose chunks start at starts. When the range is
// exactly one chunk of s, prev (a chunk of s's schema, or nil) is passed on for reuse.
func readRange(ctx context.Context, s Source, starts []int64, from, to int64, prev *Chunk) (*Chunk, error) {
	first := sort.Search(len(starts), func(j int) bool { return starts[j] > from }) - 1
	if starts[first] == from && starts[first+1] == to {
		return s.ReadChunkReuse(ctx, first, prev)
	}
	var parts []*Chunk
	for j := first; j < len(starts)-1 && starts[j] < to; j++ {
		c, err := s.ReadChunk(ctx, j)
		if err != nil {
			return nil, err
		}
		a := max(from, starts[j]) - starts[j]
		b := min(to, starts[j+1]) - starts[j]
		if a == 0 && int(b) == c.Sequences {
			parts = append(parts, c)
		} else {
			parts = append(parts, c.Slice(int(a), int(b)))
		}
	}
	return ConcatChunks(parts), nil
}

// ConcatChunks joins chunks of the same schema into one. A single chunk is returned as is.
// The joined chunk's memory is allocated once, to size.
func ConcatChunks(parts []*Chunk) *Chunk {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &Chunk{}
	if len(parts) == 0 {
		return out
	}
	out.Streams = make([]StreamData, len(parts[0].Streams))
	hasIDs := parts[0].IDs != nil
	ids := 0
	for _, p := range parts {
		out.Sequences += p.Sequences
		ids += len(p.IDs)
	}
	if hasIDs {
		out.IDs = make([]string, 0, ids)
		for _, p := range parts {
			out.IDs = append(out.IDs, p.IDs...)
		}
	}
	for i := range out.Streams {
		var seqs, samples, indices, values int
		for _, p := range parts {
			s := &p.Streams[i]
			seqs += len(s.SeqStart) - 1
			samples += max(len(s.SampleStart)-1, 0)
			indices += len(s.Indices)
			values += s.Values.Len()
		}
		d := &out.Streams[i]
		d.SeqStart = append(make([]int64, 0, seqs+1), 0)
		d.Values = NewBuffer(parts[0].Streams[i].Values.Type, values)
		if d.Values.Type.IsVarLen() {
			d.Values.Strings = d.Values.Strings[:0]
		} else {
			d.Values.Bytes = d.Values.Bytes[:0]
		}
		sparse := parts[0].Streams[i].SampleStart != nil
		if sparse {
			d.SampleStart = append(make([]int64, 0, samples+1), 0)
		}
		if indices > 0 {
			d.Indices = make([]int32, 0, indices)
		}
		for _, p := range parts {
			s := &p.Streams[i]
			base := d.SeqStart[len(d.SeqStart)-1]
			for _, v := range s.SeqStart[1:] {
				d.SeqStart = append(d.SeqStart, base+v)
			}
			if sparse {
				vb := d.SampleStart[len(d.SampleStart)-1]
				for _, v := range s.SampleStart[1:] {
					d.SampleStart = append(d.SampleStart, vb+v)
				}
			}
			if s.Indices != nil {
				d.Indices = append(d.Indices, s.Indices...)
			}
			d.Values.Append(s.Values)
		}
	}
	return out
}

// RawSamples passes on where a source describes its samples of stream (RawSampler), for chunk
// i of the combination: the part of the source's chunk that holds chunk i's sequences. ok is
// false when the source does not describe them or chunk i spans several of its chunks.
func (z *zipSource) RawSamples(i, stream int) (b []byte, off, stride, swap int, ok bool) {
	if i < 0 || i >= len(z.chunks) || stream < 0 {
		return nil, 0, 0, 0, false
	}
	from, to := z.starts[z.bound][i], z.starts[z.bound][i+1]
	for k, s := range z.srcs {
		n := len(s.Schema().Streams)
		if stream >= n {
			stream -= n
			continue
		}
		rs, is := s.(RawSampler)
		if !is {
			return nil, 0, 0, 0, false
		}
		starts := z.starts[k]
		j := sort.Search(len(starts), func(j int) bool { return starts[j] > from }) - 1
		if j < 0 || j >= len(starts)-1 || starts[j+1] < to {
			return nil, 0, 0, 0, false
		}
		b, off, stride, swap, ok = rs.RawSamples(j, stream)
		if !ok {
			return nil, 0, 0, 0, false
		}
		return b, off + int(from-starts[j])*stride, stride, swap, true
	}
	return nil, 0, 0, 0, false
}
