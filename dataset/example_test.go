package dataset_test

import (
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all" // every format this build knows
)

// The front door: describe what to open and open it; formats are detected from the files'
// first bytes. The MNIST images and labels (one record set in two files) combine into one data
// set.
func ExampleSpec_Open() {
	spec := dataset.Spec{Paths: []string{
		"../testdata/mnist/t10k-images-idx3-ubyte.gz",
		"../testdata/mnist/t10k-labels-idx1-ubyte.gz",
	}}
	src, err := spec.Open(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	for _, st := range src.Schema().Streams {
		fmt.Println(st.Name, st.Storage, st.Type, st.Dim, st.Shape)
	}
	seqs, samples := mlfeed.Totals(src.Chunks())
	fmt.Println(seqs, "sequences,", samples, "samples,", len(src.Chunks()), "chunks")
	c, err := src.ReadChunk(context.Background(), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first labels:", c.Streams[1].Values.Bytes[:10])
	// Output:
	// features dense uint8 784 [28 28]
	// labels dense uint8 1 []
	// 2000 sequences, 2000 samples, 1 chunks
	// first labels: [7 2 1 0 4 1 4 9 5 9]
}
