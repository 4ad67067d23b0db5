package arrow

import (
	"os"
	"path/filepath"
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

// BenchmarkReadMapped reads a mapped file: values are handed out without a copy.
func BenchmarkReadMapped(b *testing.B) {
	schema, chunks, n := arrowtest.BenchData(10000)
	path := filepath.Join(b.TempDir(), "bench.arrow")
	if err := os.WriteFile(path, write(b, schema, nil, chunks...), 0o644); err != nil {
		b.Fatal(err)
	}
	arrowtest.BenchRead(b, n, func() (arrowtest.Reader, error) { return openFile(path) })
}

// BenchmarkRead reads through ReadAt, with copies.
func BenchmarkRead(b *testing.B) {
	schema, chunks, n := arrowtest.BenchData(10000)
	data := write(b, schema, nil, chunks...)
	arrowtest.BenchRead(b, n, func() (arrowtest.Reader, error) { return openBytes(data, "bench.arrow") })
}
