package storage_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mlfeed/mlfeed/storage"
)

// A program that opens a URL whose driver it does not import gets a NoDriverError: it names
// the URL, and the package that registers mlfeed's driver for the scheme.
func ExampleNoDriverError() {
	_, err := storage.Open(context.Background(), "gs://bucket/train.idx")
	var nd *storage.NoDriverError
	if errors.As(err, &nd) {
		fmt.Println(nd.Scheme, nd.Package)
	}
	fmt.Println(errors.Is(err, storage.ErrNoDriver))
	fmt.Println(err)
	// Output:
	// gs github.com/mlfeed/mlfeed/storage/gcs
	// true
	// gs://bucket/train.idx: no storage driver for the URL's scheme gs:// in this program (import _ "github.com/mlfeed/mlfeed/storage/gcs")
}
