package arrow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestPeerReadsMlfeed has apache-arrow (JavaScript) read files and streams mlfeed writes and
// compares every value.
func TestPeerReadsMlfeed(t *testing.T) {
	arrowcheck.Require(t)
	schema := arrowtest.Schema()
	chunks := []*mlfeed.Chunk{arrowtest.Chunk(7, 1), arrowtest.Chunk(11, 2)}
	mem, _ := mlfeed.NewMemorySource(schema, chunks...)
	want, err := arrowcheck.Rows(mem, "id")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts *WriterOptions
	}{{"t.arrow", nil}, {"t.arrows", &WriterOptions{Stream: true}}, {"list.arrow", &WriterOptions{Sequences: "list"}}} {
		path := filepath.Join(t.TempDir(), tc.name)
		if err := os.WriteFile(path, write(t, schema, tc.opts, chunks...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := arrowcheck.Compare(arrowcheck.Dump(t, path), want); err != nil {
			t.Errorf("%s: apache-arrow reads: %v", tc.name, err)
		}
	}
}

// TestMlfeedReadsPeer reads files and streams apache-arrow writes (two record batches,
// dictionary-encoded text, fixed-size and plain lists, 64-bit integers, booleans) and compares
// every value with what apache-arrow reads back.
func TestMlfeedReadsPeer(t *testing.T) {
	arrowcheck.Require(t)
	for _, name := range []string{"peer.arrow", "peer.arrows"} {
		path := filepath.Join(t.TempDir(), name)
		want := arrowcheck.Write(t, path)
		for _, opts := range []*ReaderOptions{nil, {NoMmap: true}} {
			rd, err := Open(path, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if n := len(rd.Chunks()); n != 2 {
				t.Errorf("%s: %d chunks, want the 2 record batches", name, n)
			}
			sc := rd.Schema()
			if st := sc.Streams[sc.Index("pair")]; st.Dim != 2 || st.Storage != mlfeed.Dense {
				t.Errorf("%s: list column read as %v, want dense dim 2", name, st)
			}
			got, err := arrowcheck.Rows(rd, "id")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := arrowcheck.Compare(got, want); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			rd.Close()
		}
	}
}

// TestPeerNulls checks that a null from another writer is refused with its column and row.
func TestPeerNulls(t *testing.T) {
	arrowcheck.Require(t)
	path := filepath.Join(t.TempDir(), "null.arrow")
	if _, err := arrowcheck.Run(t, "write-null", path); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = arrowcheck.Rows(rd, "id")
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `column "x", row 3: null`) || !strings.Contains(err.Error(), path) {
		t.Errorf("got %v", err)
	}
}
