//go:build unix

package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestBombMemory reads a Parquet file whose one row group decodes to 256 MiB of zeros (a
// file of kilobytes) under a 64 MiB budget, in a child process: it is refused with
// ErrTooLarge naming --memory before the column is decoded, and the child's peak memory stays
// far below the column's size (it decoded the whole column before).
func TestBombMemory(t *testing.T) {
	const rows = 32 << 20 // float64 zeros: 256 MiB
	if testutil.IsChild(t) {
		rd, err := Open(os.Getenv("PARQUET_BOMB"), &ReaderOptions{Memory: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		_, err = rd.ReadChunk(context.Background(), 0)
		if !errors.Is(err, mlfeed.ErrTooLarge) || !strings.Contains(err.Error(), "--memory") {
			t.Fatalf("got %v, want ErrTooLarge naming --memory", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("writes a column of 256 MiB")
	}
	path := filepath.Join(t.TempDir(), "bomb.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 1}}}
	w, err := NewWriter(f, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(testutil.ZeroColumn(mlfeed.Float64, rows)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// 564 MiB, and no error, when the column was decoded whole
	testutil.CheckChildPeak(t, path, "a row group of 256 MiB under a 64 MiB budget", 128<<20, "PARQUET_BOMB="+path)
}
