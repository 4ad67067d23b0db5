package cbf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// manifestEntry is one line of testdata/cntk/generated/ctf2bin/MANIFEST.tsv: how ctf2bin.py
// made a CBF file.
type manifestEntry struct {
	output, input, header string // paths
	chunkSize             int64
	precision             string
	chunks                int
}

func readManifest(t testing.TB) []manifestEntry {
	dir := testutil.Testdata(t, "cntk", "generated", "ctf2bin")
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []manifestEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		size, err1 := strconv.ParseInt(c[3], 10, 64)
		chunks, err2 := strconv.Atoi(c[5])
		if len(c) < 6 || err1 != nil || err2 != nil {
			t.Fatalf("bad manifest line %q", sc.Text())
		}
		out = append(out, manifestEntry{
			output:    filepath.Join(dir, c[0]),
			input:     filepath.Join(dir, "..", "..", c[1]),
			header:    filepath.Join(dir, c[2]),
			chunkSize: size, precision: c[4], chunks: chunks,
		})
	}
	if len(out) != 11 {
		t.Fatalf("%d manifest entries, want 11", len(out))
	}
	return out
}

// rewrite reads a CBF file and writes it again with opts.
func rewrite(t testing.TB, path string, opts *WriterOptions) []byte {
	t.Helper()
	rd, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var chunks []*mlfeed.Chunk
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	return writeChunks(t, rd.Schema(), opts, chunks...)
}

// TestRewriteCompat writes each ctf2bin.py output again in ctf2bin mode with the chunk size
// it was made with: the data of a ctf2bin file is exactly the data ctf2bin.py fed its writer,
// so the bytes must come out the same.
func TestRewriteCompat(t *testing.T) {
	for _, m := range readManifest(t) {
		t.Run(filepath.Base(m.output), func(t *testing.T) {
			want, err := os.ReadFile(m.output)
			if err != nil {
				t.Fatal(err)
			}
			got := rewrite(t, m.output, &WriterOptions{Compat: CompatCTF2Bin, ChunkSize: m.chunkSize})
			if !bytes.Equal(got, want) {
				t.Fatalf("differs at byte %d (%d vs %d bytes)", testutil.FirstDiff(got, want), len(got), len(want))
			}
		})
	}
	// Simple_jagged_sequence.bin has one sequence per chunk: its first sequence alone
	// reached the chunk size, so any size up to that estimate reproduces it.
	path := testutil.Testdata(t, "cntk", "cbf", "Simple_jagged_sequence.bin")
	want, _ := os.ReadFile(path)
	if got := rewrite(t, path, &WriterOptions{Compat: CompatCTF2Bin, ChunkSize: 1}); !bytes.Equal(got, want) {
		t.Fatalf("Simple_jagged_sequence.bin differs at byte %d", testutil.FirstDiff(got, want))
	}
}

// TestRewriteSane round-trips every corpus file through the default writer.
func TestRewriteSane(t *testing.T) {
	for _, path := range corpusFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, size := range []int64{0, 3000} {
				b := rewrite(t, path, &WriterOptions{ChunkSize: size})
				rd, err := NewReader(bytes.NewReader(b), int64(len(b)), &Options{strict: true})
				if err != nil {
					t.Fatal(err)
				}
				src, err := Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				if !chunksEqual(readAll(t, rd), readAll(t, src)) {
					t.Fatalf("chunk size %d: data differs after the round trip", size)
				}
				for i, c := range rd.Header().Chunks {
					if bytes := rd.ends[i] - c.Offset; size > 0 && c.Sequences > 1 && bytes > size {
						t.Errorf("chunk %d: %d bytes, over the %d target", i, bytes, size)
					}
				}
				if size == 0 && len(rd.Chunks()) != 1 {
					t.Errorf("default size: %d chunks, want 1", len(rd.Chunks()))
				}
			}
		})
	}
}

// denseChunk returns a chunk of one dense float32 stream of dimension dim; each argument is a
// sequence's values.
func denseChunk(dim int, seqs ...[]float32) *mlfeed.Chunk {
	d := mlfeed.StreamData{SeqStart: []int64{0}, Values: mlfeed.Buffer{Type: mlfeed.Float32}}
	for _, s := range seqs {
		for _, v := range s {
			d.Values.Bytes = le.AppendUint32(d.Values.Bytes, math.Float32bits(v))
		}
		d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+int64(len(s)/dim))
	}
	return &mlfeed.Chunk{Sequences: len(seqs), Streams: []mlfeed.StreamData{d}}
}

// sparseChunk returns a chunk of one sparse float32 stream; each sequence is a list of
// samples, each sample a list of index, value pairs.
func sparseChunk(seqs ...[][][2]float32) *mlfeed.Chunk {
	d := mlfeed.StreamData{SeqStart: []int64{0}, SampleStart: []int64{0}, Indices: []int32{}, Values: mlfeed.Buffer{Type: mlfeed.Float32}}
	for _, s := range seqs {
		for _, smp := range s {
			for _, p := range smp {
				d.Indices = append(d.Indices, int32(p[0]))
				d.Values.Bytes = le.AppendUint32(d.Values.Bytes, math.Float32bits(p[1]))
			}
			d.SampleStart = append(d.SampleStart, int64(len(d.Indices)))
		}
		d.SeqStart = append(d.SeqStart, int64(len(d.SampleStart)-1))
	}
	return &mlfeed.Chunk{Sequences: len(seqs), Streams: []mlfeed.StreamData{d}}
}

func writeChunks(t testing.TB, schema mlfeed.Schema, opts *WriterOptions, chunks ...*mlfeed.Chunk) []byte {
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

// open reads a written file (not strictly: some tests write duplicate indices).
func open(t testing.TB, b []byte) *Reader {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

func chunkSizes(rd *Reader) []int {
	var n []int
	for _, c := range rd.Chunks() {
		n = append(n, c.Sequences)
	}
	return n
}

var denseSchema = mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 1}}}

// TestWriterBytes checks a small file byte by byte against the layout.
func TestWriterBytes(t *testing.T) {
	got := writeChunks(t, denseSchema, nil, denseChunk(1, []float32{1}, []float32{2, 3}))
	var want []byte
	want = append(want, "nib_ktnc"...)
	want = le.AppendUint32(want, 1)
	for _, v := range []uint32{1, 2, 1, math.Float32bits(1), 2, math.Float32bits(2), math.Float32bits(3)} {
		want = le.AppendUint32(want, v) // lengths 1, 2; sequence 0: 1 sample; sequence 1: 2 samples
	}
	want = append(want, "nib_ktnc"...)
	want = le.AppendUint32(want, 1) // chunks
	want = le.AppendUint32(want, 1) // streams
	want = append(want, 0, 1, 0, 0, 0, 'x', 0, 1, 0, 0, 0)
	want = le.AppendUint64(want, 12)
	want = le.AppendUint32(want, 2)
	want = le.AppendUint32(want, 3)
	want = le.AppendUint64(want, 40)
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n% x\nwant\n% x", got, want)
	}
}

// TestCompatChunking checks ctf2bin.py's estimate: it is never reset, so after the first cut
// every sequence but the last is a chunk of its own, and the last joins the current chunk.
func TestCompatChunking(t *testing.T) {
	seqs := make([][]float32, 6)
	for i := range seqs {
		seqs[i] = []float32{float32(i)}
	}
	// Each sequence is estimated at 4 bytes: 4, 8, 12 reaches 10, so the first chunk has 3.
	compat := open(t, writeChunks(t, denseSchema, &WriterOptions{Compat: CompatCTF2Bin, ChunkSize: 10}, denseChunk(1, seqs[:2]...), denseChunk(1, seqs[2:]...)))
	if got := chunkSizes(compat); !slicesEqual(got, []int{3, 1, 1, 1}) {
		t.Errorf("ctf2bin chunks %v, want [3 1 1 1]", got)
	}
	// A sequence encodes to 12 bytes (length, count, value): three fit in 36.
	sane := open(t, writeChunks(t, denseSchema, &WriterOptions{ChunkSize: 36}, denseChunk(1, seqs...)))
	if got := chunkSizes(sane); !slicesEqual(got, []int{3, 3}) {
		t.Errorf("sane chunks %v, want [3 3]", got)
	}
	if !chunksEqual(readAll(t, compat), readAll(t, sane)) {
		t.Error("the two chunkings hold different data")
	}
	// The threshold is reached only by the last sequence: one chunk.
	one := open(t, writeChunks(t, denseSchema, &WriterOptions{Compat: CompatCTF2Bin, ChunkSize: 24}, denseChunk(1, seqs...)))
	if got := chunkSizes(one); !slicesEqual(got, []int{6}) {
		t.Errorf("chunks %v, want [6]", got)
	}
}

var sparseSchema = mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 10}}}

// TestSparseOrderAndEmpty checks that indices are sorted stably and that empty samples are
// dropped in ctf2bin mode only.
func TestSparseOrderAndEmpty(t *testing.T) {
	in := sparseChunk(
		[][][2]float32{{{5, 1}, {2, 2}, {5, 3}, {0, 4}}, {}, {{1, 5}}},
		[][][2]float32{{}},
	)
	for _, compat := range []string{"", CompatCTF2Bin} {
		rd := open(t, writeChunks(t, sparseSchema, &WriterOptions{Compat: compat}, in))
		c := readAll(t, rd)
		d := c.Streams[0]
		if !slicesEqual(d.Indices, []int32{0, 2, 5, 5, 1}) || !slicesEqual(d.Values.Float32s(), []float32{4, 2, 1, 3, 5}) {
			t.Errorf("compat %q: indices %v values %v", compat, d.Indices, d.Values.Float32s())
		}
		want := []int64{0, 3, 4} // samples per sequence: 3 and 1
		if compat != "" {
			want = []int64{0, 2, 2} // the empty samples are gone; the second sequence is empty
		}
		if !slicesEqual(d.SeqStart, want) {
			t.Errorf("compat %q: SeqStart %v, want %v", compat, d.SeqStart, want)
		}
	}
}

// TestCompatIDs checks that the writer writes the sequences it is given in every mode: the
// grouping of lines by id that ctf2bin.py does is the CTF reader's (see
// TestCTF2BinSequences).
func TestCompatIDs(t *testing.T) {
	schema := denseSchema
	schema.HasIDs = true
	a := denseChunk(1, []float32{1}, []float32{2})
	a.IDs = []string{"a", "b"}
	b := denseChunk(1, []float32{3}, []float32{4}, []float32{5}, []float32{6}, []float32{7})
	b.IDs = []string{"b", "", "c", "", ""}
	for _, o := range []*WriterOptions{{Compat: CompatCTF2Bin}, nil} {
		if n := readAll(t, open(t, writeChunks(t, schema, o, a, b))).Sequences; n != 7 {
			t.Errorf("%+v: %d sequences, want 7", o, n)
		}
	}
}

// TestEmpty checks a data set without sequences: ctf2bin.py writes one empty chunk.
func TestEmpty(t *testing.T) {
	if n := len(open(t, writeChunks(t, denseSchema, &WriterOptions{Compat: CompatCTF2Bin})).Chunks()); n != 1 {
		t.Errorf("ctf2bin mode: %d chunks, want 1", n)
	}
	if n := len(open(t, writeChunks(t, denseSchema, nil)).Chunks()); n != 0 {
		t.Errorf("default mode: %d chunks, want 0", n)
	}
}

func TestWriterSparseNoDim(t *testing.T) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32}}}
	rd := open(t, writeChunks(t, schema, nil, sparseChunk([][][2]float32{{{7, 1}}, {{3, 2}}})))
	if d := rd.Schema().Streams[0].Dim; d != 8 {
		t.Errorf("dim %d, want 8", d)
	}
}

func TestWriterRejects(t *testing.T) {
	bad := []mlfeed.Schema{
		{Streams: []mlfeed.Stream{{Name: "u", Type: mlfeed.Uint8, Dim: 1}}},
		{Streams: []mlfeed.Stream{{Name: "v", Type: mlfeed.Float32}}},
		{Streams: []mlfeed.Stream{{Name: "s", Type: mlfeed.String, Dim: 1}}},
		{Streams: []mlfeed.Stream{{Name: "a\tb", Type: mlfeed.Float32, Dim: 1}}},
		{},
	}
	for _, s := range bad {
		if _, err := NewWriter(&bytes.Buffer{}, s, nil); !errors.Is(err, mlfeed.ErrUnsupported) {
			t.Errorf("%v: %v", s, err)
		}
	}
	if _, err := NewWriter(&bytes.Buffer{}, denseSchema, &WriterOptions{Compat: "cntk"}); err == nil {
		t.Error("unknown compat mode accepted")
	}
	w, _ := NewWriter(&bytes.Buffer{}, denseSchema, nil)
	if err := w.WriteChunk(sparseChunk([][][2]float32{{{1, 1}}})); err == nil {
		t.Error("a chunk of another schema was accepted")
	}
}

// TestSparseLongSampleOrder checks the stable sort of a sample too long for insertion sort:
// equal indices keep their order.
func TestSparseLongSampleOrder(t *testing.T) {
	var pairs [][2]float32
	for k := 0; k < 100; k++ {
		pairs = append(pairs, [2]float32{float32((k * 7) % 10), float32(k)})
	}
	want := slices.Clone(pairs)
	slices.SortStableFunc(want, func(a, b [2]float32) int { return int(a[0]) - int(b[0]) })
	rd := open(t, writeChunks(t, sparseSchema, nil, sparseChunk([][][2]float32{pairs})))
	d := readAll(t, rd).Streams[0]
	for k, p := range want {
		if d.Indices[k] != int32(p[0]) || d.Values.Float32s()[k] != p[1] {
			t.Fatalf("value %d: index %d value %v, want %v", k, d.Indices[k], d.Values.Float32s()[k], p)
		}
	}
}

// TestSortKeys checks the sorting network on every 0/1 input (which proves a network) and
// sortKeys on random keys of every length up to 40 against slices.Sort.
func TestSortKeys(t *testing.T) {
	for bits := 0; bits < 256; bits++ {
		var k [8]uint64
		for i := range k {
			k[i] = uint64(bits >> i & 1)
		}
		want := k
		slices.Sort(want[:])
		if sort8(&k); k != want {
			t.Fatalf("sort8 of 0/1 input %08b = %v", bits, k)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for n := 0; n <= 40; n++ {
		for range 200 {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = uint64(r.IntN(20))<<32 | uint64(i)
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			if sortKeys(keys); !slices.Equal(keys, want) {
				t.Fatalf("sortKeys: %v, want %v", keys, want)
			}
		}
	}
}

// TestSpoolRoundTrip writes megabytes of dense and of sparse data in chunks of several sizes,
// in both modes, so that the writer's blocks fill, are written and are reused, and reads them
// back.
func TestSpoolRoundTrip(t *testing.T) {
	for _, storage := range []mlfeed.Storage{mlfeed.Dense, mlfeed.Sparse} {
		schema, chunks := benchData(t, storage, 3<<20)
		// Within a sample the writer orders sparse values by index.
		var want mlfeed.Chunk
		for _, c := range chunks {
			d := c.Streams[0]
			for s := 0; storage == mlfeed.Sparse && s < len(d.SampleStart)-1; s++ {
				lo, hi := d.SampleStart[s], d.SampleStart[s+1]
				type pair struct {
					i int32
					v float32
				}
				var ps []pair
				for k := lo; k < hi; k++ {
					ps = append(ps, pair{d.Indices[k], d.Values.Float32s()[k]})
				}
				slices.SortFunc(ps, func(a, b pair) int { return int(a.i - b.i) })
				for k, p := range ps {
					d.Indices[lo+int64(k)], d.Values.Float32s()[lo+int64(k)] = p.i, p.v
				}
			}
			want.Sequences += c.Sequences
		}
		for _, opts := range []*WriterOptions{nil, {ChunkSize: 1 << 20}, {ChunkSize: 100 << 10, Compat: CompatCTF2Bin}, {ChunkSize: 5 << 20, Compat: CompatCTF2Bin}} {
			got := readAll(t, open(t, writeChunks(t, schema, opts, chunks...)))
			var vals []float32
			var idx []int32
			for _, c := range chunks {
				vals = append(vals, c.Streams[0].Values.Float32s()...)
				idx = append(idx, c.Streams[0].Indices...)
			}
			g := got.Streams[0]
			if got.Sequences != want.Sequences || !slices.Equal(g.Values.Float32s(), vals) || !slices.Equal(g.Indices, idx) {
				t.Fatalf("%v %+v: %d sequences, %d values read back; want %d, %d (or the values differ)", storage, opts, got.Sequences, g.Values.Len(), want.Sequences, len(vals))
			}
		}
	}
}
