package minibatch_test

import (
	"fmt"

	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/minibatch"
)

// A training loop over MNIST: images and labels opened as one data set, one randomized
// sweep in minibatches of 256 samples. Each minibatch holds the sequences' values in columnar
// buffers (Batch.Data), valid until the next call of Next.
func Example_mnist() {
	src, err := dataset.OpenFiles([]string{
		"../testdata/mnist/t10k-images-idx3-ubyte.gz",
		"../testdata/mnist/t10k-labels-idx1-ubyte.gz",
	}, "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	r, err := minibatch.New(src, minibatch.Config{MinibatchSize: 256, MaxSweeps: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	batches, sequences := 0, 0
	var counts [10]int
	for r.Next() {
		b := r.Batch()
		if batches == 0 {
			images, labels := b.Data.Streams[0].Values, b.Data.Streams[1].Values
			fmt.Println("first minibatch:", b.Sequences, "images of", images.Len()/b.Sequences, "pixels,", labels.Len(), "labels")
		}
		for _, l := range b.Data.Streams[1].Values.Bytes {
			counts[l]++
		}
		batches++
		sequences += b.Sequences
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(batches, "minibatches,", sequences, "images")
	fmt.Println("labels per digit:", counts)
	// Output:
	// first minibatch: 256 images of 784 pixels, 256 labels
	// 8 minibatches, 2000 images
	// labels per digit: [175 234 219 207 217 179 178 205 192 194]
}
