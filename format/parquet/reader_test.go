package parquet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
)

func write(t testing.TB, schema mlfeed.Schema, opts *WriterOptions, chunks ...*mlfeed.Chunk) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if err := w.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	schema := arrowtest.Schema()
	chunks := []*mlfeed.Chunk{arrowtest.Chunk(5, 1), arrowtest.Chunk(0, 2), arrowtest.Chunk(17, 3)}
	mem, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*WriterOptions{nil, {Compression: "snappy"}, {Compression: "gzip"}, {Compression: "none", Sequences: "list"}} {
		data := write(t, schema, opts, chunks...)
		path := filepath.Join(t.TempDir(), "t.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := Open(path, nil)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		for i, got := range rd.Schema().Streams {
			if !reflect.DeepEqual(got, schema.Streams[i]) {
				t.Errorf("%+v: stream\n got %#v\nwant %#v", opts, got, schema.Streams[i])
			}
		}
		if got := rd.Chunks(); len(got) != 3 || got[0].Sequences != 5 || got[1].Sequences != 0 || got[2].Sequences != 17 {
			t.Errorf("%+v: chunks %+v", opts, got)
		}
		if err := mlfeed.Diff(context.Background(), mem, rd); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
		c, err := rd.ReadChunk(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.IDs, chunks[2].IDs) {
			t.Errorf("ids %v, want %v", c.IDs, chunks[2].IDs)
		}
		c2, err := rd.ReadChunkReuse(context.Background(), 0, c)
		if err != nil {
			t.Fatal(err)
		}
		one, _ := mlfeed.NewMemorySource(schema, c2)
		want, _ := mlfeed.NewMemorySource(schema, chunks[0])
		if err := mlfeed.Diff(context.Background(), want, one); err != nil {
			t.Errorf("reuse: %v", err)
		}
		if d := rd.Details(); opts == nil && d["compression"] != "ZSTD" {
			t.Errorf("details %v", d)
		}
		rd.Close()
	}
}

func TestSequences(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 2},
		{Name: "y", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5},
		{Name: "l", Type: mlfeed.Int32, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 2, 2, 5}, Values: arrowtest.F32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		{SeqStart: []int64{0, 1, 3, 3}, SampleStart: []int64{0, 2, 2, 3}, Indices: []int32{0, 4, 2}, Values: arrowtest.F32(1, 2, 3)},
		{SeqStart: []int64{0, 1, 2, 3}, Values: arrowtest.Raw(mlfeed.Int32, 3, func(p []byte) { p[0], p[4], p[8] = 7, 8, 9 })},
	}}
	data := write(t, schema, nil, c)
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "seq.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Schema(); !reflect.DeepEqual(got, schema) {
		t.Errorf("schema %+v", got)
	}
	mem, _ := mlfeed.NewMemorySource(schema, c)
	if err := mlfeed.Diff(context.Background(), mem, rd); err != nil {
		t.Error(err)
	}
	lens, err := rd.SequenceLengths(0)
	if err != nil || !reflect.DeepEqual(lens, []int64{2, 2, 3}) {
		t.Errorf("lengths %v %v", lens, err)
	}
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
