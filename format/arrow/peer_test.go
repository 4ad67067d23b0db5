package arrow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestPeerReadsMlfeed has apache-arrow (JavaScript) read files and streams mlfeed writes and
// compares every value.
func TestPeerReadsMlfeed(t *testing.T) {
	schema, chunks, want := arrowtest.PeerData(t)
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
	arrowtest.CheckPeerNull(t, filepath.Join(t.TempDir(), "null.arrow"), openFile)
}

// TestPeerTimes reads apache-arrow's dates, times of day, timestamps (every unit, zoned and
// not, from 0001 to 9999) and durations as mlfeed's DateTime and Duration ticks, mapped and
// not.
func TestPeerTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "time.arrow")
	want := arrowcheck.WriteTime(t, path)
	for _, opts := range []*ReaderOptions{nil, {NoMmap: true}} {
		rd, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := arrowcheck.Rows(rd, "id")
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := arrowcheck.Compare(got, want); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
	}
}
