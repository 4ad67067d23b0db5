package webdataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/webdataset"
)

// Reading a shard webdataset's TarWriter wrote: one stream per extension, typed by its last
// part; every fourth sample has no txt member, so its txt sequence is empty.
func ExampleOpen() {
	rd, err := webdataset.Open(filepath.Join("testdata", "written.tar"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	fmt.Println(rd.Samples(), "samples")
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	c, _ := rd.ReadChunk(context.Background(), 0)
	cls, txt := c.Streams[1], c.Streams[7]
	for q := 2; q < 4; q++ {
		fmt.Printf("%s: cls %d, txt %q\n", c.IDs[q], cls.Values.Int64s()[cls.SeqStart[q]], txt.Values.Strings[txt.SeqStart[q]:txt.SeqStart[q+1]])
	}
	// Output:
	// 12 samples
	// be.npy dense int32 3
	// cls dense int64 1
	// f32.npy dense float32 3x4
	// f64.npy dense float64 5
	// fortran.npy dense int16 2x3
	// jpg dense bytes 1
	// json dense string 1
	// txt dense string 1
	// vec.npy dense uint8 variable
	// sample0002: cls 2, txt ["caption 2: héllo"]
	// sample0003: cls 3, txt []
}

// Writing a shard: an id becomes the key, a float32 stream a .npy member, a bytes stream a
// member of its own extension.
func ExampleNewWriter() {
	sc := mlfeed.Schema{HasIDs: true, Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 2},
		{Name: "jpg", Type: mlfeed.Bytes, Dim: 1},
	}}
	x := mlfeed.NewBuffer(mlfeed.Float32, 4)
	copy(x.Float32s(), []float32{1, 2, 3, 4})
	c := &mlfeed.Chunk{Sequences: 2, IDs: []string{"img/a", "img/b"}, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2}, Values: x},
		{SeqStart: []int64{0, 1, 2}, Values: mlfeed.Buffer{Type: mlfeed.Bytes, Strings: []string{"\xff\xd8a", "\xff\xd8b"}}},
	}}
	f, err := os.CreateTemp("", "example-*.tar")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	w, err := webdataset.NewWriter(f, sc, nil)
	if err == nil {
		err = w.WriteChunk(c)
	}
	if err == nil {
		err = w.Close()
	}
	f.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	rd, err := webdataset.Open(f.Name(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	for _, st := range rd.Schema().Streams {
		fmt.Println(st)
	}
	fmt.Println(rd.Key(0), rd.Key(1))
	// Output:
	// jpg dense bytes 1
	// x.npy dense float32 2
	// img/a img/b
}
