package cbf_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/cbf"
)

// Write two sequences of a dense stream and a sparse stream, then read them back.
func Example() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 2},
		{Name: "labels", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 3},
	}}
	features := mlfeed.NewBuffer(mlfeed.Float32, 6)
	copy(features.Float32s(), []float32{0.5, 1, 1.5, 2, 2.5, 3})
	labels := mlfeed.NewBuffer(mlfeed.Float32, 2)
	copy(labels.Float32s(), []float32{1, 1})
	chunk := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{
		// Sequence 0 has one sample, sequence 1 two.
		{SeqStart: []int64{0, 1, 3}, Values: features},
		// One label per sequence: index 2, then index 0.
		{SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 1, 2}, Indices: []int32{2, 0}, Values: labels},
	}}

	var file bytes.Buffer
	w, err := cbf.NewWriter(&file, schema, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteChunk(chunk); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	rd, err := cbf.NewReader(bytes.NewReader(file.Bytes()), int64(file.Len()), &cbf.ReaderOptions{
		Alias: map[string]string{"x": "features"}, // expose "features" as "x"
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(file.Len(), "bytes;", rd.Chunks())
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Streams[0].Values.Float32s(), c.Streams[0].SeqStart)
	fmt.Println(c.Streams[1].Indices, c.Streams[1].Values.Float32s())
	// Output:
	// 166 bytes; [{2 3}]
	// x (alias features) dense float32 2
	// labels sparse float32 3
	// [0.5 1 1.5 2 2.5 3] [0 1 3]
	// [2 0] [1 1]
}
