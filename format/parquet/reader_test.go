package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

// openBytes reads data with the default options.
func openBytes(data []byte, name string) (arrowtest.Reader, error) {
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), name, nil)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

// create makes a writer with the default options.
func create(w io.Writer, schema mlfeed.Schema) (mlfeed.Sink, error) { return NewWriter(w, schema, nil) }

// openFile opens the named file with the default options.
func openFile(name string) (arrowtest.Reader, error) {
	rd, err := Open(name, nil)
	if err != nil {
		return nil, err
	}
	return rd, nil
}

func write(t testing.TB, schema mlfeed.Schema, opts *WriterOptions, chunks ...*mlfeed.Chunk) []byte {
	t.Helper()
	return arrowtest.Write(t, schema, func(w io.Writer, schema mlfeed.Schema) (mlfeed.Sink, error) {
		return NewWriter(w, schema, opts)
	}, chunks...)
}

func TestRoundTrip(t *testing.T) {
	schema := arrowtest.Schema()
	chunks := []*mlfeed.Chunk{arrowtest.Chunk(5, 1), arrowtest.Chunk(0, 2), arrowtest.Chunk(17, 3)}
	for _, opts := range []*WriterOptions{nil, {Compression: "snappy"}, {Compression: "gzip"}, {Compression: "none", Sequences: "list"}} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		if err := os.WriteFile(path, write(t, schema, opts, chunks...), 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := Open(path, nil)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		// A chunk of no rows writes no row group.
		arrowtest.CheckRead(t, fmt.Sprintf("%+v", opts), rd, schema, []*mlfeed.Chunk{chunks[0], chunks[2]})
		if d := rd.Details(); opts == nil && d["compression"] != "ZSTD" {
			t.Errorf("details %v", d)
		}
		rd.Close()
	}
}

func TestSequences(t *testing.T) {
	schema, c := arrowtest.Sequences()
	rd, err := openBytes(write(t, schema, nil, c), "seq.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	arrowtest.CheckSequences(t, rd)
}

func TestBadInput(t *testing.T) {
	data := write(t, arrowtest.Schema(), nil, arrowtest.Chunk(9, 1))
	for _, n := range []int{0, 4, 11, len(data) / 2, len(data) - 1} {
		_, err := NewReader(bytes.NewReader(data[:n]), int64(n), "cut.parquet", nil)
		var pe *mlfeed.PosError
		if err == nil || !errors.As(err, &pe) || pe.File != "cut.parquet" {
			t.Errorf("%d bytes: got %v", n, err)
		}
	}
	if _, err := NewWriter(&bytes.Buffer{}, arrowtest.Schema(), &WriterOptions{Compression: "brotli9"}); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("got %v", err)
	}
}
