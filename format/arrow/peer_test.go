package arrow

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
	"github.com/mlfeed/mlfeed/internal/testutil"
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

// TestPeerReadsTimestamps: with time_unit, datetime streams are timestamps apache-arrow reads
// as the same instants (its epoch milliseconds; an Int64 of ticks would read as other
// numbers), from 0001 to 9999; mlfeed reads them back as the same ticks.
func TestPeerReadsTimestamps(t *testing.T) {
	arrowcheck.Require(t)
	var ticks []int64
	for _, tm := range []time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1900, 2, 28, 23, 59, 59, 999e6, time.UTC),
		time.Unix(0, 0), time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		ticks = append(ticks, testutil.Ticks(tm))
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "when", Storage: mlfeed.Dense, Type: mlfeed.DateTime, Dim: 1}}}
	b := mlfeed.NewBuffer(mlfeed.Int64, len(ticks))
	copy(b.Int64s(), ticks)
	b.Type = mlfeed.DateTime
	c := &mlfeed.Chunk{Sequences: len(ticks), Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2, 3, 4, 5}, Values: b}}}
	for _, unit := range []string{"ms", "us"} {
		path := filepath.Join(t.TempDir(), unit+".arrow")
		if err := os.WriteFile(path, write(t, schema, &WriterOptions{TimeUnit: unit}, c), 0o644); err != nil {
			t.Fatal(err)
		}
		var want []arrowcheck.Row
		for _, v := range ticks {
			want = append(want, arrowcheck.Row{"when": {float64((v - mlfeed.EpochTicks) / 10_000)}})
		}
		if err := arrowcheck.Compare(arrowcheck.Dump(t, path), want); err != nil {
			t.Errorf("%s: apache-arrow reads: %v", unit, err)
		}
		rd, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rd.ReadChunk(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range ticks {
			if g := got.Streams[0].Values.Int64At(i); g != v || got.Streams[0].Values.Type != mlfeed.DateTime {
				t.Errorf("%s: value %d read back as %d, want %d", unit, i, g, v)
			}
		}
		rd.Close()
	}
}
