package idx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/byteswap"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

var ctx = context.Background()

// readAllValues returns the concatenated little-endian values of every chunk.
func readAllValues(t testing.TB, s mlfeed.Source) []byte {
	t.Helper()
	var out []byte
	for i := range s.Chunks() {
		c, err := s.ReadChunk(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(ptr(s.Schema())); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Streams[0].Values.Bytes...)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestMNISTRealFiles(t *testing.T) {
	for _, name := range []string{"t10k-images-idx3-ubyte", "t10k-images-idx3-ubyte.gz"} {
		t.Run(name, func(t *testing.T) { mnistRealFile(t, name) })
	}
}

// mnistFile returns a real MNIST file and whether it is the whole set (from the shared corpus)
// rather than the repository's first 2000 records (testdata/mnist/README.md).
func mnistFile(t *testing.T, name string) (string, bool) {
	p := testutil.Testdata(t, "mnist", name)
	d := testutil.SharedDir()
	return p, d != "" && strings.HasPrefix(p, filepath.Join(d, "testdata"))
}

func mnistRealFile(t *testing.T, name string) {
	p, whole := mnistFile(t, name)
	records := 10000
	if !whole {
		records = 2000
	}
	r, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.Type != mlfeed.Uint8 || len(h.Dims) != 3 || h.Dims[0] != records || h.Dims[1] != 28 || h.Dims[2] != 28 {
		t.Fatalf("%s: header %+v", name, h)
	}
	st := r.Schema().Streams[0]
	if st.Name != "features" || st.Dim != 784 || len(st.Shape) != 2 {
		t.Fatalf("%s: stream %+v", name, st)
	}
	if n, _ := mlfeed.Totals(r.Chunks()); n != int64(records) {
		t.Fatalf("%s: %d sequences", name, n)
	}
	r.Close()
}

// TestMNISTLabels checks the first labels and the class counts of the real label files.
func TestMNISTLabels(t *testing.T) {
	want := map[string][]byte{
		"t10k-labels-idx1-ubyte.gz":  {7, 2, 1, 0, 4, 1, 4, 9, 5, 9},
		"train-labels-idx1-ubyte.gz": {5, 0, 4, 1, 9, 2, 1, 3, 1, 4},
	}
	counts := map[string][10]int{
		"t10k-labels-idx1-ubyte.gz":  {980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009},
		"train-labels-idx1-ubyte.gz": {5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949},
	}
	for name, first := range want {
		t.Run(name, func(t *testing.T) { mnistLabels(t, name, first, counts[name]) })
	}
}

func mnistLabels(t *testing.T, name string, first []byte, counts [10]int) {
	{
		p, whole := mnistFile(t, name)
		if !whole {
			counts = [10]int{175, 234, 219, 207, 217, 179, 178, 205, 192, 194} // the first 2000
		}
		r, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st := r.Schema().Streams[0]; st.Name != "labels" || st.Dim != 1 {
			t.Fatalf("%s: stream %+v", name, st)
		}
		v := readAllValues(t, r)
		if !bytes.Equal(v[:10], first) {
			t.Errorf("%s: first labels %v, want %v", name, v[:10], first)
		}
		var got [10]int
		for _, l := range v {
			got[l]++
		}
		if got != counts {
			t.Errorf("%s: class counts %v, want %v", name, got, counts)
		}
		r.Close()
	}
}

// TestMNISTRoundTrip reads each real file and writes it back: the bytes must be identical to
// the uncompressed original (checked against the sha256 the corpus README gives, or, for the
// repository's first-2000-records copies used without the corpus, testdata/mnist/README.md's).
func TestMNISTRoundTrip(t *testing.T) {
	if _, err := os.Stat(filepath.Join(testutil.SharedDir(), "testdata", "mnist", "t10k-labels-idx1-ubyte.gz")); testutil.SharedDir() == "" || err != nil {
		for name, sum := range map[string]string{
			"t10k-images-idx3-ubyte.gz": "3f6bd66dee48df299584c67669bceee490faa25f931496bd7473b42106d7daed",
			"t10k-labels-idx1-ubyte.gz": "7b098e5f6a3065807cebeabf36fb1724a8aff19f2673ac08b4923e0e8c715bce",
		} {
			t.Run(name, func(t *testing.T) { mnistRoundTrip(t, name, sum) })
		}
		return
	}
	sums := map[string]string{
		"train-images-idx3-ubyte.gz": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
		"train-labels-idx1-ubyte.gz": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
		"t10k-images-idx3-ubyte":     "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
		"t10k-images-idx3-ubyte.gz":  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
		"t10k-labels-idx1-ubyte.gz":  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
	}
	for name, sum := range sums {
		if testing.Short() && name == "train-images-idx3-ubyte.gz" {
			continue
		}
		t.Run(name, func(t *testing.T) { mnistRoundTrip(t, name, sum) })
	}
}

func mnistRoundTrip(t *testing.T, name, sum string) {
	{
		r, err := Open(testutil.Testdata(t, "mnist", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sink, err := NewSink(&out, r.Schema(), r.Header().Records(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Chunks() {
			c, err := r.ReadChunk(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.WriteChunk(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(out.Bytes())
		if got := hex.EncodeToString(h[:]); got != sum {
			t.Errorf("%s: written bytes have sha256 %s, want %s", name, got, sum)
		}
		r.Close()
	}
}

// randomFile builds an IDX file of type t and dims with random values, returning the file and
// the values in little-endian layout.
func randomFile(t testing.TB, et mlfeed.ElemType, dims []int, gz bool) (file, values []byte) {
	t.Helper()
	h := Header{Type: et, Dims: dims}
	n, _ := h.PayloadSize()
	rng := rand.New(rand.NewPCG(uint64(et), uint64(len(dims))))
	values = make([]byte, n)
	for i := range values {
		values[i] = byte(rng.Uint32())
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, &WriterOptions{Gzip: gz})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(mlfeed.Buffer{Type: et, Bytes: values}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), values
}

func TestEveryTypeAndRank(t *testing.T) {
	types := []mlfeed.ElemType{mlfeed.Uint8, mlfeed.Int8, mlfeed.Int16, mlfeed.Int32, mlfeed.Float32, mlfeed.Float64}
	shapes := [][]int{{7}, {5, 3}, {4, 3, 2}, {3, 2, 2, 2}, {2, 1, 1, 1, 1, 3}, {0, 4}, {3, 0}}
	tmp := t.TempDir()
	for _, et := range types {
		for _, dims := range shapes {
			for _, gz := range []bool{false, true} {
				file, values := randomFile(t, et, dims, gz)
				if !Match(file) {
					t.Fatalf("%s %v gz=%v: Match is false", et, dims, gz)
				}
				name := filepath.Join(tmp, "f.idx")
				if err := os.WriteFile(name, file, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, opts := range []*ReaderOptions{nil, {NoMmap: true, ChunkSize: 7}, {MaxMemory: 1, ChunkSize: 1}} {
					r, err := Open(name, opts)
					if err != nil {
						t.Fatalf("%s %v gz=%v: %v", et, dims, gz, err)
					}
					got := readAllValues(t, r)
					if !bytes.Equal(got, values) {
						t.Fatalf("%s %v gz=%v opts=%+v: values differ", et, dims, gz, opts)
					}
					if n, _ := mlfeed.Totals(r.Chunks()); n != int64(dims[0]) {
						t.Fatalf("%s %v: %d sequences", et, dims, n)
					}
					r.Close()
				}
			}
		}
	}
}

func TestWriterRoundTripValues(t *testing.T) {
	// The writer takes little-endian values and writes big-endian: check one value per type.
	b := mlfeed.NewBuffer(mlfeed.Int16, 2)
	b.SetFloat64(0, -2)
	b.SetFloat64(1, 258)
	var out bytes.Buffer
	w, err := NewWriter(&out, Header{Type: mlfeed.Int16, Dims: []int{2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0x0B, 1, 0, 0, 0, 2, 0xFF, 0xFE, 0x01, 0x02}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("got % x, want % x", out.Bytes(), want)
	}
}

func TestBadFiles(t *testing.T) {
	good, _ := randomFile(t, mlfeed.Int32, []int{3, 2}, false)
	huge := []byte{0, 0, 0x0D, 1, 0xFF, 0xFF, 0xFF, 0xFF} // 16 GiB announced, none present
	cases := []struct {
		name   string
		data   []byte
		sent   error
		offset int64
	}{
		{"empty", nil, ErrTruncated, 0},
		{"short magic", []byte{0, 0}, ErrTruncated, 2},
		{"nonzero first byte", append([]byte{1}, good[1:]...), ErrFormat, 0},
		{"unknown type", append([]byte{0, 0, 0x0A}, good[3:]...), ErrFormat, 2},
		{"rank zero", []byte{0, 0, 8, 0}, ErrFormat, 3},
		{"truncated dims", good[:9], ErrTruncated, 9},
		{"truncated payload", good[:len(good)-1], ErrTruncated, int64(len(good) - 1)},
		{"trailing garbage", append(append([]byte{}, good...), 1, 2, 3), ErrFormat, int64(len(good))},
		{"huge claim", huge, ErrTruncated, 8},
		{"overflow", []byte{0, 0, 0x0E, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ErrFormat, 4},
	}
	for _, c := range cases {
		_, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), &ReaderOptions{FileName: "bad.idx"})
		if !errors.Is(err, c.sent) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.sent)
			continue
		}
		var pe *mlfeed.PosError
		if !errors.As(err, &pe) || pe.File != "bad.idx" || pe.Offset != c.offset {
			t.Errorf("%s: error %v does not name bad.idx at offset %d", c.name, err, c.offset)
		}
	}
}

func TestBadGzip(t *testing.T) {
	good, _ := randomFile(t, mlfeed.Uint8, []int{10, 10}, true)
	plain, _ := randomFile(t, mlfeed.Uint8, []int{10, 10}, false)
	var longer bytes.Buffer
	zw := gzip.NewWriter(&longer)
	zw.Write(plain)
	zw.Write([]byte{9, 9})
	zw.Close()
	cases := map[string]struct {
		data []byte
		sent error
	}{
		"truncated stream":        {good[:len(good)-12], mlfeed.ErrTruncated},
		"trailing decompressed":   {longer.Bytes(), ErrFormat},
		"garbage after gzip":      {append(append([]byte{}, good...), bytes.Repeat([]byte("x"), 32)...), ErrFormat},
		"corrupt checksum":        {append(append([]byte{}, good[:len(good)-8]...), 0, 0, 0, 0, 100, 0, 0, 0), ErrFormat},
		"truncated in the header": {good[:12], ErrTruncated},
	}
	for name, c := range cases {
		r, err := NewGzipReader(bytes.NewReader(c.data), int64(len(c.data)), &ReaderOptions{FileName: "bad.idx.gz"}, nil)
		if err == nil {
			_, err = r.ReadChunk(ctx, 0)
		}
		if !errors.Is(err, c.sent) {
			t.Errorf("%s: error %v, want %v", name, err, c.sent)
		}
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte("bad.idx.gz")) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

func TestSinkRefusesWhatIDXCannotHold(t *testing.T) {
	cases := map[string]mlfeed.Schema{
		"two streams": {Streams: []mlfeed.Stream{{Name: "a", Type: mlfeed.Uint8, Dim: 1}, {Name: "b", Type: mlfeed.Uint8, Dim: 1}}},
		"sparse":      {Streams: []mlfeed.Stream{{Name: "a", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10}}},
		"text":        {Streams: []mlfeed.Stream{{Name: "a", Type: mlfeed.String, Dim: 1}}},
		"uint32":      {Streams: []mlfeed.Stream{{Name: "a", Type: mlfeed.Uint32, Dim: 1}}},
		"variable":    {Streams: []mlfeed.Stream{{Name: "a", Type: mlfeed.Float32}}},
	}
	for name, sc := range cases {
		if _, err := NewSink(io.Discard, sc, 1, nil); !errors.Is(err, mlfeed.ErrUnsupported) {
			t.Errorf("%s: error %v, want ErrUnsupported", name, err)
		}
	}
	// A sequence of two samples is not a record.
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "a", Type: mlfeed.Uint8, Dim: 1}}}
	s, err := NewSink(io.Discard, sc, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 2}, Values: mlfeed.NewBuffer(mlfeed.Uint8, 2)}}}
	if err := s.WriteChunk(c); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("two-sample sequence: error %v, want ErrUnsupported", err)
	}
}

func TestSpoolSinkUnknownCount(t *testing.T) {
	file, values := randomFile(t, mlfeed.Float32, []int{9, 2, 2}, false)
	r, err := NewReader(bytes.NewReader(file), int64(len(file)), &ReaderOptions{FileName: "x", ChunkSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, gz := range []string{"none", "gzip"} {
		var out bytes.Buffer
		sink, err := newFileSink(&out, r.Schema(), "x.idx", gz, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Chunks() {
			c, _ := r.ReadChunk(ctx, i)
			if err := sink.WriteChunk(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		var back *Reader
		if gz == "gzip" {
			back, err = NewGzipReader(bytes.NewReader(out.Bytes()), int64(out.Len()), &ReaderOptions{FileName: "y"}, nil)
		} else {
			back, err = NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()), &ReaderOptions{FileName: "y"})
			if !bytes.Equal(out.Bytes(), file) {
				t.Errorf("spooled plain output differs from the original")
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllValues(t, back); !bytes.Equal(got, values) {
			t.Errorf("%s: values differ after spooling", gz)
		}
	}
	// A spool that cannot be made (or a full disk) says it was the temporary file.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	sink, err := newFileSink(io.Discard, r.Schema(), "x.idx", "none", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.ReadChunk(ctx, 0)
	if err := sink.WriteChunk(c); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("no temporary directory: %v, want an error about the temporary file", err)
	}
}

func TestDecodeHeader(t *testing.T) {
	for _, gz := range []bool{false, true} {
		file, _ := randomFile(t, mlfeed.Float64, []int{2, 3, 4}, gz)
		h, err := DecodeHeader(bytes.NewReader(file), "x")
		if err != nil || h.Type != mlfeed.Float64 || len(h.Dims) != 3 || h.Dims[2] != 4 {
			t.Errorf("gz=%v: %+v, %v", gz, h, err)
		}
	}
}

// TestReadChunkReuse decodes every chunk into the memory of the one before: the values are
// ReadChunk's, the memory is reused for swapped types, and the mapped bytes of uint8 files are
// never written to. The real MNIST test images go the same way.
func TestReadChunkReuse(t *testing.T) {
	t.Run("mnist", func(t *testing.T) {
		r, err := Open(testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte"), &ReaderOptions{ChunkSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var prev *mlfeed.Chunk
		for i := range r.Chunks() {
			want, err := r.ReadChunk(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			if prev, err = r.ReadChunkReuse(context.Background(), i, prev); err != nil || !bytes.Equal(prev.Streams[0].Values.Bytes, want.Streams[0].Values.Bytes) {
				t.Fatalf("chunk %d: ReadChunkReuse differs from ReadChunk (%v)", i, err)
			}
		}
	})
	for _, et := range []mlfeed.ElemType{mlfeed.Uint8, mlfeed.Int16, mlfeed.Float32, mlfeed.Float64} {
		file, values := randomFile(t, et, []int{50, 3, 2}, false)
		name := filepath.Join(t.TempDir(), "f.idx")
		if err := os.WriteFile(name, file, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(name, &ReaderOptions{ChunkSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		var prev *mlfeed.Chunk
		var got []byte
		for i := range r.Chunks() {
			want, err := r.ReadChunk(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			var before *byte
			if prev != nil && len(prev.Streams[0].Values.Bytes) > 0 {
				before = &prev.Streams[0].Values.Bytes[0]
			}
			c, err := r.ReadChunkReuse(context.Background(), i, prev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.Streams[0].Values.Bytes, want.Streams[0].Values.Bytes) || c.Sequences != want.Sequences {
				t.Fatalf("%s chunk %d: ReadChunkReuse differs from ReadChunk", et, i)
			}
			if reused := &c.Streams[0].Values.Bytes[0] == before; before != nil && reused != (et.Size() > 1) {
				t.Fatalf("%s chunk %d: memory reused %v", et, i, reused)
			}
			got = append(got, c.Streams[0].Values.Bytes...)
			prev = c
		}
		if !bytes.Equal(got, values) {
			t.Fatalf("%s: values differ from the file's", et)
		}
		swapped := make([]byte, len(values))
		if et.Size() > 1 {
			byteswap.Into(swapped, values, et.Size())
		} else {
			copy(swapped, values)
		}
		if raw, _ := r.Payload(0, 50); !bytes.Equal(raw, swapped) {
			t.Fatalf("%s: the file's bytes changed", et)
		}
		r.Close()
	}
}

// TestParams: the registry's format options, snake_case keys and the old camelCase spellings.
func TestParams(t *testing.T) {
	for _, params := range []map[string]string{
		{"name": "pixels", "chunk_size": "7", "max_memory": "1", "mmap": "false"},
		{"name": "pixels", "chunkSize": "7", "maxMemory": "1", "mmap": "false"},
	} {
		o, err := parseOptions(params)
		if err != nil {
			t.Fatal(err)
		}
		if *o != (ReaderOptions{StreamName: "pixels", ChunkSize: 7, MaxMemory: 1, NoMmap: true}) {
			t.Errorf("%v: %+v", params, *o)
		}
	}
	for _, params := range []map[string]string{{"bogus": "1"}, {"chunk_size": "x"}, {"chunk_size": "1", "chunkSize": "2"}} {
		if _, err := parseOptions(params); !errors.Is(err, format.ErrUsage) {
			t.Errorf("%v: err = %v, want a usage error", params, err)
		}
	}
}

// TestGzipBudget: a gzip file whose payload is more than a quarter of the scheduler's memory
// budget (--memory) is decompressed into a temporary file, not held in memory; it was held
// whole up to 1 GiB whatever the budget.
func TestGzipBudget(t *testing.T) {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write([]byte{0, 0, 0x08, 2, 0, 0, 0x10, 0, 0, 0, 0x10, 0}) // ubyte, 4096 x 4096
	zw.Write(make([]byte, 4096*4096))
	zw.Close()
	path := filepath.Join(t.TempDir(), "z-ubyte.gz")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ft, _ := format.Lookup("idx")
	for _, c := range []struct {
		budget int64
		spill  bool
	}{{16 << 20, true}, {1 << 30, false}} {
		ctx := sched.WithContext(context.Background(), sched.New(1, c.budget))
		src, err := ft.Open(path, &format.Options{Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range src.Chunks() {
			ch, err := src.ReadChunk(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			n += ch.Sequences
		}
		_, spilled := src.(mlfeed.Detailer).Details()["decompressed_to"]
		if n != 4096 || spilled != c.spill {
			t.Errorf("budget %d: %d records, to a temporary file %v; want 4096, %v", c.budget, n, spilled, c.spill)
		}
		src.Close()
	}
}

// A gzip payload past MaxMemory that cannot go to a temporary file (a missing TMPDIR, a full
// disk) is an error naming the file and the temporary file, not invalid data.
func TestGzipNoTemp(t *testing.T) {
	file, _ := randomFile(t, mlfeed.Uint8, []int{50, 4}, true)
	name := filepath.Join(t.TempDir(), "f.idx.gz")
	if err := os.WriteFile(name, file, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	r, err := Open(name, &ReaderOptions{MaxMemory: 16})
	if err == nil {
		_, err = r.ReadChunk(context.Background(), 0)
		r.Close()
	}
	if err == nil || errors.Is(err, mlfeed.ErrFormat) || !errors.Is(err, os.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), name+": ") || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("no temporary directory: %v; want an error naming %s and the temporary file, not invalid data", err, name)
	}
}
