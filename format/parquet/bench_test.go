package parquet

import (
	"testing"

	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

func BenchmarkWrite(b *testing.B) {
	schema, chunks, n := arrowtest.BenchData(10000)
	b.SetBytes(n)
	for b.Loop() {
		write(b, schema, nil, chunks...)
	}
}

func BenchmarkRead(b *testing.B) {
	schema, chunks, n := arrowtest.BenchData(10000)
	data := write(b, schema, nil, chunks...)
	arrowtest.BenchRead(b, n, func() (arrowtest.Reader, error) { return openBytes(data, "bench.parquet") })
}
