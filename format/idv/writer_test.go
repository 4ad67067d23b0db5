package idv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// memFile is an in-memory io.WriteSeeker.
type memFile struct {
	b   []byte
	pos int64
}

func (m *memFile) Write(p []byte) (int, error) {
	if end := m.pos + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[m.pos:], p)
	m.pos += int64(len(p))
	return len(p), nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += m.pos
	case io.SeekEnd:
		off += int64(len(m.b))
	}
	m.pos = off
	return off, nil
}

// memSource is a Source over chunks held in memory.
type memSource struct {
	schema mlfeed.Schema
	chunks []*mlfeed.Chunk
}

func (m *memSource) Schema() mlfeed.Schema { return m.schema }
func (m *memSource) Chunks() []mlfeed.ChunkInfo {
	var out []mlfeed.ChunkInfo
	for _, c := range m.chunks {
		out = append(out, mlfeed.ChunkInfo{Sequences: c.Sequences, Samples: int64(c.Sequences)})
	}
	return out
}
func (m *memSource) ReadChunk(_ context.Context, i int) (*mlfeed.Chunk, error) {
	return m.chunks[i], nil
}
func (m *memSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return m.ReadChunk(ctx, i)
}
func (m *memSource) SequenceLengths(i int) ([]int64, error) {
	return mlfeed.Ones(m.Chunks()[i].Sequences), nil
}
func (m *memSource) Close() error { return nil }

// writeAll writes every chunk of src with opts and returns the bytes.
func writeAll(t testing.TB, src mlfeed.Source, opts *WriterOptions) []byte {
	t.Helper()
	var f memFile
	w, err := NewWriter(&f, src.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return f.b
}

func readBytes(t testing.TB, data []byte, opts *ReaderOptions) *Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// metaStrings renders every metadata item of a schema.
func metaStrings(sc mlfeed.Schema) []string {
	var out []string
	for _, st := range sc.Streams {
		for _, a := range st.Metadata {
			out = append(out, fmt.Sprintf("%s/%s:%s=%s", st.Name, a.Name, a.Desc.String(), sampleString(&a.Desc, &a.Data, 0)))
		}
	}
	return out
}

func sameData(t *testing.T, what string, a, b mlfeed.Source) {
	t.Helper()
	eq(t, what+" schema", schemaStrings(b.Schema()), schemaStrings(a.Schema()))
	eq(t, what+" metadata", metaStrings(b.Schema()), metaStrings(a.Schema()))
	for i := range a.Schema().Streams {
		if x, y := columnName(&a.Schema().Streams[i]), columnName(&b.Schema().Streams[i]); x != y {
			t.Errorf("%s: stream %d file name %q, want %q", what, i, y, x)
		}
	}
	eq(t, what+" values", columns(t, b), columns(t, a))
}

// TestRewriteZeroRowFiles: files with no rows, no metadata and current codec names are
// reproduced byte for byte, with or without compression (they have no blocks).
func TestRewriteZeroRowFiles(t *testing.T) {
	for _, name := range []string{"schema-codec-test.idv", "ep_model0-LoaderSchema.idv", "ep_model1-LoaderSchema.idv",
		"ep_model1-Transform002Schema.idv", "calibrator-Schema.idv", "hashing-before-combine-Schema.idv"} {
		r := openTestdata(t, name)
		want, err := os.ReadFile(testutil.Testdata(t, "idv", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []*WriterOptions{nil, {Uncompressed: true}} {
			if got := writeAll(t, r, opts); !bytes.Equal(got, want) {
				t.Errorf("%s %+v: rewritten file differs (%d bytes, want %d)", name, opts, len(got), len(want))
			}
		}
	}
}

// TestRoundTripCorpus: IDV -> model -> IDV keeps every value, type and metadata item of every
// readable corpus file, compressed or not, and a second pass reproduces the first's bytes.
func TestRoundTripCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.Dir(t, "idv"), "*.idv"))
	for _, f := range files {
		if strings.Contains(f, "oldkey") {
			continue
		}
		r, err := Open(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []*WriterOptions{nil, {Uncompressed: true}} {
			out := writeAll(t, r, opts)
			back := readBytes(t, out, nil)
			sameData(t, filepath.Base(f), r, back)
			if again := writeAll(t, back, opts); !bytes.Equal(again, out) {
				t.Errorf("%s: second round trip changed the bytes", f)
			}
			if err := back.Validate(context.Background(), func(err error) bool { t.Error(err); return true }); err != nil {
				t.Error(err)
			}
		}
		r.Close()
	}
}

// TestRawBlocksMatchMLNet: uncompressed, the writer's blocks are exactly ML.NET's blocks
// before compression.
func TestRawBlocksMatchMLNet(t *testing.T) {
	for _, name := range []string{"termlookup-DefaultMap.idv", "termlookup_with_key-DefaultMap.idv"} {
		orig := openTestdata(t, name)
		ours := readBytes(t, writeAll(t, orig, &WriterOptions{Uncompressed: true}), nil)
		for c := range orig.alive {
			a, err := orig.blockData(orig.alive[c], 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ours.blockData(ours.alive[c], 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s column %d: block\n% x\nwant\n% x", name, c, b, a)
			}
		}
		if ours.rpb != 5 {
			t.Errorf("rows per block %d, want 5 (all rows of a small file)", ours.rpb)
		}
	}
}

func num(t mlfeed.ElemType, vs ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, len(vs))
	for i, v := range vs {
		b.SetFloat64(i, v)
	}
	return b
}

func strs(s ...string) mlfeed.Buffer { return mlfeed.Buffer{Type: mlfeed.String, Strings: s} }

func records(t mlfeed.ElemType, pairs ...int64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		binary.LittleEndian.PutUint64(b.Bytes[8*i:], uint64(pairs[i]))
		if t == mlfeed.DateTimeOffset {
			binary.LittleEndian.PutUint16(b.Bytes[8*i+8:], uint16(int16(pairs[i+1])))
		} else {
			binary.LittleEndian.PutUint64(b.Bytes[8*i+8:], uint64(pairs[i+1]))
		}
	}
	return b
}

// dataBuilder assembles one stream's StreamData sample by sample.
type dataBuilder struct {
	st mlfeed.Stream
	d  mlfeed.StreamData
}

func (b *dataBuilder) add(v mlfeed.Buffer, idx ...int32) {
	if b.d.SeqStart == nil {
		b.d.SeqStart = []int64{0}
		b.d.Values = mlfeed.Buffer{Type: b.st.Type}
		if b.st.Storage == mlfeed.Sparse || b.st.Dim == 0 {
			b.d.SampleStart = []int64{0}
		}
	}
	b.d.SeqStart = append(b.d.SeqStart, int64(len(b.d.SeqStart)))
	b.d.Values.Append(v)
	if b.d.SampleStart != nil {
		b.d.SampleStart = append(b.d.SampleStart, int64(b.d.Values.Len()))
	}
	if b.st.Storage == mlfeed.Sparse {
		b.d.Indices = append(b.d.Indices, idx...)
	}
}

func annotation(name string, desc mlfeed.Stream, v mlfeed.Buffer, idx ...int32) mlfeed.Annotation {
	b := dataBuilder{st: desc}
	b.add(v, idx...)
	return mlfeed.Annotation{Name: name, Desc: desc, Data: b.d}
}

// allTypes returns a source with every kind of IDV column and metadata, n rows in chunks of
// chunk rows.
func allTypes(n, chunk int) *memSource {
	F, S := mlfeed.Float32, mlfeed.String
	streams := []mlfeed.Stream{
		{Name: "f32", Type: F, Dim: 1}, {Name: "f64", Type: mlfeed.Float64, Dim: 1},
		{Name: "i8", Type: mlfeed.Int8, Dim: 1}, {Name: "i16", Type: mlfeed.Int16, Dim: 1},
		{Name: "i32", Type: mlfeed.Int32, Dim: 1}, {Name: "i64", Type: mlfeed.Int64, Dim: 1},
		{Name: "u8", Type: mlfeed.Uint8, Dim: 1}, {Name: "u16", Type: mlfeed.Uint16, Dim: 1},
		{Name: "u32", Type: mlfeed.Uint32, Dim: 1}, {Name: "u64", Type: mlfeed.Uint64, Dim: 1},
		{Name: "bool", Type: mlfeed.Bool, Dim: 1}, {Name: "text", Type: S, Dim: 1},
		{Name: "dur", Type: mlfeed.Duration, Dim: 1}, {Name: "dt", Type: mlfeed.DateTime, Dim: 1},
		{Name: "dto", Type: mlfeed.DateTimeOffset, Dim: 1}, {Name: "rowid", Type: mlfeed.RowID, Dim: 1},
		{Name: "key", Type: mlfeed.Uint16, Dim: 1, KeyCount: 3, Metadata: []mlfeed.Annotation{
			annotation("KeyValues", mlfeed.Stream{Type: S, Dim: 3}, strs("red", "green", "blue")),
			annotation("ScoreColumnSetId", mlfeed.Stream{Type: mlfeed.Uint32, Dim: 1, KeyCount: 2147483647}, num(mlfeed.Uint32, 7)),
		}},
		{Name: "grid", Type: F, Dim: 6, Shape: []int{2, 3}, Metadata: []mlfeed.Annotation{
			annotation("SlotNames", mlfeed.Stream{Type: S, Dim: 6}, strs("a", "b", "c", "d", "e", "f")),
			annotation("IsNormalized", mlfeed.Stream{Type: mlfeed.Bool, Dim: 1}, num(mlfeed.Bool, 1)),
			annotation("CategoricalSlotRanges", mlfeed.Stream{Type: mlfeed.Int32, Dim: 4, Shape: []int{2, 2}}, num(mlfeed.Int32, 0, 2, 3, 5)),
		}},
		{Name: "one", Type: F, Dim: 1, Shape: []int{1}},
		{Name: "sparse", Type: F, Storage: mlfeed.Sparse, Dim: 10, Metadata: []mlfeed.Annotation{
			annotation("SlotNames", mlfeed.Stream{Type: S, Storage: mlfeed.Sparse, Dim: 10}, strs("x", "y"), 2, 7),
		}},
		{Name: "var", Type: mlfeed.Int32, Dim: 0},
		{Name: "textvec", Type: S, Storage: mlfeed.Sparse, Dim: 4},
		{Name: "boolvec", Type: mlfeed.Bool, Dim: 3},
		{Name: "keyvec", Type: mlfeed.Uint8, Dim: 2, KeyCount: 5},
		{Name: "dtovec", Type: mlfeed.DateTimeOffset, Dim: 0},
		{Name: "dup#25", Alias: "dup", Type: F, Dim: 1},
		{Name: "dup", Type: mlfeed.Int64, Dim: 1},
	}
	texts := []string{"", "plain", "héllo wörld", "emoji 😀 pair", "日本語", "a"}
	src := &memSource{schema: mlfeed.Schema{Streams: streams}}
	for start := 0; start < n; start += chunk {
		m := min(chunk, n-start)
		bs := make([]dataBuilder, len(streams))
		for i := range bs {
			bs[i].st = streams[i]
		}
		for r := start; r < start+m; r++ {
			x := float64(r)
			bs[0].add(num(F, x/3))
			bs[1].add(num(mlfeed.Float64, -x/7))
			bs[2].add(num(mlfeed.Int8, float64(r%256-128)))
			bs[3].add(num(mlfeed.Int16, -x*1000))
			bs[4].add(num(mlfeed.Int32, x*1e6))
			bs[5].add(num(mlfeed.Int64, -x*1e12))
			bs[6].add(num(mlfeed.Uint8, float64(r%256)))
			bs[7].add(num(mlfeed.Uint16, x*100))
			bs[8].add(num(mlfeed.Uint32, x*1e8))
			bs[9].add(num(mlfeed.Uint64, x*1e15))
			bs[10].add(num(mlfeed.Bool, float64(r%3%2)))
			bs[11].add(strs(texts[r%len(texts)]))
			bs[12].add(num(mlfeed.Duration, -x*8.64e11))
			bs[13].add(num(mlfeed.DateTime, 6.3e17+x*1e10))
			bs[14].add(records(mlfeed.DateTimeOffset, 633636000000000000+int64(r)*600000000, int64(r%5*60-120)))
			bs[15].add(records(mlfeed.RowID, int64(r), int64(r)*3))
			bs[16].add(num(mlfeed.Uint16, float64(r%4)))
			bs[17].add(num(F, x, x+1, x+2, x+3, x+4, x+5))
			bs[18].add(num(F, -x))
			switch r % 3 {
			case 0:
				bs[19].add(num(F, 1, 2, 3, 4, 5, 6, 7, 8, 9, x), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
			case 1:
				bs[19].add(num(F, x, -x), 3, 8)
			default:
				bs[19].add(num(F))
			}
			vals := make([]float64, r%4)
			for k := range vals {
				vals[k] = float64(k * r)
			}
			bs[20].add(num(mlfeed.Int32, vals...))
			if r%2 == 0 {
				bs[21].add(strs("p", "", "r", texts[r%len(texts)]), 0, 1, 2, 3)
			} else {
				bs[21].add(strs(texts[r%len(texts)]), 2)
			}
			bs[22].add(num(mlfeed.Bool, 1, 0, float64(r%2)))
			bs[23].add(num(mlfeed.Uint8, float64(r%6), 0))
			bs[24].add(records(mlfeed.DateTimeOffset, make([]int64, 2*(r%3))...))
			bs[25].add(num(F, x))
			bs[26].add(num(mlfeed.Int64, x))
		}
		c := &mlfeed.Chunk{Sequences: m}
		for i := range bs {
			c.Streams = append(c.Streams, bs[i].d)
		}
		src.chunks = append(src.chunks, c)
	}
	return src
}

func TestRoundTripAllTypes(t *testing.T) {
	src := allTypes(23, 10)
	for _, opts := range []*WriterOptions{{MaxRowsPerBlock: 7, Uncompressed: true}, {MaxRowsPerBlock: 7}, nil} {
		data := writeAll(t, src, opts)
		r := readBytes(t, data, nil)
		sameData(t, fmt.Sprintf("%+v", opts), src, r)
		if opts != nil && (r.rpb != 7 || r.nblocks != 4) {
			t.Errorf("rows per block %d, blocks %d; want 7, 4", r.rpb, r.nblocks)
		}
		if again := writeAll(t, r, opts); !bytes.Equal(again, data) {
			t.Errorf("%+v: IDV -> model -> IDV changed the bytes", opts)
		}
		for _, bpc := range []int{1, 3} {
			sameData(t, fmt.Sprintf("%d blocks per chunk", bpc), src, readBytes(t, data, &ReaderOptions{BlocksPerChunk: bpc}))
		}
	}
}

// TestVectorModes: the dense/sparse choice of each row survives in every reader mode that
// keeps it, and VectorsDense expands sparse rows.
func TestVectorModes(t *testing.T) {
	src := allTypes(9, 9)
	data := writeAll(t, src, &WriterOptions{MaxRowsPerBlock: 4})
	sparse := readBytes(t, data, &ReaderOptions{Vectors: VectorsSparse})
	eq(t, "grid storage", sparse.Schema().Streams[17].Storage, mlfeed.Sparse)
	if again := writeAll(t, sparse, &WriterOptions{MaxRowsPerBlock: 4}); !bytes.Equal(again, data) {
		t.Error("VectorsSparse: IDV -> model -> IDV changed the bytes")
	}
	dense := readBytes(t, data, &ReaderOptions{Vectors: VectorsDense})
	st := dense.Schema().Streams[19]
	eq(t, "sparse column as dense", st.String(), "sparse dense float32 10")
	got := columns(t, dense)[19]
	eq(t, "expanded rows", got[:3], []string{"[1 2 3 4 5 6 7 8 9 0]", "[0 0 0 1 0 0 0 0 -1 0]", "[0 0 0 0 0 0 0 0 0 0]"})
}

func TestRowsPerBlockHeuristic(t *testing.T) {
	// A lone dense float vector of 10,000 slots estimates 12 + 40,004k bytes for k rows.
	st := mlfeed.Stream{Name: "v", Type: mlfeed.Float32, Dim: 10000}
	b := dataBuilder{st: st}
	for r := 0; r < 25; r++ {
		b.add(mlfeed.NewBuffer(mlfeed.Float32, 10000))
	}
	src := &memSource{schema: mlfeed.Schema{Streams: []mlfeed.Stream{st}}, chunks: []*mlfeed.Chunk{{Sequences: 25, Streams: []mlfeed.StreamData{b.d}}}}
	for _, tc := range []struct {
		maxBytes int64
		maxRows  int
		want     int64
	}{{12 + 40004*10, 0, 10}, {12 + 40004*10 - 1, 0, 9}, {1, 0, 1}, {-1, 4, 4}, {-1, 100, 100}, {0, 0, 25}} {
		r := readBytes(t, writeAll(t, src, &WriterOptions{MaxBytesPerBlock: tc.maxBytes, MaxRowsPerBlock: tc.maxRows, Uncompressed: true}), nil)
		if r.rpb != tc.want {
			t.Errorf("%+v: rows per block %d", tc, r.rpb)
		}
		eq(t, "rows", r.Header.RowCount, 25)
	}
	// No rows: rows per block 1, every lookup table at 256; without a byte cap, the row cap.
	empty := &memSource{schema: src.schema}
	r := readBytes(t, writeAll(t, empty, nil), nil)
	eq(t, "empty", []any{r.rpb, r.cols[0].lookupOff, r.Header.TOCOffset}, []any{1, 256, 256})
	r = readBytes(t, writeAll(t, empty, &WriterOptions{MaxRowsPerBlock: 100, MaxBytesPerBlock: -1}), nil)
	eq(t, "empty without byte cap", r.rpb, 100)
}

func TestWriterRejects(t *testing.T) {
	var f memFile
	for _, st := range []mlfeed.Stream{
		{Name: "c", Type: mlfeed.Complex64, Dim: 1},
		{Name: "s", Type: mlfeed.Float32, Storage: mlfeed.Sparse, Dim: 0},
		{Name: "k", Type: mlfeed.Int32, Dim: 1, KeyCount: 4},
		{Name: "k8", Type: mlfeed.Uint8, Dim: 1, KeyCount: 256},
	} {
		_, err := NewWriter(&f, mlfeed.Schema{Streams: []mlfeed.Stream{st}}, nil)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", st.Name)) {
			t.Errorf("%v: got %v, want an error naming the stream", st, err)
		}
	}
	// A sequence of two samples.
	st := mlfeed.Stream{Name: "frames", Type: mlfeed.Float32, Dim: 2}
	w, err := NewWriter(&f, mlfeed.Schema{Streams: []mlfeed.Stream{st}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 2}, Values: num(mlfeed.Float32, 1, 2, 3, 4)}}}
	if err := w.WriteChunk(c); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"frames"`) {
		t.Errorf("got %v, want an unsupported error naming the stream", err)
	}
	// Out-of-range DateTime.
	st = mlfeed.Stream{Name: "when", Type: mlfeed.DateTime, Dim: 1}
	w, _ = NewWriter(&f, mlfeed.Schema{Streams: []mlfeed.Stream{st}}, nil)
	c = &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: num(mlfeed.DateTime, -5)}}}
	if err := w.WriteChunk(c); !errors.Is(err, ErrRange) {
		t.Errorf("got %v, want ErrRange", err)
	}
}

// TestWriterUnsortedSparse: sparse samples with indices out of order are sorted; repeated
// indices are refused.
func TestWriterUnsortedSparse(t *testing.T) {
	st := mlfeed.Stream{Name: "s", Type: mlfeed.Float32, Storage: mlfeed.Sparse, Dim: 5}
	b := dataBuilder{st: st}
	b.add(num(mlfeed.Float32, 3, 1), 4, 1)
	src := &memSource{schema: mlfeed.Schema{Streams: []mlfeed.Stream{st}}, chunks: []*mlfeed.Chunk{{Sequences: 1, Streams: []mlfeed.StreamData{b.d}}}}
	eq(t, "sorted", columns(t, readBytes(t, writeAll(t, src, nil), nil)), [][]string{{"{1:1 4:3}"}})
	b = dataBuilder{st: st}
	b.add(num(mlfeed.Float32, 3, 1), 4, 4)
	var f memFile
	w, _ := NewWriter(&f, src.schema, nil)
	if err := w.WriteChunk(&mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{b.d}}); err == nil {
		t.Error("repeated index accepted")
	}
}

// TestWriteWithScheduler: compressing the columns of a block on a scheduler's threads writes
// the same bytes as compressing them in turn.
func TestWriteWithScheduler(t *testing.T) {
	src := allTypes(50, 50)
	want := writeAll(t, src, &WriterOptions{MaxRowsPerBlock: 7})
	ctx := sched.WithContext(context.Background(), sched.New(4, 0))
	if got := writeAll(t, src, &WriterOptions{MaxRowsPerBlock: 7, Context: ctx}); !bytes.Equal(got, want) {
		t.Fatal("the bytes differ")
	}
}
