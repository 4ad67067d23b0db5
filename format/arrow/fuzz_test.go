package arrow

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
)

// FuzzReader decodes arbitrary bytes as Arrow IPC (seeded with the files of testdata/, written
// by apache-arrow and mlfeed); whatever decodes must write and decode again to the same data.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.arrow*")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, data []byte) {
	{
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz", nil)
		if err != nil {
			return
		}
		defer rd.Close()
		if n, _ := mlfeed.Totals(rd.Chunks()); n > 1<<16 {
			return // the check below would hold every row in memory
		}
		var chunks []*mlfeed.Chunk
		for i := range rd.Chunks() {
			c, err := rd.ReadChunk(context.Background(), i)
			if err != nil {
				return
			}
			chunks = append(chunks, c)
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, rd.Schema(), nil)
		if err != nil {
			if !errors.Is(err, mlfeed.ErrUnsupported) {
				t.Fatalf("writer refuses a schema it read: %v", err)
			}
			return
		}
		for _, c := range chunks {
			if err := w.WriteChunk(c); err != nil {
				if errors.Is(err, mlfeed.ErrUnsupported) {
					return // e.g. a chunk that does not fit the first chunk's layout
				}
				t.Fatalf("writing back: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		back, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "back", nil)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		defer back.Close()
		a, err := arrowcheck.Rows(rd, "id")
		if err != nil {
			t.Fatal(err)
		}
		b, err := arrowcheck.Rows(back, "id")
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if err := arrowcheck.Compare(b, a); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	}
}
