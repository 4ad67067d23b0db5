package mlfeed

import (
	"context"
	"reflect"
	"testing"
)

// lenSource is a source of one dense float32 stream whose sequence q (counting over the
// source) has lens[q] samples of dim 1 holding q. It records the chunks offered to
// ReadChunkReuse and decodes into them when they fit.
type lenSource struct {
	name    string
	lens    []int64
	bounds  []int // first sequence of each chunk, plus the total
	offered []*Chunk
	reused  int
}

func (s *lenSource) Schema() Schema {
	return Schema{Streams: []Stream{{Name: s.name, Type: Float32}}}
}

func (s *lenSource) Chunks() []ChunkInfo {
	var out []ChunkInfo
	for i := 0; i+1 < len(s.bounds); i++ {
		var n int64
		for _, l := range s.lens[s.bounds[i]:s.bounds[i+1]] {
			n += l
		}
		out = append(out, ChunkInfo{Sequences: s.bounds[i+1] - s.bounds[i], Samples: n})
	}
	return out
}

func (s *lenSource) ReadChunk(ctx context.Context, i int) (*Chunk, error) {
	return s.ReadChunkReuse(ctx, i, nil)
}

func (s *lenSource) ReadChunkReuse(_ context.Context, i int, prev *Chunk) (*Chunk, error) {
	s.offered = append(s.offered, prev)
	a, b := s.bounds[i], s.bounds[i+1]
	d := StreamData{SeqStart: []int64{0}, SampleStart: []int64{0}}
	var vals []float32
	for q := a; q < b; q++ {
		for k := int64(0); k < s.lens[q]; k++ {
			vals = append(vals, float32(q))
			d.SampleStart = append(d.SampleStart, int64(len(vals)))
		}
		d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+s.lens[q])
	}
	if prev != nil && len(prev.Streams) == 1 && cap(prev.Streams[0].Values.Bytes) >= 4*len(vals) {
		d.Values = Buffer{Type: Float32, Bytes: prev.Streams[0].Values.Bytes[:4*len(vals)]}
		s.reused++
	} else {
		d.Values = NewBuffer(Float32, len(vals))
	}
	copy(d.Values.Float32s(), vals)
	return &Chunk{Sequences: b - a, Streams: []StreamData{d}}, nil
}

func (s *lenSource) SequenceLengths(i int) ([]int64, error) {
	return append([]int64(nil), s.lens[s.bounds[i]:s.bounds[i+1]]...), nil
}

func (s *lenSource) Close() error { return nil }

// TestZipPassesThrough checks that a zipped source hands each source its part of a recycled
// chunk when their chunks line up, and combines sequence lengths.
func TestZipPassesThrough(t *testing.T) {
	a := &lenSource{name: "a", lens: []int64{1, 2, 1, 1, 1, 1}, bounds: []int{0, 3, 6}}
	b := &lenSource{name: "b", lens: []int64{2, 1, 1, 1, 2, 1}, bounds: []int{0, 3, 6}}
	z, err := Zip(a, b)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := z.ReadChunkReuse(context.Background(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := c0.Streams[0].Values.Bytes, c0.Streams[1].Values.Bytes
	c1, err := z.ReadChunkReuse(context.Background(), 1, c0)
	if err != nil {
		t.Fatal(err)
	}
	if a.reused != 1 || b.reused != 1 || &c1.Streams[0].Values.Bytes[0] != &pa[0] || &c1.Streams[1].Values.Bytes[0] != &pb[0] {
		t.Fatalf("reuses %d and %d: the recycled chunk's memory was not passed on", a.reused, b.reused)
	}
	if got := c1.Streams[1].Values.Float32s(); !reflect.DeepEqual(got, []float32{3, 4, 4, 5}) {
		t.Fatalf("decoded into reused memory: %v", got)
	}
	for i, want := range [][]int64{{2, 2, 1}, {1, 2, 1}} {
		l, err := z.SequenceLengths(i)
		if err != nil || !reflect.DeepEqual(l, want) {
			t.Fatalf("chunk %d: lengths %v, %v; want %v", i, l, err, want)
		}
	}
	// Chunks that do not line up are read and sliced: lengths still combine.
	c := &lenSource{name: "c", lens: []int64{1, 1, 5, 1, 1, 1}, bounds: []int{0, 2, 4, 6}}
	z, err = Zip(a, c)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]int64{{1, 2}, {5, 1}, {1, 1}} {
		l, err := z.SequenceLengths(i)
		if err != nil || !reflect.DeepEqual(l, want) {
			t.Fatalf("misaligned chunk %d: lengths %v, %v; want %v", i, l, err, want)
		}
	}
}

// TestSelectPassesThrough checks that Select passes a recycled chunk's selected streams on in
// their places and the source's lengths when it keeps every stream.
func TestSelectPassesThrough(t *testing.T) {
	a := &lenSource{name: "a", lens: []int64{2, 2, 1, 3}, bounds: []int{0, 2, 4}}
	s, err := Select(a, "a")
	if err != nil {
		t.Fatal(err)
	}
	c0, _ := s.ReadChunkReuse(context.Background(), 0, nil)
	if _, err := s.ReadChunkReuse(context.Background(), 1, c0); err != nil {
		t.Fatal(err)
	}
	if a.reused != 1 || a.offered[1] == nil || len(a.offered[1].Streams) != 1 {
		t.Fatalf("reused %d times; offered %v", a.reused, a.offered)
	}
	if l, err := s.SequenceLengths(1); err != nil || !reflect.DeepEqual(l, []int64{1, 3}) {
		t.Fatalf("lengths %v, %v", l, err)
	}
}

func TestMemSize(t *testing.T) {
	c := &Chunk{Sequences: 2, IDs: []string{"a", "bc"}, Streams: []StreamData{
		{SeqStart: []int64{0, 1, 2}, Values: NewBuffer(Float64, 2)},
		{SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 1, 3}, Indices: []int32{1, 2, 3}, Values: NewBuffer(Float32, 3)},
	}}
	// ids 2*16+3, offsets (3+3+3)*8, indices 3*4, values 16+12
	if got, want := c.MemSize(), int64(35+72+12+28); got != want {
		t.Fatalf("MemSize %d, want %d", got, want)
	}
}

// lazySource is a source that makes its chunk table on first use (as a CTF file opened for a
// sequential read does): Chunks fails the test, NumChunks answers.
type lazySource struct {
	*lenSource
	t *testing.T
}

func (l lazySource) Chunks() []ChunkInfo {
	l.t.Fatal("Chunks called: the chunk table was made")
	return nil
}

func (l lazySource) NumChunks() int { return len(l.lenSource.Chunks()) }

// TestNumChunksPassesThrough: Select passes the count of a source that makes its chunk table
// on first use on, without making it.
func TestNumChunksPassesThrough(t *testing.T) {
	a := lazySource{&lenSource{name: "a", lens: []int64{2, 2, 1, 3}, bounds: []int{0, 2, 4}}, t}
	s, err := Select(a, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n := NumChunks(s); n != 2 {
		t.Fatalf("NumChunks %d, want 2", n)
	}
	if n := NumChunks(a.lenSource); n != 2 {
		t.Fatalf("NumChunks of a plain source %d, want 2", n)
	}
}
