package mlfeed_test

import (
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Build a chunk of two sequences by hand: a dense stream with 2 values per sample and a
// sparse stream of dimension 10, then read the second sequence back.
func Example() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Type: mlfeed.Float32, Dim: 2},
		{Name: "labels", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10},
	}}
	feats := mlfeed.NewBuffer(mlfeed.Float32, 6) // three samples of 2 values
	for i := 0; i < 6; i++ {
		feats.SetFloat64(i, float64(i)/2)
	}
	labels := mlfeed.NewBuffer(mlfeed.Float32, 2)
	labels.SetFloat64(0, 1)
	labels.SetFloat64(1, 1)
	chunk := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 3}, Values: feats},                                                         // sequence 1 has 2 samples
		{SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 1, 2}, Indices: []int32{3, 7}, Values: labels}, // one-hot 3, then 7
	}}
	src, err := mlfeed.NewMemorySource(schema, chunk)
	if err != nil {
		panic(err)
	}
	fmt.Println(src.Chunks())
	c, _ := src.ReadChunk(context.Background(), 0)
	f := c.Streams[0]
	fmt.Println("sequence 1 features:", f.Values.Float32s()[f.SeqStart[1]*2:f.SeqStart[2]*2])
	l := c.Streams[1]
	fmt.Println("sequence 1 label index:", l.Indices[l.SampleStart[l.SeqStart[1]]])
	// Output:
	// [{2 3}]
	// sequence 1 features: [1 1.5 2 2.5]
	// sequence 1 label index: 7
}
