package webdataset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/internal/testutil"

	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/npy"
	_ "github.com/mlfeed/mlfeed/format/parquet"
	_ "github.com/mlfeed/mlfeed/format/tfrecord"
)

// Every real shard written back gives what Python's tarfile and numpy read from the original:
// the same keys, members and values (the big-endian and Fortran-order arrays now little-endian
// and in C order), plain and gzip-compressed.
func TestWriteBack(t *testing.T) {
	dir := t.TempDir()
	for _, name := range shards {
		for _, comp := range []string{CompressionNone, CompressionGzip} {
			src, err := Open(filepath.Join("testdata", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+"."+comp+".tar")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(f, src.Schema(), &WriterOptions{Compression: comp})
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteAll(t, src, w)
			f.Close()
			src.Close()
			want := independent(t, filepath.Join("testdata", name))
			if got := independent(t, out); !reflect.DeepEqual(got, want) {
				t.Errorf("%s written back (%s) reads differently", name, comp)
			}
		}
	}
}

func chunkOf(sc mlfeed.Schema, ids []string, streams ...mlfeed.StreamData) *mlfeed.Chunk {
	return &mlfeed.Chunk{Sequences: len(streams[0].SeqStart) - 1, IDs: ids, Streams: streams}
}

func f32s(v ...float32) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float32, len(v))
	copy(b.Float32s(), v)
	return b
}

// What a shard cannot hold is refused with ErrUnsupported (exit 2): a sparse stream, a type
// numpy has no dtype for (IDV's datetimeoffset), a name that is not a lowercase extension, two streams of one extension, a sequence of
// several samples, ids that are not keys or repeat.
func TestWriteRefuses(t *testing.T) {
	st := func(name string, t mlfeed.ElemType) mlfeed.Stream {
		return mlfeed.Stream{Name: name, Storage: mlfeed.Dense, Type: t, Dim: 1}
	}
	for _, tc := range []struct {
		schema mlfeed.Schema
		msg    string
	}{
		{mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 4}}}, "sparse"},
		{mlfeed.Schema{Streams: []mlfeed.Stream{st("t", mlfeed.DateTimeOffset)}}, "datetimeoffset"},
		{mlfeed.Schema{Streams: []mlfeed.Stream{st("Features", mlfeed.Float32)}}, "not a WebDataset extension"},
		{mlfeed.Schema{Streams: []mlfeed.Stream{st("a/b", mlfeed.Float32)}}, "not a WebDataset extension"},
		{mlfeed.Schema{Streams: []mlfeed.Stream{st("a", mlfeed.Float32), st("a.npy", mlfeed.Float32)}}, "would both be members"},
	} {
		if _, err := NewWriter(&bytes.Buffer{}, tc.schema, nil); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want %q", tc.schema.Streams, err, tc.msg)
		}
	}
	sc := mlfeed.Schema{HasIDs: true, Streams: []mlfeed.Stream{st("x", mlfeed.Float32)}}
	for _, tc := range []struct {
		ids []string
		seq []int64
		msg string
	}{
		{[]string{"a", "b"}, []int64{0, 2, 3}, "2 samples of stream"},
		{[]string{"a.b", "c"}, []int64{0, 1, 2}, "not a WebDataset key"},
		{[]string{"a", "a"}, []int64{0, 1, 2}, "same id"},
		{[]string{"__k__/a", "b"}, []int64{0, 1, 2}, "metadata"},
		{[]string{"a", "b"}, []int64{0, 0, 3}, "no sample in any stream"},
	} {
		w, err := NewWriter(&bytes.Buffer{}, sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := chunkOf(sc, tc.ids, mlfeed.StreamData{SeqStart: tc.seq, Values: f32s(make([]float32, tc.seq[len(tc.seq)-1])...)})
		if err := w.WriteChunk(c); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ids %q: %v, want %q", tc.ids, err, tc.msg)
		}
	}
}

// Round trips through the registry and package convert: IDX -> WebDataset -> IDX, npz,
// Parquet and TFRecord give back the same values; WebDataset -> Parquet -> WebDataset and
// WebDataset -> TFRecord -> WebDataset keep bytes, text, integers and arrays.
func TestRoundTrips(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func(paths ...string) mlfeed.Source {
		t.Helper()
		src, err := dataset.OpenFiles(paths, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return src
	}
	conv := func(src mlfeed.Source, out string, opts *convert.Options) mlfeed.Source {
		t.Helper()
		if opts == nil {
			opts = &convert.Options{}
		}
		if err := convert.File(ctx, src, out, opts); err != nil {
			t.Fatalf("-> %s: %v", filepath.Base(out), err)
		}
		return open(out)
	}
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")
	images := testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte.gz")
	mnist := open(images, labels)
	wds := conv(mnist, filepath.Join(dir, "mnist.tar"), nil)
	if err := mlfeed.Diff(ctx, mnist, wds); err != nil {
		t.Fatalf("idx -> webdataset: %v", err)
	}
	if got := wds.Schema().Streams[0]; got.Name != "features.npy" || got.String() != "features.npy dense uint8 28x28" {
		t.Errorf("features as %s", got.String())
	}
	for _, ext := range []string{".npz", ".parquet", ".tfrecord"} {
		opts := &convert.Options{}
		back := conv(wds, filepath.Join(dir, "back"+ext), opts)
		if err := mlfeed.Diff(ctx, mnist, back); err != nil {
			t.Errorf("webdataset -> %s: %v", ext, err)
		}
	}
	lab := open(labels)
	idxBack := conv(conv(lab, filepath.Join(dir, "labels.tar.gz"), nil), filepath.Join(dir, "labels.idx"), nil)
	if err := mlfeed.Diff(ctx, lab, idxBack); err != nil {
		t.Errorf("idx -> webdataset -> idx: %v", err)
	}
	// The real shard through Parquet and back: every stream, the missing txt members too.
	written := open(filepath.Join("testdata", "written.tar"))
	again := conv(conv(written, filepath.Join(dir, "w.parquet"), nil), filepath.Join(dir, "w.tar"), nil)
	if err := mlfeed.Diff(ctx, written, again); err != nil {
		t.Errorf("webdataset -> parquet -> webdataset: %v", err)
	}
	if !reflect.DeepEqual(again.Schema().Streams, written.Schema().Streams) {
		t.Errorf("schema via parquet: %v", again.Schema().Streams)
	}
	// cls and png through TFRecord and back.
	sample := open(filepath.Join("testdata", "sample.tgz"))
	viaTF := conv(conv(sample, filepath.Join(dir, "s.tfrecord"), nil), filepath.Join(dir, "s.tgz"), nil)
	if err := mlfeed.Diff(ctx, sample, viaTF); err != nil {
		t.Errorf("webdataset -> tfrecord -> webdataset: %v", err)
	}
}
