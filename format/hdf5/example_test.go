package hdf5_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mlfeed/mlfeed/format/hdf5"
)

// Open an h5py/Keras-style file of X and y as a data set: one stream per dataset, one sample
// per row of the first dimension.
func Example() {
	r, err := hdf5.Open("testdata/keras_xy.h5", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, st := range r.Schema().Streams {
		fmt.Println(st.Name, st.Type, st.Dim, st.Shape)
	}
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Sequences, "rows; first label:", c.Streams[1].Values.Float64At(0))
	// Output:
	// X float32 12 [4 3]
	// y uint8 1 []
	// 50 rows; first label: 1
}
