package cbf

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// A chunk of dense streams read with ReadAt is decoded in the memory it was read into: one
// allocation of the chunk's size, not a second for the values; and it equals the same chunk
// read from the mapped file.
func TestReadInPlace(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "f", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3},
		{Name: "d", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 2}, // after 12-byte rows: realigned
	}}
	const n = 5001
	c := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
		{SeqStart: make([]int64, n+1), Values: mlfeed.NewBuffer(mlfeed.Float32, 3*n)},
		{SeqStart: make([]int64, n+1), Values: mlfeed.NewBuffer(mlfeed.Float64, 2*n)},
	}}
	for q := range n + 1 {
		c.Streams[0].SeqStart[q], c.Streams[1].SeqStart[q] = int64(q), int64(q)
	}
	for i := range c.Streams[0].Values.Float32s() {
		c.Streams[0].Values.Float32s()[i] = float32(i)
	}
	for i := range c.Streams[1].Values.Float64s() {
		c.Streams[1].Values.Float64s()[i] = -float64(i)
	}
	data := writeChunks(t, schema, nil, c)
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rd.inPlace {
		t.Fatal("a reader of dense streams does not decode in place")
	}
	ctx := context.Background()
	var got *mlfeed.Chunk
	used := leastAllocated(func() {
		if got, err = rd.ReadChunk(ctx, 0); err != nil {
			t.Fatal(err)
		}
	})
	if !chunksEqual(got, c) {
		t.Fatal("the chunk decoded in place differs from the one written")
	}
	// The chunk's bytes, its offsets (two streams of n+1 int64s) and the length table kept
	// aside (n uint32s), with room for small allocations; decoding into new memory allocated
	// about as much again.
	if size, want := uint64(len(data)), uint64(len(data)+20*n); used > want+size/8 {
		t.Errorf("reading a chunk of %d bytes allocated %d bytes, want about %d (one buffer of its size and its offsets)", size, used, want)
	}
	if v := got.Streams[1].Values.Float64s(); len(v) != 2*n || v[2*n-1] != -float64(2*n-1) {
		t.Error("the second stream's values are wrong")
	}
	// Read again into the same memory: each read reuses the chunk the one before returned
	// (the caller is done with it), as the engine recycles chunks.
	again := got
	used = leastAllocated(func() { again, err = rd.ReadChunkReuse(ctx, 0, again) })
	if err != nil || !chunksEqual(again, c) {
		t.Fatalf("ReadChunkReuse: %v, equal %v", err, err == nil && chunksEqual(again, c))
	}
	if used > uint64(len(data))/4 {
		t.Errorf("reading a chunk again into its memory allocated %d bytes", used)
	}
}

// leastAllocated returns the fewest bytes the process allocated during one of five calls of f:
// the heap's counter is the whole process's, which another goroutine may add to meanwhile.
func leastAllocated(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 5 {
		before := allocated()
		f()
		least = min(least, allocated()-before)
	}
	return least
}

// TestReadInPlaceCorpus reads every real CBF file of the corpus whose streams are all dense
// with ReadAt (decoded in place) and mapped (decoded into new memory): the same chunks.
func TestReadInPlaceCorpus(t *testing.T) {
	ctx := context.Background()
	inPlace := 0
	for _, path := range corpusFiles(t) {
		byReadAt, err := Open(path, &ReaderOptions{NoMmap: true})
		if err != nil {
			t.Fatal(err)
		}
		mapped, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if byReadAt.inPlace {
			inPlace++
			for i := range mapped.Chunks() {
				got, err1 := byReadAt.ReadChunk(ctx, i)
				want, err2 := mapped.ReadChunk(ctx, i)
				if err1 != nil || err2 != nil || !chunksEqual(got, want) {
					t.Errorf("%s chunk %d: in place %v, mapped %v, equal %v", path, i, err1, err2, err1 == nil && err2 == nil && chunksEqual(got, want))
				}
			}
		}
		byReadAt.Close()
		mapped.Close()
	}
	if inPlace == 0 {
		t.Error("no corpus file was read in place")
	}
}
