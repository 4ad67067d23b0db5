package minibatch

import (
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Join combines sources whose sequences carry ids (CTF files in id mode) by id, as CNTK's
// composite reader combines several deserializers: the first source drives the order and the
// chunking, and every one of its sequences takes the streams of the other sources from the
// sequence with the same id. An id of the first source that another source lacks, or an id
// that appears twice in another source, is an error. Sequences of the other sources whose ids
// the first source lacks are ignored.
//
// Join reads every chunk of every source once, to index the ids and learn the sequence
// lengths; it keeps the index (the ids and a position per sequence), not the data. Stream names
// must be unique across the sources. Closing the joined source closes every source.
func Join(sources ...mlfeed.Source) (mlfeed.Source, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("%w: Join of no sources", ErrConfig)
	}
	j := &joined{srcs: sources}
	names := map[string]bool{}
	defining := -1
	for k, s := range sources {
		sc := s.Schema()
		if !sc.HasIDs {
			return nil, fmt.Errorf("%w: source %d has no sequence ids to join on", ErrConfig, k)
		}
		for _, st := range sc.Streams {
			if names[st.Name] {
				return nil, fmt.Errorf("%w: stream %q appears in two joined sources", ErrConfig, st.Name)
			}
			names[st.Name] = true
			if st.DefinesMBSize {
				defining = len(j.schema.Streams)
			}
			j.schema.Streams = append(j.schema.Streams, st)
			j.owner = append(j.owner, k)
		}
	}
	j.schema.HasIDs = true
	ctx := context.Background()
	// Index the other sources: id -> (chunk, index), and each sequence's length.
	j.index = make([]map[string]seqRef, len(sources))
	lens := make([]map[string]int64, len(sources))
	for k := 1; k < len(sources); k++ {
		j.index[k] = map[string]seqRef{}
		lens[k] = map[string]int64{}
		for c := range sources[k].Chunks() {
			ch, err := sources[k].ReadChunk(ctx, c)
			if err != nil {
				return nil, err
			}
			for q := 0; q < ch.Sequences; q++ {
				id := ch.IDs[q]
				if _, dup := j.index[k][id]; dup {
					return nil, fmt.Errorf("%w: joined source %d has sequence id %s twice", mlfeed.ErrFormat, k, id)
				}
				j.index[k][id] = seqRef{int32(c), int32(q)}
				lens[k][id] = streamLength(ch, q, j.localDefining(k, defining))
			}
		}
	}
	// The first source's chunks, with the combined lengths.
	for c, info := range sources[0].Chunks() {
		ch, err := sources[0].ReadChunk(ctx, c)
		if err != nil {
			return nil, err
		}
		out := mlfeed.ChunkInfo{Sequences: info.Sequences}
		seqLens := make([]int64, ch.Sequences)
		for q := 0; q < ch.Sequences; q++ {
			id := ch.IDs[q]
			for k := 1; k < len(sources); k++ {
				if _, ok := lens[k][id]; !ok {
					return nil, fmt.Errorf("%w: could not reconcile the joined sources: sequence id %s of the first is missing from source %d", mlfeed.ErrFormat, id, k)
				}
			}
			var n int64
			switch {
			case defining >= 0 && j.owner[defining] == 0:
				n = streamLength(ch, q, j.localDefining(0, defining))
			case defining >= 0:
				n = lens[j.owner[defining]][id]
			default:
				n = ch.SequenceLength(q)
				for k := 1; k < len(sources); k++ {
					n = max(n, lens[k][id])
				}
			}
			out.Samples += n
			seqLens[q] = n
		}
		j.infos = append(j.infos, out)
		j.lengths = append(j.lengths, seqLens)
	}
	return j, nil
}

type joined struct {
	srcs   []mlfeed.Source
	schema mlfeed.Schema
	owner  []int // per joined stream: its source
	infos  []mlfeed.ChunkInfo
	index  []map[string]seqRef
	// lengths holds every sequence's length, per chunk: the defining stream's sample count,
	// or the longest stream's.
	lengths [][]int64
}

// localDefining returns the index within source k's streams of the joined defining stream, or
// -1 when it is not one of source k's (or there is none).
func (j *joined) localDefining(k, defining int) int {
	if defining < 0 || j.owner[defining] != k {
		return -1
	}
	first := 0
	for first < len(j.owner) && j.owner[first] != k {
		first++
	}
	return defining - first
}

// streamLength is sequence q's length: stream i's sample count, or the longest stream's.
func streamLength(ch *mlfeed.Chunk, q, i int) int64 {
	if i >= 0 {
		return ch.Streams[i].SeqStart[q+1] - ch.Streams[i].SeqStart[q]
	}
	return ch.SequenceLength(q)
}

func (j *joined) Schema() mlfeed.Schema      { return j.schema }
func (j *joined) Chunks() []mlfeed.ChunkInfo { return j.infos }

func (j *joined) Close() error {
	var first error
	for _, s := range j.srcs {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SequenceLengths returns the lengths of chunk i's sequences, learnt when the sources were
// joined.
func (j *joined) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(j.infos) {
		return nil, fmt.Errorf("%w: chunk %d of %d", mlfeed.ErrRange, i, len(j.infos))
	}
	return j.lengths[i], nil
}

// ReadChunk reads chunk i of the first source and gathers the other sources' streams for its
// sequences by id.
func (j *joined) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return j.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse reads chunk i as ReadChunk does, passing the first source's streams of prev
// on to it and gathering the other sources' streams into prev's buffers.
func (j *joined) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(j.infos) {
		return nil, fmt.Errorf("%w: chunk %d of %d", mlfeed.ErrRange, i, len(j.infos))
	}
	if prev != nil && len(prev.Streams) != len(j.schema.Streams) {
		prev = nil
	}
	n0 := len(j.srcs[0].Schema().Streams)
	var prevBase *mlfeed.Chunk
	if prev != nil {
		prevBase = &mlfeed.Chunk{Sequences: prev.Sequences, IDs: prev.IDs, Streams: prev.Streams[:n0:n0]}
	}
	base, err := j.srcs[0].ReadChunkReuse(ctx, i, prevBase)
	if err != nil {
		return nil, err
	}
	out := &mlfeed.Chunk{Sequences: base.Sequences, IDs: base.IDs}
	out.Streams = append(out.Streams, base.Streams...)
	off := n0
	for k := 1; k < len(j.srcs); k++ {
		sc := j.srcs[k].Schema()
		chunks := map[int32]*mlfeed.Chunk{}
		data := make([]mlfeed.StreamData, len(sc.Streams))
		for s := range data {
			st := &sc.Streams[s]
			var old mlfeed.StreamData
			if prev != nil {
				old = prev.Streams[off+s]
			}
			data[s].SeqStart = append(old.SeqStart[:0], 0)
			data[s].Values = mlfeed.Buffer{Type: st.Type, Bytes: old.Values.Bytes[:0], Strings: old.Values.Strings[:0]}
			if !st.Type.IsVarLen() && data[s].Values.Bytes == nil {
				data[s].Values.Bytes = []byte{}
			}
			if st.Storage == mlfeed.Sparse || st.Dim == 0 {
				data[s].SampleStart = append(old.SampleStart[:0], 0)
			}
			if st.Storage == mlfeed.Sparse {
				data[s].Indices = old.Indices[:0]
				if data[s].Indices == nil {
					data[s].Indices = []int32{}
				}
			}
		}
		off += len(sc.Streams)
		for q := 0; q < base.Sequences; q++ {
			ref, ok := j.index[k][base.IDs[q]]
			if !ok {
				return nil, fmt.Errorf("%w: sequence id %s is missing from joined source %d", mlfeed.ErrFormat, base.IDs[q], k)
			}
			ch := chunks[ref.chunk]
			if ch == nil {
				if ch, err = j.srcs[k].ReadChunk(ctx, int(ref.chunk)); err != nil {
					return nil, err
				}
				chunks[ref.chunk] = ch
			}
			for s := range data {
				appendSequence(&data[s], &sc.Streams[s], &ch.Streams[s], int(ref.idx))
			}
		}
		out.Streams = append(out.Streams, data...)
	}
	return out, nil
}

// appendSequence appends sequence q of src to d.
func appendSequence(d *mlfeed.StreamData, st *mlfeed.Stream, src *mlfeed.StreamData, q int) {
	s0, s1 := src.SeqStart[q], src.SeqStart[q+1]
	v0, v1 := s0*int64(st.Dim), s1*int64(st.Dim)
	if src.SampleStart != nil {
		v0, v1 = src.SampleStart[s0], src.SampleStart[s1]
	}
	if d.SampleStart != nil {
		base := d.SampleStart[len(d.SampleStart)-1]
		for s := s0 + 1; s <= s1; s++ {
			if src.SampleStart != nil {
				d.SampleStart = append(d.SampleStart, base+src.SampleStart[s]-v0)
			} else {
				d.SampleStart = append(d.SampleStart, base+(s-s0)*int64(st.Dim))
			}
		}
	}
	if src.Indices != nil && d.Indices != nil {
		d.Indices = append(d.Indices, src.Indices[v0:v1]...)
	}
	d.Values.Append(src.Values.Slice(int(v0), int(v1)))
	d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+s1-s0)
}
