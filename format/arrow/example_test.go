package arrow_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/arrow"
)

// Write three rows of text and a label as an Arrow IPC stream (.arrows, as a pipe would carry
// it), then read them back.
func Example() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "text", Type: mlfeed.String, Dim: 1},
		{Name: "label", Type: mlfeed.Uint8, Dim: 1},
	}}
	lab := mlfeed.NewBuffer(mlfeed.Uint8, 3)
	copy(lab.Bytes, []byte{1, 0, 1})
	seq := []int64{0, 1, 2, 3}
	chunk := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"good", "bad", "fine"}}},
		{SeqStart: seq, Values: lab},
	}}

	var buf bytes.Buffer
	w, err := arrow.NewWriter(&buf, schema, &arrow.WriterOptions{Stream: true})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteChunk(chunk); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	rd, err := arrow.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "example.arrows", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()
	fmt.Println(rd.Details()["ipc"], rd.Schema().Streams)
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Streams[0].Values.Strings, c.Streams[1].Values.Uint8s())
	// Output:
	// stream [text dense string 1 label dense uint8 1]
	// [good bad fine] [1 0 1]
}
