package parquet

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestConcurrentReads reads every chunk from several goroutines at once (as the minibatch
// workers do) and compares with a sequential read; run it with -race.
func TestConcurrentReads(t *testing.T) {
	schema := arrowtest.Schema()
	var chunks []*mlfeed.Chunk
	for i := 0; i < 8; i++ {
		chunks = append(chunks, arrowtest.Chunk(20+i, i))
	}
	data := write(t, schema, nil, chunks...)
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "c.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	mem, _ := mlfeed.NewMemorySource(schema, chunks...)
	want, err := arrowcheck.Rows(mem, "id")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]*mlfeed.Chunk, len(chunks))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev *mlfeed.Chunk
			for i := range got {
				c, err := rd.ReadChunkReuse(context.Background(), (i+g)%len(got), prev)
				if err != nil {
					t.Error(err)
					return
				}
				prev = c
			}
			for k := g; k < len(got); k += 4 {
				c, err := rd.ReadChunk(context.Background(), k)
				if err != nil {
					t.Error(err)
					return
				}
				got[k] = c
			}
		}()
	}
	wg.Wait()
	for i, c := range got {
		if c == nil {
			t.Fatalf("chunk %d not kept", i)
		}
	}
	back, _ := mlfeed.NewMemorySource(schema, got...)
	rows, err := arrowcheck.Rows(back, "id")
	if err != nil {
		t.Fatal(err)
	}
	if err := arrowcheck.Compare(rows, want); err != nil {
		t.Error(err)
	}
}
