package libsvm_test

import (
	"context"
	"fmt"
	"os"

	"github.com/mlfeed/mlfeed/format/libsvm"
)

// Parse LIBSVM text: a labels stream, a sparse features stream and qids. The indices are
// one-based here (every index is at least 1), so they come out one lower.
func Example() {
	text := "# two queries\n3 qid:1 1:0.5 4:-2\n1 qid:2 2:1e-3\n"
	rd, err := libsvm.NewReaderBytes([]byte(text), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	c, _ := rd.ReadChunk(context.Background(), 0)
	f := c.Streams[1]
	fmt.Println(rd.Base(), c.Streams[0].Values.Float64s(), f.SampleStart, f.Indices, f.Values.Float64s(), c.Streams[2].Values.Int64s())
	// Output:
	// labels dense float64 1
	// features sparse float64 4
	// qid dense int64 1
	// one [3 1] [0 2 3] [0 3 1] [0.5 -2 0.001] [1 2]
}

// Write records as LIBSVM text, one-based as LIBSVM defines it.
func ExampleNewWriter() {
	rd, err := libsvm.Open("testdata/sklearn_multi.svm", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	fmt.Println(rd.Schema().Streams[0])
	w, _ := libsvm.NewWriter(os.Stdout, rd.Schema(), nil)
	c, _ := rd.ReadChunk(context.Background(), 0)
	w.WriteChunk(c.Slice(0, 2))
	w.Close()
	// Output:
	// labels sparse float64 4
	// 0,2 1:0.3193418039018624 2:0.4931103229848808
	// 1,2 5:0.6959948701337834 6:0.2615530463118
}
