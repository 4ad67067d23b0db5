package minibatch

import (
	"errors"
	"math"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// sortedLabels returns a source of n one-sample sequences in chunks of per, sorted by class:
// stream "label" holds the class (int32, one of classes, in equal runs) and stream "hot" the
// same class one-hot (float32).
func sortedLabels(t *testing.T, n, per, classes int) *mlfeed.MemorySource {
	t.Helper()
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3},
		{Name: "label", Storage: mlfeed.Dense, Type: mlfeed.Int32, Dim: 1},
		{Name: "hot", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: classes},
	}}
	var chunks []*mlfeed.Chunk
	for g := 0; g < n; g += per {
		k := min(per, n-g)
		c := &mlfeed.Chunk{Sequences: k, Streams: make([]mlfeed.StreamData, 3)}
		for i, st := range schema.Streams {
			d := &c.Streams[i]
			d.SeqStart = make([]int64, k+1)
			for q := range k {
				d.SeqStart[q+1] = int64(q + 1)
			}
			d.Values = mlfeed.NewBuffer(st.Type, k*st.Dim)
		}
		for q := range k {
			class := (g + q) * classes / n
			c.Streams[1].Values.Int32s()[q] = int32(class)
			c.Streams[2].Values.Float32s()[q*classes+class] = 1
		}
		chunks = append(chunks, c)
	}
	src, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func sweepStats(t *testing.T, src mlfeed.Source, cfg Config, label string) []SweepStats {
	t.Helper()
	r := mustNew(t, src, cfg)
	st, err := NewStats(r, label)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		st.Add(r.Batch())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return st.Sweeps()
}

// TestStatsFileOrder checks the figures of minibatches in file order over data sorted by
// class: a rank correlation of 1, one chunk a minibatch, and every minibatch of one class
// (a divergence of log2(10) bits from the data's ten equal classes).
func TestStatsFileOrder(t *testing.T) {
	src := sortedLabels(t, 10000, 100, 10)
	got := sweepStats(t, src, Config{MinibatchSize: 50, NoRandomize: true, MaxSweeps: 2}, "")
	if len(got) != 2 {
		t.Fatalf("%d sweeps", len(got))
	}
	for _, s := range got {
		if s.Minibatches != 200 || s.Sequences != 10000 || s.Chunks != 100 || s.MeanChunks != 1 || s.MinChunks != 1 || s.MaxChunks != 1 {
			t.Errorf("sweep %d: %+v", s.Sweep, s)
		}
		if s.RankCorrelation != 1 {
			t.Errorf("sweep %d: rank correlation %v in file order", s.Sweep, s.RankCorrelation)
		}
		if s.Label != "label" || s.Classes != 10 || math.Abs(s.Divergence-math.Log2(10)) > 1e-9 {
			t.Errorf("sweep %d: label %q, %d classes, divergence %v", s.Sweep, s.Label, s.Classes, s.Divergence)
		}
		if want := 9 / (2 * 50 * math.Ln2); math.Abs(s.RandomDivergence-want) > 1e-9 {
			t.Errorf("sweep %d: random divergence %v, want %v", s.Sweep, s.RandomDivergence, want)
		}
	}
}

// TestStatsWindow checks that the figures tell a whole-data shuffle from a small window:
// with the whole data set, the rank correlation is near 0, minibatches come from many chunks,
// and the label divergence is near a random draw's; with a window of one chunk of sorted
// data, nearly every minibatch is of one class again (and from one chunk or two), though the
// chunks' shuffled order puts the rank correlation near 0.
func TestStatsWindow(t *testing.T) {
	src := sortedLabels(t, 10000, 100, 10)
	whole := sweepStats(t, src, Config{MinibatchSize: 50, MaxSweeps: 1, RandomizationSeed: 3}, "hot")[0]
	if math.Abs(whole.RankCorrelation) > 4/math.Sqrt(10000) {
		t.Errorf("whole window: rank correlation %v", whole.RankCorrelation)
	}
	if whole.MeanChunks < 35 || whole.MaxChunks > 50 {
		t.Errorf("whole window: %v chunks a minibatch (%d to %d)", whole.MeanChunks, whole.MinChunks, whole.MaxChunks)
	}
	if whole.Label != "hot" || whole.Classes != 10 || whole.Divergence > 1.5*whole.RandomDivergence || whole.Divergence < 0.5*whole.RandomDivergence {
		t.Errorf("whole window: label %q, %d classes, divergence %v against a random draw's %v",
			whole.Label, whole.Classes, whole.Divergence, whole.RandomDivergence)
	}
	small := sweepStats(t, src, Config{MinibatchSize: 50, MaxSweeps: 1, RandomizationSeed: 3, RandomizationWindow: 1}, "")[0]
	if small.MaxChunks > 2 || small.Divergence < 0.8*math.Log2(10) {
		t.Errorf("window of 1 chunk: %+v", small)
	}
}

// TestStatsLabels checks the choice of the label stream and the errors.
func TestStatsLabels(t *testing.T) {
	src := sortedLabels(t, 1000, 100, 4)
	r := mustNew(t, src, Config{MinibatchSize: 10, MaxSweeps: 1})
	if _, err := NewStats(r, "nope"); !errors.Is(err, ErrConfig) {
		t.Errorf("no such stream: %v", err)
	}
	// Without an integer stream, the one-hot stream is found.
	sel, err := mlfeed.Select(src, "x", "hot")
	if err != nil {
		t.Fatal(err)
	}
	s := sweepStats(t, sel, Config{MinibatchSize: 10, MaxSweeps: 1}, "")[0]
	if s.Label != "hot" || s.Classes != 4 {
		t.Errorf("one-hot stream: label %q, %d classes", s.Label, s.Classes)
	}
	// A stream that is not one-hot is no label: no figures, and no note unless named.
	only, err := mlfeed.Select(src, "x")
	if err != nil {
		t.Fatal(err)
	}
	if s := sweepStats(t, only, Config{MinibatchSize: 10, MaxSweeps: 1}, "")[0]; s.Label != "" || s.Classes != 0 || s.LabelNote != "" {
		t.Errorf("no label stream: %+v", s)
	}
	if s := sweepStats(t, only, Config{MinibatchSize: 10, MaxSweeps: 1, NoRandomize: true}, "x")[0]; s.Label != "" ||
		s.LabelNote != `stream "x": a sample of sequence 0 of chunk 0 is not one-hot` {
		t.Errorf("stream x named as labels: label %q, note %q", s.Label, s.LabelNote)
	}
	// Neither integer scalars nor vectors: an error.
	one, err := mlfeed.NewMemorySource(mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "f", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewStats(mustNew(t, one, Config{}), "f"); !errors.Is(err, ErrConfig) {
		t.Errorf("a stream of float scalars as labels: %v", err)
	}
}

// TestStatsNotOneHot checks that a named one-hot stream with a sample that is not one-hot
// stops the label figures with a note naming the sequence.
func TestStatsNotOneHot(t *testing.T) {
	src := sortedLabels(t, 1000, 100, 4)
	c, _ := src.ReadChunk(t.Context(), 3)
	c.Streams[2].Values.Float32s()[7*4+1] = 0.5 // sequence 7 of chunk 3
	s := sweepStats(t, src, Config{MinibatchSize: 10, MaxSweeps: 1, NoRandomize: true}, "hot")[0]
	if s.Label != "" || s.LabelNote != `stream "hot": a sample of sequence 7 of chunk 3 is not one-hot` {
		t.Errorf("label %q, note %q", s.Label, s.LabelNote)
	}
}

// TestSpearman checks the rank correlation against orders whose value is known.
func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		data []int64
		want float64
	}{
		{[]int64{10, 20, 30, 40}, 1},
		{[]int64{40, 30, 20, 10}, -1},
		{[]int64{2, 1, 4, 3}, 0.6}, // d^2 = 4: 1 - 24/60
		{[]int64{5}, 0},
	} {
		if got := spearman(tc.data); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%v: %v, want %v", tc.data, got, tc.want)
		}
	}
}
