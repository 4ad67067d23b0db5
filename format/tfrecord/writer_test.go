package tfrecord_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/npy"
	_ "github.com/mlfeed/mlfeed/format/parquet"
	"github.com/mlfeed/mlfeed/format/tfrecord"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// mixed returns a source of every type TFRecord holds, with streams named so that their
// sorted order (the Reader's) is their order here: one sample per sequence but for d_tokens,
// scalar samples of varying count (none in some sequences).
func mixed(t testing.TB, n int) *mlfeed.MemorySource {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "a_image", Type: mlfeed.Uint8, Dim: 4, Shape: []int{2, 2}},
		{Name: "b_label", Type: mlfeed.Int64, Dim: 1},
		{Name: "c_score", Type: mlfeed.Float32, Dim: 3},
		{Name: "d_tokens", Type: mlfeed.Int32, Dim: 1},
		{Name: "e_jpeg", Type: mlfeed.Bytes, Dim: 1},
		{Name: "f_text", Type: mlfeed.String, Dim: 1},
		{Name: "g_flag", Type: mlfeed.Bool, Dim: 1},
		{Name: "h_big", Type: mlfeed.Uint64, Dim: 1},
	}}
	one := make([]int64, n+1)
	for q := range one {
		one[q] = int64(q)
	}
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, len(sc.Streams))}
	img := mlfeed.NewBuffer(mlfeed.Uint8, 4*n)
	lab := mlfeed.NewBuffer(mlfeed.Int64, n)
	score := mlfeed.NewBuffer(mlfeed.Float32, 3*n)
	flag := mlfeed.NewBuffer(mlfeed.Bool, n)
	big := mlfeed.NewBuffer(mlfeed.Uint64, n)
	var tok []byte
	tokStart := []int64{0}
	jpeg := mlfeed.Buffer{Type: mlfeed.Bytes}
	text := mlfeed.Buffer{Type: mlfeed.String}
	for q := 0; q < n; q++ {
		for k := 0; k < 4; k++ {
			img.Bytes[4*q+k] = byte(q*7 + k)
		}
		lab.Int64s()[q] = int64(q) - 3
		for k := 0; k < 3; k++ {
			score.Float32s()[3*q+k] = float32(q) / float32(k+1)
		}
		score.Float32s()[0] = float32(math.Inf(-1))
		flag.Bytes[q] = byte(q % 2)
		big.Uint64s()[q] = math.MaxInt64 - uint64(q)
		for k := 0; k < q%4; k++ {
			tok = binary.LittleEndian.AppendUint32(tok, uint32(int32(-q*k)))
		}
		tokStart = append(tokStart, int64(len(tok)/4))
		jpeg.Strings = append(jpeg.Strings, string([]byte{0xff, 0xd8, byte(q), 0}))
		text.Strings = append(text.Strings, fmt.Sprintf("héllo %d", q))
	}
	toks := mlfeed.NewBuffer(mlfeed.Int32, len(tok)/4)
	copy(toks.Bytes, tok)
	c.Streams = []mlfeed.StreamData{
		{SeqStart: one, Values: img}, {SeqStart: one, Values: lab}, {SeqStart: one, Values: score},
		{SeqStart: tokStart, Values: toks}, {SeqStart: one, Values: jpeg}, {SeqStart: one, Values: text},
		{SeqStart: one, Values: flag}, {SeqStart: one, Values: big},
	}
	src, err := mlfeed.NewMemorySource(sc, c)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func writeFile(t *testing.T, src mlfeed.Source, path string, opts *tfrecord.WriterOptions) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tfrecord.NewWriter(f, src.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteAll(t, src, w)
}

// What the Writer writes, Google's protobuf library parses as tf.train.Example (and
// SequenceExample) with the values written, and the Reader reads back the same data, for
// every compression.
func TestWriteExample(t *testing.T) {
	py := testutil.Python(t, "google.protobuf", "crc32c")
	dir := t.TempDir()
	src := mixed(t, 9)
	for _, comp := range []string{"none", "gzip", "zlib"} {
		for _, mode := range []string{"example", "sequence_example"} {
			t.Run(comp+"/"+mode, func(t *testing.T) {
				path := filepath.Join(dir, comp+mode+".tfrecord")
				writeFile(t, src, path, &tfrecord.WriterOptions{Compression: comp, Records: mode})
				out, err := exec.Command(py, filepath.Join("testdata", "pbcheck.py"), "decode", path, comp, mode).CombinedOutput()
				if err != nil {
					t.Fatalf("protobuf: %v\n%s", err, out)
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				if len(lines) != 9 {
					t.Fatalf("protobuf parsed %d records", len(lines))
				}
				// Spot checks on what protobuf saw, record 5.
				l := lines[5]
				for _, want := range []string{`"b_label"`, `"int64_list", "values": [2]`, `"h_big"`, fmt.Sprint(uint64(math.MaxInt64 - 5)), `"e_jpeg"`, `"/9gFAA=="`, `"aMOpbGxvIDU="`} {
					if !strings.Contains(l, want) {
						t.Errorf("record 5 as protobuf parses it lacks %s:\n%s", want, l)
					}
				}
				back, err := tfrecord.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer back.Close()
				if err := mlfeed.Diff(context.Background(), src, back); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// Values TFRecord cannot hold are refused, with errors that mean exit 2 and name the stream.
func TestWriteRefuses(t *testing.T) {
	cases := []struct {
		st   mlfeed.Stream
		want string
	}{
		{mlfeed.Stream{Name: "x", Type: mlfeed.Float64, Dim: 1}, "float64"},
		{mlfeed.Stream{Name: "x", Type: mlfeed.Complex64, Dim: 1}, "complex64"},
		{mlfeed.Stream{Name: "x", Type: mlfeed.Float32, Dim: 5, Storage: mlfeed.Sparse}, "sparse"},
		{mlfeed.Stream{Name: "x", Type: mlfeed.Float32, Dim: 0}, "varying size"},
	}
	for _, tc := range cases {
		_, err := tfrecord.NewWriter(&bytes.Buffer{}, mlfeed.Schema{Streams: []mlfeed.Stream{tc.st}}, nil)
		if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v", tc.st, err)
		}
	}
	// uint64 beyond int64, and several samples of dim 2 in an Example.
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "u", Type: mlfeed.Uint64, Dim: 1}}}
	b := mlfeed.NewBuffer(mlfeed.Uint64, 1)
	b.Uint64s()[0] = 1 << 63
	w, _ := tfrecord.NewWriter(&bytes.Buffer{}, sc, nil)
	err := w.WriteChunk(&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: b}}})
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "9223372036854775808") {
		t.Errorf("uint64 2^63: %v", err)
	}
	sc = mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "v", Type: mlfeed.Float32, Dim: 2}}}
	w, _ = tfrecord.NewWriter(&bytes.Buffer{}, sc, nil)
	err = w.WriteChunk(&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 2}, Values: mlfeed.NewBuffer(mlfeed.Float32, 4)}}})
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "sequence_example") {
		t.Errorf("multi-sample Example: %v", err)
	}
}

// Round trips through the registry and package convert: IDX -> TFRecord -> IDX, npz and
// Parquet give back the same values, and TFRecord -> Parquet -> TFRecord keeps bytes.
func TestRoundTrips(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")
	src, err := dataset.OpenFiles([]string{labels}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tf := filepath.Join(dir, "labels.tfrecord.gz")
	if err := convert.File(ctx, src, tf, &convert.Options{}); err != nil {
		t.Fatal(err)
	}
	mid, err := dataset.OpenFiles([]string{tf}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	if err := mlfeed.Diff(ctx, src, mid); err != nil {
		t.Fatalf("idx -> tfrecord: %v", err)
	}
	for _, ext := range []string{".idx", ".npz", ".parquet"} {
		out := filepath.Join(dir, "back"+ext)
		// int64 back to IDX needs the type IDX holds: the conversion is asked for.
		opts := &convert.Options{}
		if ext == ".idx" {
			opts.Type = mlfeed.Uint8
		}
		if err := convert.File(ctx, mid, out, opts); err != nil {
			t.Fatalf("tfrecord -> %s: %v", ext, err)
		}
		back, err := dataset.OpenFiles([]string{out}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mlfeed.Diff(ctx, src, back); err != nil {
			t.Errorf("tfrecord -> %s: %v", ext, err)
		}
		back.Close()
	}
	// Bytes and sequences through Parquet and back.
	seq, err := dataset.OpenFiles([]string{filepath.Join("testdata", "seq_eval.tfrecord.gz")}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	pq := filepath.Join(dir, "seq.parquet")
	if err := convert.File(ctx, seq, pq, &convert.Options{}); err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(dir, "seq.tfrecord")
	pqs, err := dataset.OpenFiles([]string{pq}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pqs.Close()
	if err := convert.File(ctx, pqs, back, &convert.Options{Write: format.WriteOptions{Params: map[string]string{"records": "sequence_example"}}}); err != nil {
		t.Fatal(err)
	}
	again, err := dataset.OpenFiles([]string{back}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := mlfeed.Diff(ctx, seq, again); err != nil {
		t.Errorf("tfrecord -> parquet -> tfrecord: %v", err)
	}
}
