package cache_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/mlfeed/mlfeed/storage/cache"
	_ "github.com/mlfeed/mlfeed/storage/s3"
)

// A process opens an object through the node cache: the first open on the node fetches it,
// later ones (this process's, other processes') read the local copy while it stays.
func ExampleCache_Open() {
	c, err := cache.FromSpec("/local/mlfeed-cache:50GB")
	if err != nil {
		log.Fatal(err)
	}
	f, err := c.Open(context.Background(), "s3://corpus/train/part-00000.cbf", nil)
	if err != nil {
		log.Fatal(err) // an error wrapping cache.ErrBypass: read it from object storage instead
	}
	defer f.Close()
	head := make([]byte, 16)
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		log.Fatal(err)
	}
	fmt.Println(f.Path(), f.Fetched(), c.Stats())
}
