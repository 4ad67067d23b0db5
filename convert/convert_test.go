package convert_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/idx"
)

var ctx = context.Background()

func TestFileTypeConversionAndBack(t *testing.T) {
	dir := t.TempDir()
	data := demo.Source(300, 3)
	f32 := filepath.Join(dir, "images.idx.gz")
	progressCalls := 0
	err := convert.File(ctx, data, f32, &convert.Options{Streams: []string{"features"}, Type: mlfeed.Float32,
		Progress: func(done, total int64) { progressCalls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if progressCalls == 0 {
		t.Error("no progress reported")
	}
	back := filepath.Join(dir, "images.idx")
	src, err := dataset.OpenFiles([]string{f32}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Schema().Streams[0].Type; got != mlfeed.Float32 {
		t.Fatalf("type %s", got)
	}
	if err := convert.File(ctx, src, back, &convert.Options{Type: mlfeed.Uint8}); err != nil {
		t.Fatal(err)
	}
	src.Close()
	orig, _ := mlfeed.Select(data, "features")
	got, err := dataset.OpenFiles([]string{back}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if err := mlfeed.Diff(ctx, orig, got); err != nil {
		t.Fatal(err)
	}
}

// A conversion that fails leaves no output file behind, and an existing file is untouched.
func TestFailedConversionLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.idx")
	// Two streams cannot go into one IDX file.
	err := convert.File(ctx, demo.Source(10, 1), out, nil)
	if !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Fatalf("error %v, want ErrUnsupported", err)
	}
	// Pixels up to 255 do not fit int8: the error comes mid-stream.
	if err := os.WriteFile(out, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = convert.File(ctx, demo.Source(10, 1), out, &convert.Options{Streams: []string{"features"}, Type: mlfeed.Int8})
	if !errors.Is(err, mlfeed.ErrRange) {
		t.Fatalf("error %v, want ErrRange", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Error("the existing output was replaced by a failed conversion")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestDensify(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 4}}}
	vals := mlfeed.NewBuffer(mlfeed.Float32, 3)
	vals.SetFloat64(0, 1)
	vals.SetFloat64(1, 2)
	vals.SetFloat64(2, 3)
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{
		SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 2, 3}, Indices: []int32{0, 3, 2}, Values: vals,
	}}}
	out, err := convert.TargetSchema(sc, &convert.Options{Densify: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := convert.Transform(&sc, &out, c)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Streams[0].Values.Float32s()
	want := []float32{1, 0, 0, 2, 0, 0, 3, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("densified %v, want %v", got, want)
		}
	}
	if err := d.Validate(&out); err != nil {
		t.Fatal(err)
	}
}

// TestDensifyRepeatedIndex: a sparse sample that holds an index twice (CBF and other binary
// formats can store one) cannot be densified without dropping a value: the conversion is
// refused, naming the stream, the sequence in the data set, the sample and the index, with
// mlfeed.ErrFormat. It was densified keeping the last value.
func TestDensifyRepeatedIndex(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 4}}}
	chunk := func(idx ...int32) *mlfeed.Chunk {
		vals := mlfeed.NewBuffer(mlfeed.Float32, len(idx))
		// sequence 0: one sample of idx[0]; sequence 1: two samples, of idx[1] and idx[2:]
		return &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{
			SeqStart: []int64{0, 1, 3}, SampleStart: []int64{0, 1, 2, int64(len(idx))}, Indices: idx, Values: vals,
		}}}
	}
	out, err := convert.TargetSchema(sc, &convert.Options{Densify: true})
	if err != nil {
		t.Fatal(err)
	}
	// The same index in two samples is fine; twice in one sample is not.
	if _, err := convert.Transform(&sc, &out, chunk(1, 1, 0, 2, 3)); err != nil {
		t.Fatal(err)
	}
	_, err = convert.Transform(&sc, &out, chunk(1, 1, 0, 3, 0))
	var re *convert.RepeatedIndexError
	if !errors.As(err, &re) || !errors.Is(err, mlfeed.ErrFormat) || *re != (convert.RepeatedIndexError{Stream: "s", Sequence: 1, Sample: 1, Index: 0}) {
		t.Fatalf("a repeated index: %v", err)
	}
	// Copy names the sequence of the data set: here the second chunk's second sequence.
	src, err := mlfeed.NewMemorySource(sc, chunk(0, 1, 2, 3), chunk(2, 3, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	var sink mlfeed.Sink = discard{}
	err = convert.Copy(ctx, sink, src, &convert.Options{Densify: true})
	if !errors.As(err, &re) || re.Sequence != 3 || re.Index != 1 || !strings.Contains(err.Error(), `stream "s": sequence 3`) {
		t.Fatalf("Copy: %v", err)
	}
}

// discard is a sink that keeps nothing.
type discard struct{}

func (discard) WriteChunk(*mlfeed.Chunk) error { return nil }
func (discard) Close() error                   { return nil }

// A format that cannot hold a sample's shape stores it flat, and the log says so: once per
// such stream, naming it, its shape and the dim it is stored as. A format that keeps shapes
// logs nothing.
func TestFlattenedShapeNotice(t *testing.T) {
	dir := t.TempDir()
	data := demo.Source(20, 1)
	var log bytes.Buffer
	out := filepath.Join(dir, "digits.cbf")
	if err := convert.File(ctx, data, out, &convert.Options{Log: &log, Type: mlfeed.Float32}); err != nil {
		t.Fatal(err)
	}
	want := "notice: " + out + ": cbf stores no sample shapes: stream \"features\" of shape 28x28 is stored flat, as dim 784\n"
	if log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	log.Reset()
	if _, err := convert.Shards(ctx, data, filepath.Join(dir, "shards"), &convert.ShardOptions{Options: convert.Options{Log: &log, Type: mlfeed.Float32, Format: out2cbf(t)}, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `stream "features" of shape 28x28 is stored flat, as dim 784`) || strings.Count(log.String(), "\n") != 1 {
		t.Errorf("sharded conversion logged %q", log.String())
	}
	log.Reset()
	if err := convert.File(ctx, data, filepath.Join(dir, "digits.idx"), &convert.Options{Log: &log, Streams: []string{"features"}}); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Errorf("IDX keeps shapes, but the log says %q", log.String())
	}
}

func out2cbf(t *testing.T) *format.Format {
	ft, ok := format.Lookup("cbf")
	if !ok {
		t.Fatal("cbf not registered")
	}
	return ft
}

// A library error speaks of the library's options, not of the CLI's flags.
func TestUnknownOutputFormat(t *testing.T) {
	err := convert.File(ctx, demo.Source(10, 1), filepath.Join(t.TempDir(), "out.unknownext"), nil)
	if !errors.Is(err, mlfeed.ErrUnknownFormat) || !strings.Contains(err.Error(), "Options.Format") || strings.Contains(err.Error(), "--") {
		t.Fatalf("error %v", err)
	}
}
