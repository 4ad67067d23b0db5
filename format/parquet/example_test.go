package parquet_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/parquet"
)

// Write two rows of a 2x2 float32 image and a label as a Parquet file compressed
// with snappy, then read them back.
func Example() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "image", Type: mlfeed.Float32, Dim: 4, Shape: []int{2, 2}},
		{Name: "label", Type: mlfeed.Uint8, Dim: 1},
	}}
	img := mlfeed.NewBuffer(mlfeed.Float32, 8)
	copy(img.Float32s(), []float32{0, 0.5, 1, 0.5, 1, 1, 0, 0})
	lab := mlfeed.NewBuffer(mlfeed.Uint8, 2)
	copy(lab.Bytes, []byte{3, 7})
	seq := []int64{0, 1, 2}
	chunk := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: img}, {SeqStart: seq, Values: lab}}}

	var buf bytes.Buffer
	w, err := parquet.NewWriter(&buf, schema, &parquet.WriterOptions{Compression: "snappy"})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteChunk(chunk); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	rd, err := parquet.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "example.parquet", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()
	fmt.Println(rd.Details()["compression"], rd.Schema().Streams)
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Streams[0].Values.Float32s()[4:], c.Streams[1].Values.Uint8s())
	// Output:
	// SNAPPY [image dense float32 2x2 label dense uint8 1]
	// [1 1 0 0] [3 7]
}
