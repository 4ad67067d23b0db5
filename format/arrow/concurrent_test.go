package arrow

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestConcurrentReads reads every chunk of a mapped file from several goroutines at once (as
// the minibatch workers do) and compares with what was written; run it with -race.
func TestConcurrentReads(t *testing.T) {
	var chunks []*mlfeed.Chunk
	for i := 0; i < 8; i++ {
		chunks = append(chunks, arrowtest.Chunk(20+i, i))
	}
	path := filepath.Join(t.TempDir(), "c.arrow")
	if err := os.WriteFile(path, write(t, arrowtest.Schema(), nil, chunks...), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	arrowtest.ConcurrentReads(t, rd, chunks)
}

// TestConcurrentReadsDictionaries reads the chunks of a file with dictionary-encoded columns
// (apache-arrow's JS writer) from several goroutines at once, many times, and compares each
// with the chunk read alone. arrow-go resolves a dictionary column through a hash state its
// file reader shares: unserialized, that is a data race (-race reports it) which can give a
// column another column's dictionary.
func TestConcurrentReadsDictionaries(t *testing.T) {
	rd, err := Open("testdata/apache-arrow-js.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.dictMu == nil {
		t.Fatal("the file's dictionaries were not counted")
	}
	want := make([]*mlfeed.Chunk, len(rd.Chunks()))
	for i := range want {
		if want[i], err = rd.ReadChunk(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				i := (g + k) % len(want)
				c, err := rd.ReadChunk(context.Background(), i)
				if err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(c, want[i]) {
					t.Errorf("chunk %d read beside others differs from chunk %d read alone", i, i)
					return
				}
			}
		}()
	}
	wg.Wait()
}
