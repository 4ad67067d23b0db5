package parquet

import (
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestConcurrentReads reads every row group from several goroutines at once (as the minibatch
// workers do) and compares with what was written; run it with -race.
func TestConcurrentReads(t *testing.T) {
	var chunks []*mlfeed.Chunk
	for i := 0; i < 8; i++ {
		chunks = append(chunks, arrowtest.Chunk(20+i, i))
	}
	rd, err := openBytes(write(t, arrowtest.Schema(), nil, chunks...), "c.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	arrowtest.ConcurrentReads(t, rd, chunks)
}
