package arrow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
	"github.com/mlfeed/mlfeed/internal/testutil"
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
// (apache-arrow's JS writer) from several goroutines at once (testutil.ConcurrentReads).
// arrow-go resolves a dictionary column through a hash state its file reader shares:
// unserialized, that is a data race (-race reports it) which can give a column another
// column's dictionary.
func TestConcurrentReadsDictionaries(t *testing.T) {
	rd, err := Open("testdata/apache-arrow-js.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.dictMu == nil {
		t.Fatal("the file's dictionaries were not counted")
	}
	testutil.ConcurrentReads(t, rd)
}
