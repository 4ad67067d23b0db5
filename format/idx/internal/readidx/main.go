// Command readidx prints the element type, shape and first value of an IDX file: the smallest
// program that reads a format, whose size format's TestProgramSize checks.
package main

import (
	"fmt"
	"os"

	"github.com/mlfeed/mlfeed/format/idx"
)

func main() {
	r, err := idx.Open(os.Args[1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer r.Close()
	h := r.Header()
	fmt.Println(h.Type, h.Dims)
}
