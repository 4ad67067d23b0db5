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
	seq := make([]int64, rows+1)
	for i := range seq {
		seq[i] = int64(i)
	}
	if err := w.WriteChunk(&mlfeed.Chunk{Sequences: rows, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: mlfeed.NewBuffer(mlfeed.Float64, rows)}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	out, rss, err := testutil.RunChild(t, "PARQUET_BOMB="+path)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%d-byte file, a row group of %d bytes: peak RSS %.1f MiB", st.Size(), rows*8, float64(rss)/(1<<20))
	if rss > 128<<20 { // 564 MiB, and no error, when the column was decoded whole
		t.Errorf("peak RSS %.1f MiB refusing a row group of 256 MiB under a 64 MiB budget; want under 128 MiB", float64(rss)/(1<<20))
	}
}
