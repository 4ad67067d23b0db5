// Command s3fetch reads the first sequence of a data set in object storage, as `mlfeed cat -n
// 1` does, and prints the bytes it fetched from the server (bench/s3.sh).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
	_ "github.com/mlfeed/mlfeed/storage/all"
)

func main() {
	src, err := dataset.OpenFiles(os.Args[1:], "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer src.Close()
	if _, err := src.ReadChunk(context.Background(), 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d, _ := src.(mlfeed.Detailer)
	if d == nil {
		fmt.Fprintln(os.Stderr, "no fetch count")
		os.Exit(1)
	}
	fmt.Println(d.Details()["fetched_bytes"])
}
