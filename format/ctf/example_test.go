package ctf_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/ctf"
)

// Reading a CTF file with declared streams: sequence ids group lines, a sparse input lists
// index:value pairs.
func Example() {
	dir, _ := os.MkdirTemp("", "ctf")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "data.ctf")
	os.WriteFile(name, []byte("0 |x 1 2 |y 3:1\n0 |x 3 4\n1 |x 5 6 |y 0:0.5\n"), 0o644)

	r, err := ctf.Open(name, &ctf.ReaderOptions{Inputs: []mlfeed.Stream{
		{Name: "features", Alias: "x", Storage: mlfeed.Dense, Dim: 2},
		{Name: "labels", Alias: "y", Storage: mlfeed.Sparse, Dim: 4},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(r.Chunks())
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	f, l := c.Streams[0], c.Streams[1]
	fmt.Println(c.IDs, f.SeqStart, f.Values.Float32s())
	fmt.Println(l.SeqStart, l.SampleStart, l.Indices, l.Values.Float32s())

	// Write it back: ids, aliases and shortest numbers.
	w, _ := ctf.NewWriter(os.Stdout, r.Schema(), nil)
	w.WriteChunk(c)
	w.Close()
	// Output:
	// [{2 3}]
	// [0 1] [0 2 3] [1 2 3 4 5 6]
	// [0 1 2] [0 1 2] [3 0] [1 0.5]
	// 0 |x 1 2 |y 3:1
	// 0 |x 3 4
	// 1 |x 5 6 |y 0:0.5
}
