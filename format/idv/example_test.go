package idv_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/idv"
)

// Write a small table of a text column and a fixed-size vector column, then read it back.
func Example() {
	dir, err := os.MkdirTemp("", "idv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "table.idv")

	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "Term", Type: mlfeed.String, Dim: 1},
		{Name: "Features", Type: mlfeed.Float32, Dim: 2},
	}}
	features := mlfeed.NewBuffer(mlfeed.Float32, 6)
	copy(features.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	chunk := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2, 3}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"Bad", "Fair", "Good"}}},
		{SeqStart: []int64{0, 1, 2, 3}, Values: features},
	}}

	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	w, err := idv.NewWriter(f, schema, nil) // DEFLATE, BinarySaver's block sizes
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteChunk(chunk); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	r, err := idv.Open(name, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, st := range r.Schema().Streams {
		fmt.Println(st)
	}
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Streams[0].Values.Strings, c.Streams[1].Values.Float32s())
	fmt.Println(r.Details()["column 1"].(map[string]any)["codec"])
	// Output:
	// Term dense string 1
	// Features dense float32 2
	// [Bad Fair Good] [1 2 3 4 5 6]
	// VBuffer(Single, [2])
}
