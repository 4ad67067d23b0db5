package npy_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/npy"
)

// Write a stream of records as a .npy array (the bytes numpy.save writes) and read it back.
func Example() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3},
	}}
	values := mlfeed.NewBuffer(mlfeed.Float32, 6)
	for i := range 6 {
		values.SetFloat64(i, float64(i)/2)
	}
	chunk := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: values}}}

	var file bytes.Buffer
	w, _ := npy.NewWriter(&file, schema, &npy.WriterOptions{Records: 2})
	w.WriteChunk(chunk)
	w.Close()
	fmt.Printf("%q\n", file.Bytes()[10:60])

	rd, err := npy.NewReader(bytes.NewReader(file.Bytes()), int64(file.Len()), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rd.Schema().Streams[0], rd.Headers()[0].Shape)
	c, _ := rd.ReadChunk(context.Background(), 0)
	fmt.Println(c.Streams[0].Values.Float32s())
	// Output:
	// "{'descr': '<f4', 'fortran_order': False, 'shape': "
	// features dense float32 3 [2 3]
	// [0 0.5 1 1.5 2 2.5]
}

// Read an .npz archive numpy.savez wrote: one stream per array.
func ExampleOpen() {
	rd, err := npy.Open("testdata/stored.npz", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	c, _ := rd.ReadChunk(context.Background(), 0)
	fmt.Println(c.Sequences, c.Streams[1].Values.Int64s())
	// Output:
	// x dense float32 2
	// y dense int64 1
	// 4 [0 1 2 3]
}
