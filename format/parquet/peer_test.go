package parquet

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// TestPeerReadsMlfeed has DuckDB read Parquet files mlfeed writes, with each compression, and
// compares every value.
func TestPeerReadsMlfeed(t *testing.T) {
	schema, chunks, want := arrowtest.PeerData(t)
	for _, opts := range []*WriterOptions{nil, {Compression: "snappy"}, {Compression: "gzip"}, {Compression: "none", Sequences: "list"}} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		if err := os.WriteFile(path, write(t, schema, opts, chunks...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := arrowcheck.Compare(arrowcheck.Dump(t, path), want); err != nil {
			t.Errorf("%+v: DuckDB reads: %v", opts, err)
		}
	}
}

// TestMlfeedReadsPeer reads a Parquet file DuckDB writes (two row groups; integers, floats,
// booleans, text, an enum, a fixed-size array, a list, and a struct in mlfeed's sparse layout)
// and compares every value with what DuckDB reads.
func TestMlfeedReadsPeer(t *testing.T) {
	arrowcheck.Require(t)
	path := filepath.Join(t.TempDir(), "duck.parquet")
	want := arrowcheck.Write(t, path)
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if n := len(rd.Chunks()); n < 2 {
		t.Errorf("%d chunks, want one per row group (2 or more)", n)
	}
	sc := rd.Schema()
	if st := sc.Streams[sc.Index("v")]; st.Dim != 3 || st.Type != mlfeed.Float32 {
		t.Errorf("FLOAT[3] read as %v", st)
	}
	if st := sc.Streams[sc.Index("sp")]; st.Storage != mlfeed.Sparse {
		t.Errorf("sparse struct read as %v", st)
	}
	got, err := arrowcheck.Rows(rd, "id")
	if err != nil {
		t.Fatal(err)
	}
	if err := arrowcheck.Compare(got, want); err != nil {
		t.Error(err)
	}
}

// TestPeerNulls checks that a null from another writer is refused with its column and row.
func TestPeerNulls(t *testing.T) {
	arrowtest.CheckPeerNull(t, filepath.Join(t.TempDir(), "null.parquet"), openFile)
}

// TestPeerTimes reads DuckDB's dates, times of day and timestamps of every unit, zoned and
// not, and a list of timestamps, as the DateTime and Duration ticks DuckDB's own epoch
// functions give.
func TestPeerTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "time.parquet")
	want := arrowcheck.WriteTime(t, path)
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got, err := arrowcheck.Rows(rd, "id")
	if err != nil {
		t.Fatal(err)
	}
	if err := arrowcheck.Compare(got, want); err != nil {
		t.Error(err)
	}
}

// TestPeerReadsTimestamps: with time_unit, datetime streams are written as TIMESTAMP columns
// that DuckDB reads as the same instants (its epoch functions give back mlfeed's ticks; an
// INT64 of ticks would read as other numbers); a duration stays ticks. A value the unit
// cannot hold is refused, naming it.
func TestPeerReadsTimestamps(t *testing.T) {
	arrowcheck.Require(t)
	cols := []string{"ts", "tstz", "ts_ms", "ts_s", "d", "d_late", "t", "tl"}
	rd, err := Open("testdata/duckdb-time.parquet", &ReaderOptions{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	want, err := arrowcheck.Rows(rd, "id")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	schema := rd.Schema()
	path := filepath.Join(t.TempDir(), "us.parquet")
	if err := os.WriteFile(path, write(t, schema, &WriterOptions{TimeUnit: "us"}, c), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := arrowcheck.Compare(arrowcheck.Dump(t, path), want); err != nil {
		t.Errorf("DuckDB reads: %v", err)
	}
	back, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := arrowcheck.Rows(back, "id")
	back.Close()
	if err != nil || arrowcheck.Compare(got, want) != nil {
		t.Errorf("mlfeed reads back: %v %v", err, arrowcheck.Compare(got, want))
	}
	rd.Close()

	for _, bad := range []struct{ col, unit, msg string }{
		{"ts_ns", "us", `stream "ts_ns": unsupported: value 0, 2024-01-02T03:04:05.1234567, is not a whole number of us`},
		{"d", "ns", `stream "d": unsupported: value 0, 0001-01-01T00:00:00, is beyond int64 nanoseconds from 1970`},
	} {
		rd, err := Open("testdata/duckdb-time.parquet", &ReaderOptions{Columns: []string{bad.col}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := rd.ReadChunk(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWriter(io.Discard, rd.Schema(), &WriterOptions{TimeUnit: bad.unit})
		if err == nil {
			err = w.WriteChunk(c)
		}
		rd.Close()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s as %s: %v, want %s", bad.col, bad.unit, err, bad.msg)
		}
	}
}
