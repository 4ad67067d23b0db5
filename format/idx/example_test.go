package idx_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/idx"
)

// Write a 2×2×3 int16 tensor as IDX, then read it back as a source of two 2×3 records.
func Example() {
	values := mlfeed.NewBuffer(mlfeed.Int16, 12)
	for i := 0; i < 12; i++ {
		values.SetFloat64(i, float64(i*100-300))
	}
	var file bytes.Buffer
	w, err := idx.NewWriter(&file, idx.Header{Type: mlfeed.Int16, Dims: []int{2, 2, 3}}, nil)
	if err != nil {
		panic(err)
	}
	w.Write(values)
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("header: % x\n", file.Bytes()[:16])

	r, err := idx.NewReader(bytes.NewReader(file.Bytes()), int64(file.Len()), &idx.ReaderOptions{FileName: "tensor.idx"})
	if err != nil {
		panic(err)
	}
	st := r.Schema().Streams[0]
	fmt.Println("stream:", st)
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("sequences:", c.Sequences, "values:", c.Streams[0].Values.Int16s())
	// Output:
	// header: 00 00 0b 03 00 00 00 02 00 00 00 02 00 00 00 03
	// stream: features dense int16 2x3
	// sequences: 2 values: [-300 -200 -100 0 100 200 300 400 500 600 700 800]
}

// A truncated file is an error naming the file and the byte offset where data is missing.
func ExampleNewReader_truncated() {
	data := []byte{0, 0, 0x08, 1, 0, 0, 0, 5, 1, 2}
	_, err := idx.NewReader(bytes.NewReader(data), int64(len(data)), &idx.ReaderOptions{FileName: "labels.idx"})
	fmt.Println(err)
	// Output:
	// labels.idx: byte offset 10 (payload): idx: unexpected end of data: header [5] of uint8 announces 5 data bytes, file has 2
}
