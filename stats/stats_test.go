package stats

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed"
)

func TestCellOf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, 255, -255, 1e-40, -1e-40, 3.4e38, -3.4e38,
		math.SmallestNonzeroFloat64, math.Float64frombits(0x3ff0200000000000), -math.Float64frombits(0x3ff0200000000000)}
	for range 100000 {
		vals = append(vals, r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	for _, v := range vals {
		i := cellOf(v)
		lo, hi := cellEdges(i)
		if !(lo <= v && v < hi) {
			t.Fatalf("%g: cell %d is [%g, %g)", v, i, lo, hi)
		}
		if hi-lo > math.Max(math.Abs(lo), math.Abs(hi))/128+1e-37 {
			t.Fatalf("%g: cell %d [%g, %g) is too wide", v, i, lo, hi)
		}
	}
	// Cells are ordered as their values.
	slices.Sort(vals)
	for k := 1; k < len(vals); k++ {
		if cellOf(vals[k]) < cellOf(vals[k-1]) {
			t.Fatalf("cells of %g and %g are out of order", vals[k-1], vals[k])
		}
	}
}

// table returns a source of one chunk per group of rows, of a dense float32 stream "x" (dim
// 2), a uint8 label "y", a sparse float32 "s" (dim 5), text "t" and bytes "b".
func table(t *testing.T) mlfeed.Source {
	t.Helper()
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Type: mlfeed.Float32, Dim: 2},
		{Name: "y", Type: mlfeed.Uint8, Dim: 1},
		{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5},
		{Name: "t", Type: mlfeed.String, Dim: 1},
		{Name: "b", Type: mlfeed.Bytes, Dim: 1},
		{Name: "h", Type: mlfeed.Float64, Dim: 3},
	}}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := []float32{1, 2, 0, nan, -3, inf, 4, 0}
	y := []uint8{3, 1, 3, 7}
	sIdx := []int32{0, 4, 4, 2, 4}
	sVal := []float32{1, 2, 3, 1, 1}
	sStart := []int64{0, 2, 3, 4, 5} // 2, 1, 1, 1 non-zeros
	text := []string{"a", "bb", "a", "ünï"}
	png := "\x89PNG\r\n\x1a\n...."
	byt := []string{png, "\xff\xd8\xff\xe0..", png, "plain"}
	h := []float64{0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0}
	var chunks []*mlfeed.Chunk
	for _, r := range [][2]int{{0, 3}, {3, 4}} {
		a, b := r[0], r[1]
		n := b - a
		seq := make([]int64, n+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		ss := make([]int64, n+1)
		for i := range ss {
			ss[i] = sStart[a+i] - sStart[a]
		}
		f32 := func(v []float32) mlfeed.Buffer {
			buf := mlfeed.NewBuffer(mlfeed.Float32, len(v))
			copy(buf.Float32s(), v)
			return buf
		}
		hb := mlfeed.NewBuffer(mlfeed.Float64, 3*n)
		copy(hb.Float64s(), h[3*a:3*b])
		chunks = append(chunks, &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
			{SeqStart: seq, Values: f32(x[2*a : 2*b])},
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: slices.Clone(y[a:b])}},
			{SeqStart: seq, SampleStart: ss, Indices: sIdx[sStart[a]:sStart[b]], Values: f32(sVal[sStart[a]:sStart[b]])},
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: text[a:b]}},
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.Bytes, Strings: byt[a:b]}},
			{SeqStart: seq, Values: hb},
		}})
	}
	src, err := mlfeed.NewMemorySource(sc, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestCompute(t *testing.T) {
	r, err := Compute(context.Background(), table(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sequences != 4 || r.Samples != 4 || r.TotalSequences != 4 {
		t.Errorf("counts %d %d %d", r.Sequences, r.Samples, r.TotalSequences)
	}
	if want := (Lengths{Min: 1, Max: 1, Mean: 1, Histogram: Histogram{Edges: []float64{1, 2}, Counts: []int64{4}}}); !reflect.DeepEqual(r.SequenceLengths, want) {
		t.Errorf("sequence lengths %+v", r.SequenceLengths)
	}
	x := r.Streams[0].Numeric
	if x.Count != 8 || x.Finite != 6 || x.NaN != 1 || x.PosInf != 1 || x.Zeros != 2 || x.Min != -3 || x.Max != 4 {
		t.Errorf("x: %+v", x)
	}
	if math.Abs(x.Mean-4.0/6) > 1e-15 {
		t.Errorf("x mean %g", x.Mean)
	}
	var m2 float64
	for _, v := range []float64{1, 2, 0, -3, 4, 0} {
		m2 += (v - 4.0/6) * (v - 4.0/6)
	}
	if math.Abs(x.Std-math.Sqrt(m2/6)) > 1e-15 {
		t.Errorf("x std %g", x.Std)
	}
	if x.Histogram.Total() != 6 {
		t.Errorf("x histogram %+v", x.Histogram)
	}
	y := r.Streams[1]
	if want := []ClassCount{{Class: 1, Count: 1}, {Class: 3, Count: 2}, {Class: 7, Count: 1}}; y.Classes == nil || y.Classes.Kind != "integer" || !reflect.DeepEqual(y.Classes.Counts, want) {
		t.Errorf("y classes %+v", y.Classes)
	}
	if h := y.Numeric.Histogram; h.Edges[0] != 1 || h.Edges[len(h.Edges)-1] != 8 || h.Total() != 4 {
		t.Errorf("y histogram %+v", h)
	}
	s := r.Streams[2]
	if s.Values != 5 || s.Sparse == nil || s.Sparse.NonZeros.Max != 2 || s.Sparse.NonZeros.Min != 1 || s.Sparse.Density != 1.25/5 {
		t.Errorf("s: %+v %+v", s, s.Sparse)
	}
	if want := []TopIndex{{Index: 4, Count: 3}, {Index: 0, Count: 1}, {Index: 2, Count: 1}}; !reflect.DeepEqual(s.Sparse.TopIndices, want) || !s.Sparse.TopExact {
		t.Errorf("s top %+v", s.Sparse.TopIndices)
	}
	if s.Classes != nil {
		t.Errorf("s is not one-hot: %+v", s.Classes)
	}
	tx := r.Streams[3].Text
	if want := []TopText{{Value: "a", Count: 2}, {Value: "bb", Count: 1}, {Value: "ünï", Count: 1}}; !reflect.DeepEqual(tx.Top, want) || !tx.TopExact {
		t.Errorf("t top %+v", tx.Top)
	}
	if tx.Lengths.Max != 3 || tx.Lengths.Min != 1 {
		t.Errorf("t lengths %+v", tx.Lengths)
	}
	b := r.Streams[4].Bytes
	if want := []MediaCount{{"image/png", 2}, {"application/octet-stream", 1}, {"image/jpeg", 1}}; !reflect.DeepEqual(b.MediaTypes, want) {
		t.Errorf("b media %+v", b.MediaTypes)
	}
	h := r.Streams[5]
	if want := []ClassCount{{Class: 0, Count: 1}, {Class: 1, Count: 2}, {Class: 2, Count: 1}}; h.Classes == nil || h.Classes.Kind != "one-hot" || !reflect.DeepEqual(h.Classes.Counts, want) {
		t.Errorf("h classes %+v", h.Classes)
	}
}

// onesSource is a source of n sequences of one int64 sample, value = position, in chunks of k.
func onesSource(t testing.TB, n, k int) mlfeed.Source {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "i", Type: mlfeed.Int64, Dim: 1}}}
	var chunks []*mlfeed.Chunk
	for a := 0; a < n; a += k {
		m := min(k, n-a)
		seq := make([]int64, m+1)
		buf := mlfeed.NewBuffer(mlfeed.Int64, m)
		for i := range seq {
			seq[i] = int64(i)
		}
		for i := range m {
			buf.Int64s()[i] = int64(a + i)
		}
		chunks = append(chunks, &mlfeed.Chunk{Sequences: m, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: buf}}})
	}
	src, err := mlfeed.NewMemorySource(sc, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestLimitAndSample(t *testing.T) {
	src := onesSource(t, 1000, 64)
	var calls int
	r, err := Compute(context.Background(), src, &Options{Limit: 100, Progress: func(done, total int64) {
		calls++
		if total != 100 || done > total {
			t.Errorf("progress %d/%d", done, total)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Streams[0].Numeric; r.Sequences != 100 || n.Min != 0 || n.Max != 99 || r.TotalSequences != 1000 || calls != 2 {
		t.Errorf("limit: %d sequences, %+v, %d calls", r.Sequences, n, calls)
	}
	classesOf := func(o *Options) []int64 {
		r, err := Compute(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Sequences != o.Sample {
			t.Fatalf("sample %d: %d sequences", o.Sample, r.Sequences)
		}
		var out []int64
		for _, c := range r.Streams[0].Classes.Counts {
			if c.Count != 1 {
				t.Fatalf("class %d drawn %d times", c.Class, c.Count)
			}
			out = append(out, c.Class)
		}
		return out
	}
	a := classesOf(&Options{Sample: 50, Seed: 7})
	b := classesOf(&Options{Sample: 50, Seed: 7})
	c := classesOf(&Options{Sample: 50, Seed: 8})
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("seed 7 twice: %v, %v; seed 8: %v", a, b, c)
	}
	if a[len(a)-1] < 500 {
		t.Errorf("sample of 50 of 1000 drawn from the start only: %v", a)
	}
	d := classesOf(&Options{Sample: 10, Limit: 20, Seed: 1})
	if d[len(d)-1] >= 20 {
		t.Errorf("sample within the limit drew %v", d)
	}
	// Uniformity: over many seeds, every sequence of 100 is drawn about as often.
	src = onesSource(t, 100, 7)
	hits := make([]int, 100)
	for seed := range uint64(400) {
		r, err := Compute(context.Background(), src, &Options{Sample: 10, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Streams[0].Classes.Counts {
			hits[c.Class]++
		}
	}
	for i, h := range hits {
		if h < 15 || h > 70 { // expected 40
			t.Errorf("sequence %d drawn %d times in 400 samples of 10 of 100", i, h)
		}
	}
}

func TestWideIntegers(t *testing.T) {
	// 200000 distinct int64 values: the window gives up and the moments take over, exactly.
	src := onesSource(t, 200000, 4096)
	r, err := Compute(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Streams[0]
	n := s.Numeric
	if n.Min != 0 || n.Max != 199999 || n.Mean != 99999.5 || s.Classes != nil || n.Histogram.Total() != 200000 {
		t.Errorf("%+v %+v", n, s.Classes)
	}
	if want := math.Sqrt((200000.0*200000 - 1) / 12); math.Abs(n.Std-want) > 1e-9*want {
		t.Errorf("std %g, want %g", n.Std, want)
	}
}

func TestBadChunk(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 2}}}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: mlfeed.NewBuffer(mlfeed.Float32, 3)}}}
	src := &lyingSource{MemorySource: must(mlfeed.NewMemorySource(sc)), c: c}
	if _, err := Compute(context.Background(), src, nil); !errors.Is(err, mlfeed.ErrFormat) {
		t.Errorf("got %v, want ErrFormat", err)
	}
}

type lyingSource struct {
	*mlfeed.MemorySource
	c *mlfeed.Chunk
}

func (l *lyingSource) Chunks() []mlfeed.ChunkInfo {
	return []mlfeed.ChunkInfo{{Sequences: 2, Samples: 2}}
}
func (l *lyingSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return l.c, nil
}
func (l *lyingSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return l.c, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTopK(t *testing.T) {
	// A Zipf-like stream: key k appears 2000/k times, with 5000 keys seen once as noise.
	tk := newTopK(64)
	var keys []uint64
	for k := 1; k <= 20; k++ {
		for range 2000 / k {
			keys = append(keys, uint64(k))
		}
	}
	for k := range 5000 {
		keys = append(keys, uint64(1000+k))
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		tk.add(k, nil)
	}
	top := tk.top(5)
	for i, it := range top {
		want := 2000 / (i + 1)
		if it.key != uint64(i+1) || it.count < int64(want) || it.count-it.err > int64(want) {
			t.Errorf("top %d: %+v, true count %d", i, it, want)
		}
	}
	if !tk.evicted {
		t.Error("no eviction")
	}
}

func TestMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"RIFF\x00\x00\x00\x00WEBPVP8 ": "image/webp", "RIFF\x00\x00\x00\x00WAVEfmt ": "audio/wav",
		"fLaC\x00": "audio/flac", "ID3\x04": "audio/mpeg", "\xff\xfb\x90\x00": "audio/mpeg",
		"\x1f\x8b\x08": "application/gzip", "GIF89a..": "image/gif", "": octetStream, "RIFF": octetStream,
	} {
		if got := MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestCell32 checks the float32 path's cells (counted by key, settled by keyCell) against
// cellOf's, value by value and in aggregate.
func TestCell32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, -2, 0.5, -0.5, 1e-40, -1e-40, -math.SmallestNonzeroFloat32,
		-float32(math.Ldexp(1, -126)), -float32(math.Ldexp(1, -125)), math.MaxFloat32, -math.MaxFloat32}
	for range 100000 {
		vals = append(vals, float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-15))), float32(r.IntN(1000)-500))
	}
	want := map[int]int64{}
	for _, v := range vals {
		want[cellOf(float64(v))]++
		b := math.Float32bits(v)
		if b<<1 == 0 {
			continue // zeros are counted on their own
		}
		if a, c := keyCell(int(b>>16), b&0x8000FFFF == 0x80000000), cellOf(float64(v)); a != c {
			t.Fatalf("%g: keyCell %d, cellOf %d", v, a, c)
		}
	}
	m := newMoments()
	m.addFloat32s(vals, make([]float64, blockSize))
	m.settle()
	for i := range fineCells {
		if got := m.cells.at(i); got != want[i] {
			t.Fatalf("cell %d: %d values, cellOf puts %d there", i, got, want[i])
		}
	}
}

func TestWindowMoves(t *testing.T) {
	// Values arriving far apart but within 65536 of each other stay exact; the window grows
	// and moves, also at the ends of the int64 range.
	for _, base := range []int64{0, -1 << 40, math.MinInt64, math.MaxInt64 - 65535} {
		a := &ints{}
		var want []int64
		for _, d := range []int64{30000, 0, 65535, 100, 30000, 65535} {
			a.add(base + d)
			want = append(want, base+d)
		}
		if !a.exact() {
			t.Fatalf("base %d: window dropped", base)
		}
		vals, counts := a.w.pairs()
		slices.Sort(want)
		var got []int64
		for i, v := range vals {
			for range counts[i] {
				got = append(got, v)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("base %d: %v, want %v", base, got, want)
		}
		out := base + 65536
		if base == math.MaxInt64-65535 {
			out = base - 1
		}
		a.add(out)
		if a.exact() {
			t.Fatalf("base %d: a span of 65537 kept exact", base)
		}
	}
}

func TestSequences(t *testing.T) {
	// Sequences of 1, 3 and 2 samples of a variable-size dense stream (values per sample 2, 0,
	// 1, 1, 3, 1) beside a stream with one sample each.
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "v", Type: mlfeed.Int32}, {Name: "k", Type: mlfeed.Int32, Dim: 1}}}
	v := mlfeed.NewBuffer(mlfeed.Int32, 8)
	copy(v.Int32s(), []int32{5, 6, 7, 8, 9, 10, 11, 12})
	k := mlfeed.NewBuffer(mlfeed.Int32, 3)
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 4, 6}, SampleStart: []int64{0, 2, 2, 3, 4, 7, 8}, Values: v},
		{SeqStart: []int64{0, 1, 2, 3}, Values: k},
	}}
	src, err := mlfeed.NewMemorySource(sc, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compute(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Lengths{Min: 1, Max: 3, Mean: 2, Histogram: Histogram{Edges: []float64{1, 2, 3, 4}, Counts: []int64{1, 1, 1}}}
	if r.Samples != 6 || !reflect.DeepEqual(r.SequenceLengths, want) {
		t.Errorf("samples %d, lengths %+v", r.Samples, r.SequenceLengths)
	}
	vps := r.Streams[0].ValuesPerSample
	if vps == nil || vps.Min != 0 || vps.Max != 3 || !slices.Equal(vps.Histogram.Counts, []int64{1, 3, 1, 1}) {
		t.Errorf("values per sample %+v", vps)
	}
	if n := r.Streams[0].Numeric; n.Count != 8 || n.Mean != 8.5 || r.Streams[0].Classes != nil {
		t.Errorf("v: %+v", n)
	}
}

// TestResultMidway checks that asking for the figures between chunks (as `mlfeed view` does),
// which settles the byte table and the float32 keys, changes nothing: integers whose range
// moves and then widens past the byte table and the window, float64 values float32 holds and
// others, and bytes.
func TestResultMidway(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "i16", Type: mlfeed.Int16, Dim: 4},
		{Name: "i64", Type: mlfeed.Int64, Dim: 4},
		{Name: "u64", Type: mlfeed.Uint64, Dim: 4},
		{Name: "f64", Type: mlfeed.Float64, Dim: 4},
		{Name: "u8", Type: mlfeed.Uint8, Dim: 4},
	}}
	r := rand.New(rand.NewPCG(3, 4))
	var chunks []*mlfeed.Chunk
	for k := range 12 {
		n := 300 + r.IntN(700) // sequences of one sample
		c := &mlfeed.Chunk{Sequences: n}
		for j, st := range sc.Streams {
			b := mlfeed.NewBuffer(st.Type, 4*n)
			for i := range 4 * n {
				v := float64(k*40 + r.IntN(200)) // moves by 40 a chunk
				switch {
				case k >= 10 && j < 3:
					v = float64(r.Int64N(1 << 40)) // past the window
				case j == 3 && k%3 == 1:
					v += 0.1 // not float32's
				case j == 4:
					v = float64(r.IntN(3) * 100)
				}
				if j == 2 && k == 11 && i == 0 {
					b.Uint64s()[i] = math.MaxUint64
					continue
				}
				b.SetFloat64(i, v)
			}
			c.Streams = append(c.Streams, mlfeed.StreamData{SeqStart: seqStarts(n), Values: b})
		}
		chunks = append(chunks, c)
	}
	once, midway := NewCollector(sc, nil), NewCollector(sc, nil)
	for _, c := range chunks {
		once.Add(c, 0, c.Sequences)
		midway.Add(c, 0, c.Sequences)
		midway.Result()
	}
	if a, b := once.Result(), midway.Result(); !reflect.DeepEqual(a, b) {
		t.Errorf("with figures asked for midway:\n%+v\nat once:\n%+v", b, a)
	}
}

// seqStarts returns the offsets of n sequences of one sample.
func seqStarts(n int) []int64 {
	s := make([]int64, n+1)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}

// TestTimes: a datetime and a duration stream get their exact range, as ticks and as text,
// over several chunks; the ticks of a datetime exceed float64's exact integers, so a range
// kept as float64 would be off.
func TestTimes(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "when", Storage: mlfeed.Dense, Type: mlfeed.DateTime, Dim: 1},
		{Name: "span", Storage: mlfeed.Dense, Type: mlfeed.Duration, Dim: 2},
	}}
	chunk := func(when, span []int64) *mlfeed.Chunk {
		buf := func(t mlfeed.ElemType, v []int64) mlfeed.Buffer {
			b := mlfeed.NewBuffer(mlfeed.Int64, len(v))
			copy(b.Int64s(), v)
			b.Type = t
			return b
		}
		seq := []int64{0, 1, 2}
		return &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: buf(mlfeed.DateTime, when)}, {SeqStart: seq, Values: buf(mlfeed.Duration, span)}}}
	}
	src, err := mlfeed.NewMemorySource(sc,
		chunk([]int64{638397614451234567, 638397614451234561}, []int64{5, -938_845_000_000, 0, 7}),
		chunk([]int64{638397614451234569, 638397614451234562}, []int64{1, 2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compute(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Times{
		{Min: 638397614451234561, Max: 638397614451234569, MinText: "2024-01-02T03:04:05.1234561", MaxText: "2024-01-02T03:04:05.1234569"},
		{Min: -938_845_000_000, Max: 7, MinText: "-1.02:04:44.5", MaxText: "00:00:00.0000007"},
	}
	for k, s := range r.Streams {
		if s.Times == nil || *s.Times != want[k] || s.Numeric != nil || s.Values != int64(4*sc.Streams[k].Dim) {
			t.Errorf("%s: %+v, want %+v", s.Name, s.Times, want[k])
		}
	}
}
