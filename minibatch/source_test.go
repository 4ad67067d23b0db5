package minibatch

import (
	"context"
	"fmt"
	"sync"

	"github.com/mlfeed/mlfeed"
)

// memSource is an in-memory source for tests. Sequence g (global index) has lens[g] samples;
// stream "x" is dense float32 dim 2 holding (g, sample) per sample; stream "y" is sparse dim
// 100 with one entry per sample: index g%100, value g. Chunk boundaries are given by sizes.
type memSource struct {
	schema mlfeed.Schema
	infos  []mlfeed.ChunkInfo
	chunks []*mlfeed.Chunk
	first  []int // global index of each chunk's first sequence

	mu    sync.Mutex
	reads map[int]int
}

func newMemSource(lens []int, sizes []int) *memSource {
	s := &memSource{reads: map[int]int{}}
	s.schema = mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 2},
		{Name: "y", Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: 100},
	}}
	g := 0
	for _, n := range sizes {
		c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, 2)}
		x, y := &c.Streams[0], &c.Streams[1]
		x.SeqStart, y.SeqStart = []int64{0}, []int64{0}
		y.SampleStart = []int64{0}
		var xv []float32
		var yv []float64
		var samples int64
		s.first = append(s.first, g)
		for q := 0; q < n; q++ {
			for k := 0; k < lens[g]; k++ {
				xv = append(xv, float32(g), float32(k))
				yv = append(yv, float64(g))
				y.Indices = append(y.Indices, int32(g%100))
				y.SampleStart = append(y.SampleStart, int64(len(y.Indices)))
			}
			samples += int64(lens[g])
			x.SeqStart = append(x.SeqStart, x.SeqStart[q]+int64(lens[g]))
			y.SeqStart = append(y.SeqStart, y.SeqStart[q]+int64(lens[g]))
			g++
		}
		x.Values = mlfeed.NewBuffer(mlfeed.Float32, len(xv))
		copy(x.Values.Float32s(), xv)
		y.Values = mlfeed.NewBuffer(mlfeed.Float64, len(yv))
		copy(y.Values.Float64s(), yv)
		if y.Indices == nil {
			y.Indices = []int32{}
		}
		s.chunks = append(s.chunks, c)
		s.infos = append(s.infos, mlfeed.ChunkInfo{Sequences: n, Samples: samples})
	}
	return s
}

// uniform returns a source of n sequences of length ln in chunks of size per.
func uniform(n, ln, per int) *memSource {
	lens := make([]int, n)
	for i := range lens {
		lens[i] = ln
	}
	var sizes []int
	for left := n; left > 0; left -= per {
		sizes = append(sizes, min(per, left))
	}
	return newMemSource(lens, sizes)
}

func (s *memSource) Schema() mlfeed.Schema      { return s.schema }
func (s *memSource) Chunks() []mlfeed.ChunkInfo { return s.infos }
func (s *memSource) Close() error               { return nil }
func (s *memSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i < 0 || i >= len(s.chunks) {
		return nil, fmt.Errorf("no chunk %d", i)
	}
	s.mu.Lock()
	s.reads[i]++
	s.mu.Unlock()
	return s.chunks[i], nil
}

func (s *memSource) readCount() (chunks, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.reads {
		total += n
	}
	return len(s.reads), total
}

// global returns the global index of a batch's sequence q.
func (s *memSource) global(b *Batch, q int) int {
	o := b.Origins[q]
	return s.first[o.Chunk] + o.Index
}

func (s *memSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

// SequenceLengths has no index to read from: it reads the chunk, as a source with no cheaper
// way does.
func (s *memSource) SequenceLengths(i int) ([]int64, error) {
	c, err := s.ReadChunk(context.Background(), i)
	if err != nil {
		return nil, err
	}
	return mlfeed.LengthsOf(c), nil
}
