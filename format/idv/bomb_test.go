//go:build unix

package idv

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

// TestBombMemory reads an IDV file whose one block inflates to 256 MiB of zeros (a file of a
// few hundred kilobytes) under a 64 MiB budget, in a child process: it is refused at open with
// ErrTooLarge naming --memory, and the child's peak memory stays far below the block's size
// (it inflated and decoded the block before).
func TestBombMemory(t *testing.T) {
	const rows = 64 << 20 // float32 zeros: 256 MiB
	if testutil.IsChild(t) {
		rd, err := Open(os.Getenv("IDV_BOMB"), &ReaderOptions{Memory: 64 << 20})
		if err == nil {
			defer rd.Close()
			for i := range rd.Chunks() {
				if _, err = rd.ReadChunk(context.Background(), i); err != nil {
					break
				}
			}
		}
		if !errors.Is(err, mlfeed.ErrTooLarge) || !strings.Contains(err.Error(), "--memory") {
			t.Fatalf("got %v, want ErrTooLarge naming --memory", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("writes a block of 256 MiB")
	}
	path := filepath.Join(t.TempDir(), "bomb.idv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 1}}}
	w, err := NewWriter(f, schema, &WriterOptions{Level: 1, MaxRowsPerBlock: rows, MaxBytesPerBlock: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(testutil.ZeroColumn(mlfeed.Float32, rows)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// 807 MiB, and no error, when the block was inflated and decoded
	testutil.CheckChildPeak(t, path, "a block of 256 MiB under a 64 MiB budget", 128<<20, "IDV_BOMB="+path)
}
