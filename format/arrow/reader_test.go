package arrow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
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
	for _, opts := range []*WriterOptions{nil, {Stream: true}, {Compression: "zstd"}, {Compression: "lz4", Stream: true}, {Sequences: "list"}} {
		data := write(t, schema, opts, chunks...)
		for _, mapped := range []bool{false, true} {
			var rd arrowtest.Reader
			var err error
			if mapped {
				path := filepath.Join(t.TempDir(), "t.arrow")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				rd, err = openFile(path)
			} else {
				rd, err = openBytes(data, "t.arrow")
			}
			if err != nil {
				t.Fatalf("%+v: %v", opts, err)
			}
			arrowtest.CheckRead(t, fmt.Sprintf("%+v mapped=%v", opts, mapped), rd, schema, chunks)
			rd.Close()
		}
	}
}

func TestSequences(t *testing.T) {
	schema, c := arrowtest.Sequences()
	rd, err := openBytes(write(t, schema, nil, c), "seq.arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	arrowtest.CheckSequences(t, rd)
	// A later chunk with several samples in a column laid out for one is refused.
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, schema, nil)
	one := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1}, Values: arrowtest.F32(1, 2)},
		{SeqStart: []int64{0, 1}, SampleStart: []int64{0, 0}, Indices: []int32{}, Values: arrowtest.F32()},
		{SeqStart: []int64{0, 1}, Values: arrowtest.Raw(mlfeed.Int32, 1, func([]byte) {})},
	}}
	if err := w.WriteChunk(one); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "sequences=list") {
		t.Errorf("got %v", err)
	}
}

func TestUnsupportedStream(t *testing.T) {
	_, err := arrowmap.NewEncoder(mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.ElemType(200), Dim: 1}}}, nil, arrowmap.Layout{})
	if !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("got %v", err)
	}
}

// TestEmptyShape: a fixed shape with a zero in it (no values per sample) survives, as a list
// column whose mlfeed.shape says so.
func TestEmptyShape(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "e", Type: mlfeed.Float32, Dim: 0, Shape: []int{0, 4}}}}
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2, 3}, Values: arrowtest.F32()}}}
	data := write(t, schema, nil, c)
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "e.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Schema(); !reflect.DeepEqual(got, schema) {
		t.Errorf("schema %+v", got)
	}
	got, err := rd.ReadChunk(context.Background(), 0)
	if err != nil || got.Sequences != 3 || got.Streams[0].Values.Len() != 0 || got.Streams[0].SampleStart != nil {
		t.Errorf("%+v %v", got, err)
	}
}
