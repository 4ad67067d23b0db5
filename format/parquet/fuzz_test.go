package parquet

import (
	"testing"

	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader decodes arbitrary bytes as Parquet (seeded with the files of testdata/, written
// by DuckDB and mlfeed); whatever decodes must write and decode again to the same data.
func FuzzReader(f *testing.F) {
	testutil.Seed(f, "testdata/*.parquet")
	f.Fuzz(func(t *testing.T, data []byte) { arrowtest.Fuzz(t, data, openBytes, create) })
}
