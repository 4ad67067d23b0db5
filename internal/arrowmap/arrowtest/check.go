package arrowtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/arrowcheck"
)

// Reader is what the shared checks need of a format package's *Reader.
type Reader interface {
	mlfeed.Source
	ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error)
	SequenceLengths(i int) ([]int64, error)
}

// OpenBytes reads data, named name, with the package's default reader options.
type OpenBytes func(data []byte, name string) (Reader, error)

// Create makes a writer of schema to w with the package's default writer options.
type Create func(w io.Writer, schema mlfeed.Schema) (mlfeed.Sink, error)

// Write writes chunks through create's sink and returns the bytes written.
func Write(tb testing.TB, schema mlfeed.Schema, create Create, chunks ...*mlfeed.Chunk) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := create(&buf, schema)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range chunks {
		if err := w.WriteChunk(c); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Fuzz is the body of a reader's fuzz target: whatever open decodes must write (through
// create) and decode again to the same rows.
func Fuzz(t *testing.T, data []byte, open OpenBytes, create Create) {
	rd, err := open(data, "fuzz")
	if err != nil {
		return
	}
	defer rd.Close()
	if n, _ := mlfeed.Totals(rd.Chunks()); n > 1<<16 {
		return // the check below would hold every row in memory
	}
	var chunks []*mlfeed.Chunk
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			return
		}
		chunks = append(chunks, c)
	}
	var buf bytes.Buffer
	w, err := create(&buf, rd.Schema())
	if err != nil {
		if !errors.Is(err, mlfeed.ErrUnsupported) {
			t.Fatalf("writer refuses a schema it read: %v", err)
		}
		return
	}
	for _, c := range chunks {
		if err := w.WriteChunk(c); err != nil {
			if errors.Is(err, mlfeed.ErrUnsupported) {
				return // e.g. a chunk that does not fit the first chunk's layout
			}
			t.Fatalf("writing back: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := open(buf.Bytes(), "back")
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	defer back.Close()
	a, err := arrowcheck.Rows(rd, "id")
	if err != nil {
		t.Fatal(err)
	}
	b, err := arrowcheck.Rows(back, "id")
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if err := arrowcheck.Compare(b, a); err != nil {
		t.Fatalf("round trip: %v", err)
	}
}

// CheckRead checks what rd reads against the schema and chunks it was written from: every
// stream, the chunk table, every value, the ids of the last chunk, and a reuse of that chunk's
// memory for the first. label names the case in messages.
func CheckRead(t *testing.T, label string, rd Reader, schema mlfeed.Schema, chunks []*mlfeed.Chunk) {
	t.Helper()
	for i, got := range rd.Schema().Streams {
		if !reflect.DeepEqual(got, schema.Streams[i]) {
			t.Errorf("%s: stream\n got %#v\nwant %#v", label, got, schema.Streams[i])
		}
	}
	got := rd.Chunks()
	same := len(got) == len(chunks)
	for i := 0; same && i < len(got); i++ {
		same = got[i].Sequences == chunks[i].Sequences
	}
	if !same {
		t.Errorf("%s: chunks %+v", label, got)
	}
	mem, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	if err := mlfeed.Diff(context.Background(), mem, rd); err != nil {
		t.Errorf("%s: %v", label, err)
	}
	last := len(chunks) - 1
	c, err := rd.ReadChunk(context.Background(), last)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.IDs, chunks[last].IDs) {
		t.Errorf("ids %v, want %v", c.IDs, chunks[last].IDs)
	}
	// Reuse decodes the same values into the previous chunk's memory.
	c2, err := rd.ReadChunkReuse(context.Background(), 0, c)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := mlfeed.NewMemorySource(schema, c2)
	want, _ := mlfeed.NewMemorySource(schema, chunks[0])
	if err := mlfeed.Diff(context.Background(), want, one); err != nil {
		t.Errorf("reuse: %v", err)
	}
}

// Sequences returns a schema and a chunk of three sequences of several samples: dense, sparse
// (with an empty sequence) and one of one sample each.
func Sequences() (mlfeed.Schema, *mlfeed.Chunk) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 2},
		{Name: "y", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5},
		{Name: "l", Type: mlfeed.Int32, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 2, 2, 5}, Values: F32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		{SeqStart: []int64{0, 1, 3, 3}, SampleStart: []int64{0, 2, 2, 3}, Indices: []int32{0, 4, 2}, Values: F32(1, 2, 3)},
		{SeqStart: []int64{0, 1, 2, 3}, Values: Raw(mlfeed.Int32, 3, func(p []byte) { p[0], p[4], p[8] = 7, 8, 9 })},
	}}
	return schema, c
}

// CheckSequences checks that rd reads back Sequences' schema and chunk, with its lengths.
func CheckSequences(t *testing.T, rd Reader) {
	t.Helper()
	schema, c := Sequences()
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

// CheckNull checks that reading rd's first chunk, whose column "x" holds a null in row 3, is
// refused with the package's sentinel and mlfeed.ErrUnsupported.
func CheckNull(t *testing.T, rd Reader, sentinel error) {
	t.Helper()
	_, err := rd.ReadChunk(context.Background(), 0)
	if !errors.Is(err, sentinel) || !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `column "x", row 3: null`) {
		t.Errorf("got %v", err)
	}
}

// CheckPeerNull has the peer write a file with a null at path and checks that reading it is
// refused naming the column, the row and the file.
func CheckPeerNull(t *testing.T, path string, open func(name string) (Reader, error)) {
	arrowcheck.Require(t)
	if _, err := arrowcheck.Run(t, "write-null", path); err != nil {
		t.Fatal(err)
	}
	rd, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = arrowcheck.Rows(rd, "id")
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `column "x", row 3: null`) || !strings.Contains(err.Error(), path) {
		t.Errorf("got %v", err)
	}
}

// PeerData returns what the peer tests write (Schema, two Chunks) and its rows as the peer
// should read them; it skips the test where the peer is not installed.
func PeerData(t *testing.T) (mlfeed.Schema, []*mlfeed.Chunk, []arrowcheck.Row) {
	arrowcheck.Require(t)
	schema := Schema()
	chunks := []*mlfeed.Chunk{Chunk(7, 1), Chunk(11, 2)}
	mem, _ := mlfeed.NewMemorySource(schema, chunks...)
	want, err := arrowcheck.Rows(mem, "id")
	if err != nil {
		t.Fatal(err)
	}
	return schema, chunks, want
}

// ReadAll checks that every chunk of the files matching pattern decodes.
func ReadAll(t *testing.T, pattern string, open func(name string) (Reader, error)) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	for _, f := range files {
		rd, err := open(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rd.Chunks() {
			if _, err := rd.ReadChunk(context.Background(), i); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
		rd.Close()
	}
}

// CheckOpenReader opens file through the registry's OpenReader of the named format, as
// objects in object storage are (from an io.ReaderAt), and checks that it holds rows rows.
func CheckOpenReader(t *testing.T, name, file string, rows int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ft, ok := format.Lookup(name)
	if !ok || ft.OpenReader == nil {
		t.Fatal("no OpenReader registered")
	}
	src, err := ft.OpenReader(bytes.NewReader(data), int64(len(data)), "object", &format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := arrowcheck.Rows(src, "id")
	if err != nil || len(got) != rows {
		t.Errorf("%d rows, %v", len(got), err)
	}
}

// ConcurrentReads reads every chunk of rd (written from Schema() and chunks) from several
// goroutines at once, as the minibatch workers do, and compares with chunks; run it with
// -race.
func ConcurrentReads(t *testing.T, rd Reader, chunks []*mlfeed.Chunk) {
	schema := Schema()
	mem, _ := mlfeed.NewMemorySource(schema, chunks...)
	want, err := arrowcheck.Rows(mem, "id")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]*mlfeed.Chunk, len(chunks))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev *mlfeed.Chunk
			for i := range got {
				c, err := rd.ReadChunkReuse(context.Background(), (i+g)%len(got), prev)
				if err != nil {
					t.Error(err)
					return
				}
				prev = c
			}
			for k := g; k < len(got); k += 4 {
				c, err := rd.ReadChunk(context.Background(), k)
				if err != nil {
					t.Error(err)
					return
				}
				got[k] = c
			}
		}()
	}
	wg.Wait()
	for i, c := range got {
		if c == nil {
			t.Fatalf("chunk %d not kept", i)
		}
	}
	back, _ := mlfeed.NewMemorySource(schema, got...)
	rows, err := arrowcheck.Rows(back, "id")
	if err != nil {
		t.Fatal(err)
	}
	if err := arrowcheck.Compare(rows, want); err != nil {
		t.Error(err)
	}
}

// BenchData returns MNIST-shaped data: n rows of 784 float32 values (mostly zeros, as
// images are) and a uint8 label, in chunks of 2048 rows, and the bytes of its values.
func BenchData(n int) (mlfeed.Schema, []*mlfeed.Chunk, int64) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Type: mlfeed.Float32, Dim: 784, Shape: []int{28, 28}},
		{Name: "labels", Type: mlfeed.Uint8, Dim: 1},
	}}
	var chunks []*mlfeed.Chunk
	var bytes int64
	for from := 0; from < n; from += 2048 {
		k := min(2048, n-from)
		seq := make([]int64, k+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		f := mlfeed.NewBuffer(mlfeed.Float32, k*784)
		v := f.Float32s()
		for i := range v {
			if (i*7+from)%5 == 0 {
				v[i] = float32(i%255) / 255
			}
		}
		l := mlfeed.NewBuffer(mlfeed.Uint8, k)
		for i := range l.Bytes {
			l.Bytes[i] = byte((from + i) % 10)
		}
		bytes += int64(len(f.Bytes) + len(l.Bytes))
		chunks = append(chunks, &mlfeed.Chunk{Sequences: k, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: f}, {SeqStart: seq, Values: l}}})
	}
	return schema, chunks, bytes
}

// BenchRead opens a reader with open and decodes every chunk, reusing memory, b.N times;
// n is the bytes of values one pass decodes.
func BenchRead(b *testing.B, n int64, open func() (Reader, error)) {
	b.SetBytes(n)
	for b.Loop() {
		rd, err := open()
		if err != nil {
			b.Fatal(err)
		}
		var prev *mlfeed.Chunk
		for i := range rd.Chunks() {
			if prev, err = rd.ReadChunkReuse(context.Background(), i, prev); err != nil {
				b.Fatal(err)
			}
		}
		rd.Close()
	}
}

// ConvertRoundTrip converts the file in to each of the middle formats (by extension) and back
// to back's extension through the registry, and checks that the data, the chunk table's
// counts and the schema survive every step. The caller imports the formats involved.
func ConvertRoundTrip(t *testing.T, in string, back string, middle ...string) {
	t.Helper()
	src := openAny(t, in)
	dir := t.TempDir()
	cur := src
	for i, ext := range append(middle, back) {
		out := filepath.Join(dir, "step"+string(rune('0'+i))+ext)
		if err := convert.File(context.Background(), cur, out, nil); err != nil {
			t.Fatalf("%s -> %s: %v", filepath.Base(in), ext, err)
		}
		cur = openAny(t, out)
		qa, na := mlfeed.Totals(src.Chunks())
		if qb, nb := mlfeed.Totals(cur.Chunks()); qa != qb || na != nb {
			t.Errorf("%s -> %s: chunk table counts %d sequences, %d samples; want %d, %d", filepath.Base(in), ext, qb, nb, qa, na)
		}
		if err := mlfeed.Diff(context.Background(), src, cur); err != nil {
			t.Errorf("%s -> %s: %v", filepath.Base(in), ext, err)
		}
		sa, sb := src.Schema(), cur.Schema()
		for k := range sa.Streams {
			if a, b := sa.Streams[k], sb.Streams[k]; !reflect.DeepEqual(a, b) {
				t.Errorf("%s -> %s: stream\n%#v\nbecame\n%#v", filepath.Base(in), ext, a, b)
			}
		}
	}
}

func openAny(t *testing.T, name string) mlfeed.Source {
	t.Helper()
	src, err := dataset.OpenFiles([]string{name}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
