package stats_test

import (
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/stats"
)

// Statistics of a small data set held in memory: a float32 feature and a uint8 label.
func Example() {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 1},
		{Name: "label", Type: mlfeed.Uint8, Dim: 1},
	}}
	x := mlfeed.NewBuffer(mlfeed.Float32, 4)
	copy(x.Float32s(), []float32{0.5, 1.5, 2.5, 3.5})
	c := &mlfeed.Chunk{Sequences: 4, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2, 3, 4}, Values: x},
		{SeqStart: []int64{0, 1, 2, 3, 4}, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: []byte{1, 0, 1, 1}}},
	}}
	src, err := mlfeed.NewMemorySource(sc, c)
	if err != nil {
		panic(err)
	}
	res, err := stats.Compute(context.Background(), src, &stats.Options{Bins: 2})
	if err != nil {
		panic(err)
	}
	n := res.Streams[0].Numeric
	fmt.Printf("x: min %g max %g mean %g std %.4f\n", n.Min, n.Max, n.Mean, n.Std)
	fmt.Printf("x: histogram edges %v counts %v\n", n.Histogram.Edges, n.Histogram.Counts)
	for _, cl := range res.Streams[1].Classes.Counts {
		fmt.Printf("label %d: %d\n", cl.Class, cl.Count)
	}
	// Output:
	// x: min 0.5 max 3.5 mean 2 std 1.1180
	// x: histogram edges [0.5 2 3.515625] counts [2 2]
	// label 0: 1
	// label 1: 3
}
