package cbf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// readAll decodes every chunk of a source into one chunk.
func readAll(t testing.TB, src mlfeed.Source) *mlfeed.Chunk {
	t.Helper()
	var parts []*mlfeed.Chunk
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if c.Sequences != src.Chunks()[i].Sequences {
			t.Fatalf("chunk %d has %d sequences, the table says %d", i, c.Sequences, src.Chunks()[i].Sequences)
		}
		var samples int64
		for q := 0; q < c.Sequences; q++ {
			samples += c.SequenceLength(q)
		}
		if samples != src.Chunks()[i].Samples {
			t.Fatalf("chunk %d has %d samples, the table says %d", i, samples, src.Chunks()[i].Samples)
		}
		sc := src.Schema()
		if err := c.Validate(&sc); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		parts = append(parts, c)
	}
	return mlfeed.ConcatChunks(parts)
}

// baselineTokens prints the data as CNTK's reader test harness does with no randomization
// (testdata/cntk/README.md, "How a baseline file is produced") and returns the tokens.
func baselineTokens(schema mlfeed.Schema, c *mlfeed.Chunk, epochSize, mbSize, epochs int) []string {
	starts := make([]int64, c.Sequences+1)
	for q := 0; q < c.Sequences; q++ {
		starts[q+1] = starts[q] + c.SequenceLength(q)
	}
	var out []string
	for e := 0; e < epochs; e++ {
		q := 0
		for q < c.Sequences && starts[q] < int64(e*epochSize) {
			q++
		}
		for mb := 0; q < c.Sequences && mb < 10; mb++ {
			first := q
			n := int64(0)
			for q < c.Sequences && (q == first || n+c.SequenceLength(q) <= int64(mbSize)) {
				n += c.SequenceLength(q)
				q++
			}
			for k := range schema.Streams {
				out = append(out, layout(&schema.Streams[k], &c.Streams[k], first, q)...)
			}
			if starts[q] >= int64((e+1)*epochSize) {
				break
			}
		}
	}
	return out
}

// layout packs sequences [from, to) of one stream into rows (first fit) and prints their
// samples time step by time step.
func layout(st *mlfeed.Stream, d *mlfeed.StreamData, from, to int) []string {
	type slot struct{ q, t0 int }
	width := int64(0)
	for q := from; q < to; q++ {
		width = max(width, d.SeqStart[q+1]-d.SeqStart[q])
	}
	var rows [][]slot
	var fill []int64
	for q := from; q < to; q++ {
		l := d.SeqStart[q+1] - d.SeqStart[q]
		if l == 0 {
			continue
		}
		r := 0
		for r < len(rows) && fill[r]+l > width {
			r++
		}
		if r == len(rows) {
			rows, fill = append(rows, nil), append(fill, 0)
		}
		rows[r] = append(rows[r], slot{q, int(fill[r])})
		fill[r] += l
	}
	var out []string
	for t := 0; t < int(width); t++ {
		for _, row := range rows {
			for _, s := range row {
				l := int(d.SeqStart[s.q+1] - d.SeqStart[s.q])
				if t >= s.t0 && t < s.t0+l {
					out = append(out, sampleTokens(st, d, d.SeqStart[s.q]+int64(t-s.t0))...)
				}
			}
		}
	}
	return out
}

func sampleTokens(st *mlfeed.Stream, d *mlfeed.StreamData, s int64) []string {
	vals := make([]float64, st.Dim)
	from, to := d.SampleRange(st, s)
	for j := from; j < to; j++ {
		if st.Storage == mlfeed.Sparse {
			vals[d.Indices[j]] = d.Values.Float64At(j)
		} else {
			vals[j-from] = d.Values.Float64At(j)
		}
	}
	out := make([]string, len(vals))
	for j, v := range vals {
		out[j] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return out
}

// TestConformance decodes every CBF file of the CNTK corpus that has an expected output and
// prints it as CNTK's test harness does.
func TestConformance(t *testing.T) {
	cases := []struct {
		file, baseline          string
		epoch, mb, epochs       int
		wantStreams, wantChunks int
	}{
		{"cbf/Simple_dense.bin", "Simple_dense.txt", 1000, 250, 10, 2, 1},
		{"cbf/10x10_dense.bin", "10x10_dense.txt", 100, 100, 1, 1, 1},
		{"cbf/50x20_jagged_sequences_dense.bin", "50x20_jagged_sequences_dense.txt", 508, 508, 1, 1, 1},
		{"cbf/10x10_sparse.bin", "10x10_sparse.txt", 100, 100, 1, 1, 1},
		{"cbf/50x20_jagged_sequences_sparse.bin", "50x20_jagged_sequences_sparse.txt", 564, 564, 1, 1, 1},
		{"generated/ctf2bin/50x20_jagged_sequences_dense.chunk1000.double.bin", "50x20_jagged_sequences_dense.txt", 508, 508, 1, 1, 46},
		{"generated/ctf2bin/50x20_jagged_sequences_sparse.chunk4000.float.bin", "50x20_jagged_sequences_sparse.txt", 564, 564, 1, 1, 45},
		{"generated/ctf2bin/3x5_MI_sparse.float.bin", "3x5_MI_sparse.txt", 15, 15, 1, 3, 1},
		{"generated/ctf2bin/ref_data_with_escape_sequences.float.bin", "ref_data_with_escape_sequences.txt", 9, 9, 1, 2, 1},
		{"generated/ctf2bin/10x10_sparse.float.bin", "10x10_sparse.txt", 100, 100, 1, 1, 1},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			path := testutil.Testdata(t, "cntk", tc.file)
			want, err := os.ReadFile(testutil.Testdata(t, "cntk", "baselines", "ctf", tc.baseline))
			if err != nil {
				t.Fatal(err)
			}
			rd, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if n := len(rd.Schema().Streams); n != tc.wantStreams {
				t.Errorf("%d streams, want %d", n, tc.wantStreams)
			}
			if n := len(rd.Chunks()); n != tc.wantChunks {
				t.Errorf("%d chunks, want %d", n, tc.wantChunks)
			}
			got := baselineTokens(rd.Schema(), readAll(t, rd), tc.epoch, tc.mb, tc.epochs)
			wantTok := strings.Fields(string(want))
			if len(got) != len(wantTok) {
				t.Fatalf("%d tokens, baseline has %d", len(got), len(wantTok))
			}
			for i := range got {
				if got[i] != wantTok[i] {
					t.Fatalf("token %d: got %s, baseline %s", i, got[i], wantTok[i])
				}
			}
		})
	}
}

// Test100x1 checks the ctf2bin output of 100x1_dense.txt, whose baselines are randomized,
// against its source: every row holds the same values.
func Test100x1(t *testing.T) {
	rd, err := Open(testutil.Testdata(t, "cntk", "generated", "ctf2bin", "100x1_dense.chunk10000.double.bin"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	src, err := os.ReadFile(testutil.Testdata(t, "cntk", "ctf", "100x1_dense.txt"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(src), "\n")
	want := map[string][]float64{}
	for _, item := range strings.Split(line, "|")[1:] {
		f := strings.Fields(item)
		for _, v := range f[1:] {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			want[f[0]] = append(want[f[0]], x)
		}
	}
	all := readAll(t, rd)
	if all.Sequences != 100 || len(rd.Chunks()) != 94 {
		t.Fatalf("%d sequences in %d chunks, want 100 in 94", all.Sequences, len(rd.Chunks()))
	}
	for k, alias := range []string{"F", "L"} {
		vals := all.Streams[k].Values.Float64s()
		if len(vals) != 100*len(want[alias]) {
			t.Fatalf("stream %d: %d values", k, len(vals))
		}
		for i, v := range vals {
			if w := want[alias][i%len(want[alias])]; v != w {
				t.Fatalf("stream %d value %d: %v, want %v", k, i, v, w)
			}
		}
	}
}

// TestRealFilesStrict checks that every CBF file of the corpus passes Validate and that the
// mapped, ReadAt and cached paths decode the same data.
func TestRealFilesStrict(t *testing.T) {
	for _, path := range corpusFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if err := Validate(path, nil, func(err error) bool { t.Error(err); return true }); err != nil {
				t.Fatal(err)
			}
			mapped, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer mapped.Close()
			plain, err := Open(path, &ReaderOptions{NoMmap: true, KeepDataInMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if !mapped.mapped || plain.mapped {
				t.Fatalf("mapped %v / %v", mapped.mapped, plain.mapped)
			}
			a, b := readAll(t, mapped), readAll(t, plain)
			if !chunksEqual(a, b) {
				t.Fatal("mapped and ReadAt reads differ")
			}
			c1, _ := plain.ReadChunk(context.Background(), 0)
			c2, _ := plain.ReadChunk(context.Background(), 0)
			if c1 != c2 {
				t.Error("KeepDataInMemory decoded chunk 0 twice")
			}
		})
	}
}

// corpusFiles lists every CBF file of the shared corpus.
func corpusFiles(t testing.TB) []string {
	dir := testutil.Testdata(t, "cntk")
	a, _ := filepath.Glob(filepath.Join(dir, "cbf", "*.bin"))
	b, _ := filepath.Glob(filepath.Join(dir, "generated", "ctf2bin", "*.bin"))
	if len(a) != 6 || len(b) != 6 {
		t.Fatalf("found %d + %d CBF files, want 6 + 6", len(a), len(b))
	}
	return append(a, b...)
}

func chunksEqual(a, b *mlfeed.Chunk) bool {
	if a.Sequences != b.Sequences || len(a.Streams) != len(b.Streams) {
		return false
	}
	for k := range a.Streams {
		x, y := &a.Streams[k], &b.Streams[k]
		if !slicesEqual(x.SeqStart, y.SeqStart) || !slicesEqual(x.SampleStart, y.SampleStart) ||
			!slicesEqual(x.Indices, y.Indices) || x.Values.Type != y.Values.Type || !bytes.Equal(x.Values.Bytes, y.Values.Bytes) {
			return false
		}
	}
	return true
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSimpleJaggedSequence(t *testing.T) {
	rd, err := Open(testutil.Testdata(t, "cntk", "cbf", "Simple_jagged_sequence.bin"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	want := []string{"ab dense float32 1", "ae dense float32 1", "cgw sparse float32 100000", "cnw sparse float32 100000",
		"qgw sparse float32 100000", "qnw sparse float32 100000", "cc dense float32 16", "qc dense float32 16"}
	for k, st := range rd.Schema().Streams {
		if st.String() != want[k] {
			t.Errorf("stream %d: %s, want %s", k, st, want[k])
		}
	}
	if len(rd.Chunks()) != 101 {
		t.Fatalf("%d chunks, want 101", len(rd.Chunks()))
	}
	// Read the chunks concurrently, as a randomizer does.
	var wg sync.WaitGroup
	errs := make([]error, len(rd.Chunks()))
	for i := range rd.Chunks() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := rd.ReadChunk(context.Background(), i)
			if err == nil && c.Sequences != 1 {
				err = errors.New("not one sequence")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestAlias(t *testing.T) {
	path := testutil.Testdata(t, "cntk", "cbf", "Simple_dense.bin")
	rd, err := Open(path, &ReaderOptions{Alias: map[string]string{"x": "features", "y": "labels"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	s := rd.Schema()
	if s.Streams[0].Name != "x" || s.Streams[0].Alias != "features" || s.Streams[1].Name != "y" || s.Index("labels") != 1 {
		t.Fatalf("schema %v", s)
	}
	for _, bad := range []map[string]string{{"x": "nope"}, {"labels": "features"}, {"a": "features", "b": "features"}} {
		if _, err := Open(path, &ReaderOptions{Alias: bad}); err == nil {
			t.Errorf("alias %v accepted", bad)
		}
	}
}

func TestInputs(t *testing.T) {
	path := testutil.Testdata(t, "cntk", "cbf", "10x10_dense.bin")
	in := func(s ...mlfeed.Stream) *format.Options { return &format.Options{Inputs: s} }
	good := []*format.Options{
		in(mlfeed.Stream{Name: "x", Alias: "features", Storage: mlfeed.Dense, Dim: 5}),
		in(mlfeed.Stream{Name: "x", Alias: "features"}), // a rename only
		in(mlfeed.Stream{Name: "features", Storage: mlfeed.Dense, Dim: 5, Type: mlfeed.Float64}),
		{Params: map[string]string{"input.x.alias": "features", "keepDataInMemory": "true", "mmap": "false"}},
	}
	for _, o := range good {
		opts, err := ParseOptions(o)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := Open(path, opts)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		rd.Close()
	}
	bad := []*format.Options{
		in(mlfeed.Stream{Name: "x", Alias: "features", Storage: mlfeed.Sparse, Dim: 5}),
		in(mlfeed.Stream{Name: "x", Alias: "features", Storage: mlfeed.Dense, Dim: 6}),
		in(mlfeed.Stream{Name: "x", Alias: "labels", Storage: mlfeed.Dense, Dim: 5}),
		{Params: map[string]string{"input.x.alias": "nope"}},
		{Params: map[string]string{"randomize": "false"}},
		{Params: map[string]string{"keepDataInMemory": "maybe"}},
	}
	for _, o := range bad {
		opts, err := ParseOptions(o)
		if err == nil {
			var rd *Reader
			if rd, err = Open(path, opts); err == nil {
				rd.Close()
			}
		}
		if !errors.Is(err, format.ErrUsage) {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

// TestReadChunkReuse reads every corpus file chunk by chunk into the previous chunk's memory
// and compares with fresh reads.
func TestReadChunkReuse(t *testing.T) {
	ctx := context.Background()
	for _, path := range corpusFiles(t) {
		for _, noMmap := range []bool{false, true} {
			rd, err := Open(path, &ReaderOptions{NoMmap: noMmap})
			if err != nil {
				t.Fatal(err)
			}
			var prev *mlfeed.Chunk
			for round := range 2 { // the second round reuses the last chunk of the first
				for i := range rd.Chunks() {
					want, err := rd.ReadChunk(ctx, i)
					if err != nil {
						t.Fatal(err)
					}
					if prev, err = rd.ReadChunkReuse(ctx, i, prev); err != nil {
						t.Fatal(err)
					}
					if !chunksEqual(prev, want) {
						t.Fatalf("%s (NoMmap %v) round %d chunk %d: reused read differs", filepath.Base(path), noMmap, round, i)
					}
				}
			}
			rd.Close()
		}
	}
	// Reading chunks of many sequences again puts them into the same memory.
	for _, name := range []string{"Simple_dense.bin", "10x10_sparse.bin"} {
		rd, err := Open(testutil.Testdata(t, "cntk", "cbf", name), &ReaderOptions{NoMmap: true})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := rd.ReadChunkReuse(ctx, 0, nil)
		d := c.Streams[0]
		vals, seqs, idx := &d.Values.Bytes[0], &d.SeqStart[0], d.Indices
		if c, err = rd.ReadChunkReuse(ctx, 0, c); err != nil {
			t.Fatal(err)
		}
		e := c.Streams[0]
		if &e.Values.Bytes[0] != vals || &e.SeqStart[0] != seqs || idx != nil && &e.Indices[0] != &idx[0] {
			t.Errorf("%s: the chunk was not decoded into the previous one's memory", name)
		}
		rd.Close()
	}
}

// TestBadIndex checks the word-at-a-time index check against a plain loop, on indices near
// the bounds (dim-1, dim, negative) and at every position in and after the unrolled part.
func TestBadIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		dim := uint32(1 + r.IntN(10))
		if r.IntN(3) == 0 {
			dim = uint32(1 + r.Int32N(1<<31-1))
		}
		b := make([]byte, 4*r.IntN(40))
		want := -1
		for j := 0; 4*j < len(b); j++ {
			v := uint32(r.Int64N(int64(dim)))
			switch r.IntN(16) {
			case 0:
				v = r.Uint32()
			case 1:
				v = dim
			case 2:
				v = dim - 1
			case 3:
				v = 1 << 31
			}
			binary.LittleEndian.PutUint32(b[4*j:], v)
			if v >= dim && want < 0 {
				want = j
			}
		}
		if got := badIndex(b, dim); got != want {
			t.Fatalf("dim %d, indices % x: got %d, want %d", dim, b, got, want)
		}
		dst := make([]byte, len(b))
		if got := copyIndices(dst, b, dim); got != want || !bytes.Equal(dst, b) {
			t.Fatalf("copyIndices: dim %d, indices % x: got %d and % x, want %d", dim, b, got, dst, want)
		}
	}
}

// SequenceLengths agrees with the decoded chunks on every real CBF file, mapped or not.
func TestSequenceLengths(t *testing.T) {
	dir := testutil.Testdata(t, "cntk", "cbf")
	files, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	for _, name := range files {
		for _, o := range []*ReaderOptions{nil, {NoMmap: true}} {
			rd, err := Open(name, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rd.Chunks() {
				ls, err := rd.SequenceLengths(i)
				if err != nil {
					t.Fatal(err)
				}
				c, err := rd.ReadChunk(context.Background(), i)
				if err != nil {
					t.Fatal(err)
				}
				if len(ls) != c.Sequences {
					t.Fatalf("%s chunk %d: %d lengths for %d sequences", name, i, len(ls), c.Sequences)
				}
				for q, l := range ls {
					if l != c.SequenceLength(q) {
						t.Fatalf("%s chunk %d sequence %d: length %d, decoded %d", name, i, q, l, c.SequenceLength(q))
					}
				}
			}
			if _, err := rd.SequenceLengths(len(rd.Chunks())); err == nil {
				t.Error("a chunk past the end has lengths")
			}
			rd.Close()
		}
	}
}
