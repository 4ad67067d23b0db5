//go:build unix

package arrow

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

// TestBombMemory reads an Arrow file whose one zstd-compressed record batch decompresses to
// 256 MiB of zeros (a file of kilobytes) under a 64 MiB budget, in a child process: it is
// refused at open with ErrTooLarge naming --memory, before anything is decompressed, and the
// child's peak memory stays far below the batch's size.
func TestBombMemory(t *testing.T) {
	const rows = 32 << 20 // float64 zeros: 256 MiB
	if testutil.IsChild(t) {
		rd, err := Open(os.Getenv("ARROW_BOMB"), &ReaderOptions{Memory: 64 << 20, NoMmap: true})
		if err == nil {
			defer rd.Close()
			_, err = rd.ReadChunk(context.Background(), 0)
		}
		if !errors.Is(err, mlfeed.ErrTooLarge) || !strings.Contains(err.Error(), "--memory") {
			t.Fatalf("got %v, want ErrTooLarge naming --memory", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("writes a batch of 256 MiB")
	}
	path := filepath.Join(t.TempDir(), "bomb.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 1}}}
	w, err := NewWriter(f, schema, &WriterOptions{Compression: "zstd"})
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
	// 568 MiB, and no error, when the batch was decompressed
	testutil.CheckChildPeak(t, path, "a batch of 256 MiB under a 64 MiB budget", 128<<20, "ARROW_BOMB="+path)
}
