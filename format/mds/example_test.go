package mds_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mlfeed/mlfeed/format/mds"
)

// Reading a data set MosaicML Streaming's MDSWriter wrote (12 zstd shards of one sample each):
// an ndarray of per-sample shapes is two streams, its values and their shapes; a list of JPEG
// images is a sequence of bytes samples.
func ExampleOpen() {
	rd, err := mds.Open(filepath.Join("testdata", "arrays"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	for _, st := range rd.Schema().Streams[:4] {
		fmt.Println(st)
	}
	c, _ := rd.ReadChunk(context.Background(), 2)
	fmt.Println("dyn:", c.Streams[2].Values.Float32s(), "shape", c.Streams[3].Values.Int64s())
	fmt.Println("list[jpeg] images:", len(c.Streams[8].Values.Strings))
	// Output:
	// any dense int16 variable
	// any.shape dense int64 variable
	// dyn dense float32 variable
	// dyn.shape dense int64 variable
	// dyn: [0 0.25 0.5 0.75 1 1.25] shape [3 2]
	// list[jpeg] images: 2
}
