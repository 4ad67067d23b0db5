package mds

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// restore are the encodings that give back the test data sets' own columns where the streams'
// types allow several.
var restore = map[string]map[string]string{
	"scalars": {"f16": "float16", "int": "int", "j": "json", "sd": "str_decimal", "sf": "str_float", "si": "str_int"},
	"arrays": {"jpg": "jpeg", "png": "png", "pil": "pil", "lj": "list[jpeg]", "lp": "list[png]", "lpil": "list[pil]",
		"ja": "jpeg_array", "half": "ndarray:float16:2", "any": "ndarray"},
}

// rewrite reads testdata/name and writes it with the writer into a new directory.
func rewrite(t *testing.T, name string, o WriterOptions) string {
	t.Helper()
	src, err := Open(filepath.Join("testdata", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dir := t.TempDir()
	o.Encodings = restore[name]
	w, err := NewWriter(dir, src.Schema(), &o)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteAll(t, src, w)
	return dir
}

// TestWriteSameAsMDSWriter: the scalars data set written again with MDSWriter's settings is
// the same bytes as MDSWriter wrote, shards and index.json.
func TestWriteSameAsMDSWriter(t *testing.T) {
	dir := rewrite(t, "scalars", WriterOptions{SizeLimit: 1500, Hashes: []string{"sha1", "xxh64"}})
	ents, _ := os.ReadDir(filepath.Join("testdata", "scalars"))
	for _, e := range ents {
		a, _ := os.ReadFile(filepath.Join("testdata", "scalars", e.Name()))
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs at byte %d (%v)", e.Name(), testutil.FirstDiff(a, b), err)
		}
	}
}

// TestWriteRoundTrip: zstd shards with hashes read back to the same values, and the hashes are
// the files' digests.
func TestWriteRoundTrip(t *testing.T) {
	for _, comp := range []string{"zstd", "zstd:9", "gz", "snappy"} {
		dir := rewrite(t, "arrays", WriterOptions{SizeLimit: 2500, Compression: comp, Hashes: []string{"sha1", "xxh64"}})
		a, err := Open(filepath.Join("testdata", "arrays"), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(dir, &ReaderOptions{VerifyHashes: true})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(readAll(t, a), readAll(t, b)) {
			t.Errorf("%s: values differ", comp)
		}
		if !reflect.DeepEqual(a.index.Shards[0].ColumnEncodings, b.index.Shards[0].ColumnEncodings) {
			t.Errorf("%s: encodings %q, want %q", comp, b.index.Shards[0].ColumnEncodings, a.index.Shards[0].ColumnEncodings)
		}
		for _, s := range b.index.Shards {
			z, _ := os.ReadFile(filepath.Join(dir, s.ZipData.Basename))
			h := sha1.Sum(z)
			if s.ZipData.Hashes["sha1"] != hex.EncodeToString(h[:]) || len(s.ZipData.Hashes["xxh64"]) != 16 || *s.Compression != comp {
				t.Errorf("%s: %s: hashes %v", comp, s.ZipData.Basename, s.ZipData.Hashes)
			}
		}
		a.Close()
		b.Close()
	}
}

// TestWriteRefused: what MDS cannot hold is refused (exit 2), naming the stream.
func TestWriteRefused(t *testing.T) {
	cases := []struct {
		st  mlfeed.Stream
		enc string
	}{
		{mlfeed.Stream{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5}, ""},
		{mlfeed.Stream{Name: "b", Type: mlfeed.Bool, Dim: 1}, ""},
		{mlfeed.Stream{Name: "z", Type: mlfeed.Float32, Dim: 3, Shape: []int{3, 0, 1}}, ""},
		{mlfeed.Stream{Name: "x", Type: mlfeed.Int32, Dim: 1}, "str_int"},
		{mlfeed.Stream{Name: "t", Type: mlfeed.String, Dim: 1}, "jpeg"},
	}
	for _, c := range cases {
		_, err := NewWriter(t.TempDir(), mlfeed.Schema{Streams: []mlfeed.Stream{c.st}}, &WriterOptions{Encodings: map[string]string{c.st.Name: c.enc}})
		if c.enc == "" {
			_, err = NewWriter(t.TempDir(), mlfeed.Schema{Streams: []mlfeed.Stream{c.st}}, nil)
		}
		if !errors.Is(err, mlfeed.ErrUnsupported) {
			t.Errorf("%v %q: %v", c.st, c.enc, err)
		}
	}
	// A float32 that float16 cannot hold.
	w, _ := NewWriter(t.TempDir(), mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "f", Type: mlfeed.Float32, Dim: 1}}}, &WriterOptions{Encodings: map[string]string{"f": "float16"}})
	v := mlfeed.NewBuffer(mlfeed.Float32, 1)
	v.Float32s()[0] = 0.1
	if err := w.WriteChunk(&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: v}}}); !errors.Is(err, mlfeed.ErrRange) {
		t.Errorf("0.1 as float16: %v", err)
	}
}

// TestMosaicReads: MosaicML Streaming's own MDSReader reads what the writer wrote to the same
// samples as it reads from MDSWriter's files. It needs Streaming's source (STREAMING_SRC, see
// testdata/mosaic.py) and Debian's python3-zstd, python3-xxhash, python3-brotli,
// python3-snappy, python3-pil.
func TestMosaicReads(t *testing.T) {
	if os.Getenv("STREAMING_SRC") == "" {
		t.Skip("skipped: set STREAMING_SRC to a checkout of github.com/mosaicml/streaming to check with its MDSReader")
	}
	py := testutil.Python(t, "numpy", "PIL", "zstd", "xxhash", "brotli", "snappy", "typing_extensions")
	peer := func(dir string) []byte {
		cmd := exec.Command(py, filepath.Join("testdata", "peer.py"), dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("peer.py %s: %v", dir, err)
		}
		return out
	}
	for _, c := range []struct {
		name string
		o    WriterOptions
	}{
		{"scalars", WriterOptions{SizeLimit: 1000, Hashes: []string{"md5", "sha256", "xxh64"}}},
		{"arrays", WriterOptions{Compression: "zstd:7", Hashes: []string{"sha1"}}},
		{"arrays", WriterOptions{Compression: "gz:4"}},
		{"arrays", WriterOptions{Compression: "snappy"}},
	} {
		orig := t.TempDir()
		if err := os.CopyFS(orig, os.DirFS(filepath.Join("testdata", c.name))); err != nil {
			t.Fatal(err)
		}
		want := peer(orig)
		got := peer(rewrite(t, c.name, c.o))
		if !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s %+v: Streaming reads mlfeed's files differently at byte %d", c.name, c.o, testutil.FirstDiff(got, want))
		}
	}
}

// TestRawSamples: for a mapped shard of fixed-size columns, RawSamples describes where each
// sample's values lie, the same bytes the decoded chunk holds; shards of varying samples and
// compressed ones are decoded instead.
func TestRawSamples(t *testing.T) {
	plain := t.TempDir()
	src, _ := Open(filepath.Join("testdata", "scalars"), nil)
	sel, err := mlfeed.Select(src, "f32", "i16", "u64")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := NewWriter(plain, sel.Schema(), &WriterOptions{SizeLimit: 300})
	testutil.WriteAll(t, sel, w)
	src.Close()
	rd, err := Open(plain, &ReaderOptions{ChunkSize: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sc := rd.Schema()
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		for s, st := range sc.Streams {
			b, off, stride, swap, ok := rd.RawSamples(i, s)
			if !ok || swap != 0 || stride != 14 {
				t.Fatalf("chunk %d stream %d: ok %v stride %d", i, s, ok, stride)
			}
			sz := st.Type.Size()
			for q := 0; q < c.Sequences; q++ {
				if !bytes.Equal(b[off+q*stride:off+q*stride+sz], c.Streams[s].Values.Bytes[q*sz:(q+1)*sz]) {
					t.Fatalf("chunk %d stream %s sample %d differs", i, st.Name, q)
				}
			}
		}
	}
	for _, name := range []string{"scalars", "arrays"} {
		rd, _ := Open(filepath.Join("testdata", name), nil)
		if _, _, _, _, ok := rd.RawSamples(0, 1); ok {
			t.Errorf("%s: RawSamples for samples of varying size", name)
		}
		rd.Close()
	}
}

// bytesChunk is a chunk of one bytes stream whose sequences hold counts[q] values.
func bytesChunk(counts ...int) *mlfeed.Chunk {
	d := mlfeed.StreamData{SeqStart: []int64{0}, Values: mlfeed.Buffer{Type: mlfeed.Bytes}}
	n := mlfeed.NewBuffer(mlfeed.Int32, len(counts))
	for q, k := range counts {
		for e := 0; e < k; e++ {
			d.Values.Strings = append(d.Values.Strings, "\xff\xd8\xff"+strings.Repeat("x", q+e))
		}
		d.SeqStart = append(d.SeqStart, int64(len(d.Values.Strings)))
		n.Int32s()[q] = int32(q)
	}
	one := make([]int64, len(counts)+1)
	for q := range one {
		one[q] = int64(q)
	}
	return &mlfeed.Chunk{Sequences: len(counts), Streams: []mlfeed.StreamData{d, {SeqStart: one, Values: n}}}
}

// TestLateList: a bytes stream whose first chunk holds one value per sequence and a later
// one several becomes list[jpeg], the samples buffered laid out again; once a shard is
// written, that is an error naming the encoding to ask for.
func TestLateList(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "img", Type: mlfeed.Bytes, Dim: 1}, {Name: "n", Type: mlfeed.Int32, Dim: 1}}}
	dir := t.TempDir()
	w, err := NewWriter(dir, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*mlfeed.Chunk{bytesChunk(1, 1, 1), bytesChunk(2, 0, 1)} {
		if err := w.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if enc := rd.index.Shards[0].ColumnEncodings; enc[0] != "list[jpeg]" {
		t.Fatalf("encodings %q", enc)
	}
	got := readAll(t, rd)
	var counts []int
	for _, s := range got {
		counts = append(counts, len(s["img"]))
	}
	if !reflect.DeepEqual(counts, []int{1, 1, 1, 2, 0, 1}) || got[2]["img"][0][0] != "\xff\xd8\xffxx" || got[5]["n"][0][0] != int64(2) {
		t.Fatalf("counts %v, %v", counts, got)
	}
	// With a shard written first: an error.
	w, _ = NewWriter(t.TempDir(), sc, &WriterOptions{SizeLimit: 60})
	w.WriteChunk(bytesChunk(1, 1, 1, 1, 1, 1))
	if err := w.WriteChunk(bytesChunk(2)); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "encodings=img:list[jpeg]") {
		t.Fatalf("late list: %v", err)
	}
}
