package all_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
)

// trainingFormats are the formats a data set moves between in the training world: MNIST's IDX,
// TFRecord, WebDataset, MDS, Parquet and npz. Each holds a dense float32 stream of a fixed
// dim, so every ordered pair must carry one through unchanged.
var trainingFormats = []string{"idx", "tfrecord", "webdataset", "mds", "parquet", "npz"}

// outName is where a test writes format ft: a file with its extension, or a directory.
func outName(dir, base string, ft *format.Format) string {
	return filepath.Join(dir, base+ft.Ext())
}

// Every ordered pair of the training formats converts a dense float32 stream and reads it
// back with the same values, sample dim and sample count: source -> A -> B, compared with the
// source value for value.
func TestTrainingFormatPairs(t *testing.T) {
	const n, dim = 23, 6
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: dim}}}
	want := make([]float32, n*dim)
	for i := range want {
		want[i] = float32(i%97)*0.25 - 7 // exact in float32, negative and positive, zeros
	}
	seq := make([]int64, n+1)
	for i := range seq {
		seq[i] = int64(i)
	}
	vals := mlfeed.NewBuffer(mlfeed.Float32, len(want))
	copy(vals.Float32s(), want)
	c := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: vals}}}
	ctx := context.Background()
	dir := t.TempDir()
	first := map[string]string{}
	for _, a := range trainingFormats {
		ft, ok := format.Lookup(a)
		if !ok || !ft.Writable() {
			t.Fatalf("format %q is not registered as writable", a)
		}
		src, err := mlfeed.NewMemorySource(schema, c)
		if err != nil {
			t.Fatal(err)
		}
		out := outName(dir, "src-"+a, ft)
		if err := convert.File(ctx, src, out, &convert.Options{Format: ft}); err != nil {
			t.Fatalf("source -> %s: %v", a, err)
		}
		first[a] = out
		checkFloat32(t, "source -> "+a, out, a, want, dim)
	}
	for _, a := range trainingFormats {
		for _, b := range trainingFormats {
			t.Run(a+"->"+b, func(t *testing.T) {
				src, err := dataset.OpenFiles([]string{first[a]}, a, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				fb, _ := format.Lookup(b)
				out := outName(dir, fmt.Sprintf("%s-to-%s", a, b), fb)
				if err := convert.File(ctx, src, out, &convert.Options{Format: fb}); err != nil {
					t.Fatalf("%s -> %s: %v", a, b, err)
				}
				checkFloat32(t, a+" -> "+b, out, b, want, dim)
			})
		}
	}
}

// checkFloat32 reads name as format f and compares its one stream with want.
func checkFloat32(t *testing.T, what, name, f string, want []float32, dim int) {
	t.Helper()
	src, err := dataset.OpenFiles([]string{name}, f, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer src.Close()
	st := src.Schema().Streams
	if len(st) != 1 || st[0].Type != mlfeed.Float32 || st[0].Dim != dim || st[0].Storage != mlfeed.Dense {
		t.Fatalf("%s: read back as %v, want one dense float32 stream of dim %d", what, st, dim)
	}
	var got []float32
	samples := 0
	for i := range src.Chunks() {
		ch, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatalf("%s: chunk %d: %v", what, i, err)
		}
		sd := ch.Streams[0]
		samples += int(sd.SeqStart[len(sd.SeqStart)-1] - sd.SeqStart[0])
		got = append(got, sd.Values.Float32s()...)
	}
	if samples*dim != len(want) || !slices.Equal(got, want) {
		t.Fatalf("%s: %d samples, values %v..., want %d samples of %v...", what, samples, head(got), len(want)/dim, head(want))
	}
}

func head(v []float32) []float32 { return v[:min(len(v), 8)] }

// Every ordered pair of the formats that hold dates and times (IDV, Arrow, Parquet, npz,
// WebDataset's .npy members) carries a datetime and a duration stream through unchanged, from
// the first tick of 0001 to the last of 9999. The streams are named as WebDataset names them.
func TestTimeFormatPairs(t *testing.T) {
	formats := []string{"idv", "arrow", "parquet", "npz", "webdataset"}
	const n = 5
	when := []int64{0, mlfeed.EpochTicks, mlfeed.EpochTicks - 1, 638397614451234567, mlfeed.MaxTicks}
	span := []int64{-1, 0, 863999999999, 1 << 62, -5 << 40, 7, 100, -100, 3, 9}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "when.npy", Storage: mlfeed.Dense, Type: mlfeed.DateTime, Dim: 1},
		{Name: "span.npy", Storage: mlfeed.Dense, Type: mlfeed.Duration, Dim: 2},
	}}
	seq := []int64{0, 1, 2, 3, 4, 5}
	buf := func(t mlfeed.ElemType, v []int64) mlfeed.Buffer {
		b := mlfeed.NewBuffer(mlfeed.Int64, len(v))
		copy(b.Int64s(), v)
		b.Type = t // the same int64 ticks
		return b
	}
	c := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: buf(mlfeed.DateTime, when)}, {SeqStart: seq, Values: buf(mlfeed.Duration, span)}}}
	check := func(what, name, f string) {
		t.Helper()
		src, err := dataset.OpenFiles([]string{name}, f, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer src.Close()
		sc := src.Schema()
		var got [2][]int64
		for i := range src.Chunks() {
			ch, err := src.ReadChunk(context.Background(), i)
			if err != nil {
				t.Fatalf("%s: chunk %d: %v", what, i, err)
			}
			for k, name := range []string{"when.npy", "span.npy"} {
				j := sc.Index(name)
				if j < 0 || sc.Streams[j].Type != schema.Streams[k].Type || sc.Streams[j].Dim != schema.Streams[k].Dim {
					t.Fatalf("%s: streams %v", what, sc.Streams)
				}
				for i := range ch.Streams[j].Values.Len() {
					got[k] = append(got[k], ch.Streams[j].Values.Int64At(i))
				}
			}
		}
		if !slices.Equal(got[0], when) || !slices.Equal(got[1], span) {
			t.Fatalf("%s: %v %v, want %v %v", what, got[0], got[1], when, span)
		}
	}
	ctx := context.Background()
	dir := t.TempDir()
	first := map[string]string{}
	for _, a := range formats {
		ft, _ := format.Lookup(a)
		src, err := mlfeed.NewMemorySource(schema, c)
		if err != nil {
			t.Fatal(err)
		}
		out := outName(dir, "time-"+a, ft)
		if err := convert.File(ctx, src, out, &convert.Options{Format: ft}); err != nil {
			t.Fatalf("source -> %s: %v", a, err)
		}
		first[a] = out
		check("source -> "+a, out, a)
	}
	for _, a := range formats {
		for _, b := range formats {
			src, err := dataset.OpenFiles([]string{first[a]}, a, nil)
			if err != nil {
				t.Fatal(err)
			}
			fb, _ := format.Lookup(b)
			out := outName(dir, fmt.Sprintf("time-%s-to-%s", a, b), fb)
			err = convert.File(ctx, src, out, &convert.Options{Format: fb})
			src.Close()
			if err != nil {
				t.Fatalf("%s -> %s: %v", a, b, err)
			}
			check(a+" -> "+b, out, b)
		}
	}
}
