package minibatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// mixed is a test mixture: its source, and the data sets' memSources.
type mixed struct {
	x    *Mixed
	srcs []*memSource
}

func newMixed(t *testing.T, stop Stop, weights []float64, schedule []MixPhase, srcs ...*memSource) *mixed {
	t.Helper()
	m := Mix{Stop: stop, Schedule: schedule}
	for i, s := range srcs {
		m.Sources = append(m.Sources, MixSource{Name: fmt.Sprint("set", i), Source: s, Weight: weights[i]})
	}
	x, err := NewMix(m)
	if err != nil {
		t.Fatal(err)
	}
	return &mixed{x, srcs}
}

// mixBatch is a minibatch of a mixture: its sequences as (data set, sequence) pairs.
type mixBatch struct {
	Sweep    int64
	Seqs     [][2]int
	Global   int64
	Position int64
	EOS      bool
}

// collectMix reads up to n minibatches, checking that each sequence carries its own data.
func collectMix(t *testing.T, r *Reader, m *mixed, n int) []mixBatch {
	t.Helper()
	var out []mixBatch
	for len(out) < n && r.Next() {
		b := r.Batch()
		s := mixBatch{Sweep: b.Sweep, Global: b.GlobalSamples, Position: b.Position, EOS: b.EndOfSweep}
		for q := 0; q < b.Sequences; q++ {
			o := b.Origins[q]
			k, c := m.x.locate(o.Chunk)
			g := m.srcs[k].first[c] + o.Index
			x := b.Data.Streams[0]
			if v := x.Values.Float32s()[2*x.SeqStart[q]]; int(v) != g {
				t.Fatalf("sequence %d of data set %d carries data of %v", g, k, v)
			}
			s.Seqs = append(s.Seqs, [2]int{k, g})
		}
		out = append(out, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// perSet returns, per data set, its sequences in the order the minibatches deliver them.
func perSet(bs []mixBatch, sets int) [][]int {
	out := make([][]int, sets)
	for _, b := range bs {
		for _, s := range b.Seqs {
			out[s[0]] = append(out[s[0]], s[1])
		}
	}
	return out
}

// TestMixShares draws 1,000 minibatches of 32 from three data sets weighted 0.5, 0.3 and 0.2
// (no stopping): each data set's share of the 32,000 sequences is within four standard
// deviations of the binomial's mean, and each data set's sequences come sweep after sweep,
// every sweep a permutation (no sequence twice within a sweep).
func TestMixShares(t *testing.T) {
	srcs := []*memSource{uniform(600, 1, 10), uniform(300, 1, 7), uniform(100, 1, 9)}
	w := []float64{0.5, 0.3, 0.2}
	m := newMixed(t, Never, w, nil, srcs...)
	const mbs, mb = 1000, 32
	r := mustNew(t, m.x, Config{MinibatchSize: mb, RandomizationSeed: 11, RandomizationWindow: 5, MaxSamples: mbs * mb})
	bs := collectMix(t, r, m, 1<<20)
	if len(bs) != mbs {
		t.Fatalf("%d minibatches, want %d", len(bs), mbs)
	}
	sets := perSet(bs, 3)
	n := float64(mbs * mb)
	for i, p := range w {
		got := float64(len(sets[i]))
		sigma := math.Sqrt(n * p * (1 - p))
		t.Logf("data set %d: weight %.2f, %d of %d sequences (%.4f), expected %.0f ± %.1f (4 sigma %.0f)", i, p, len(sets[i]), int(n), got/n, n*p, sigma, 4*sigma)
		if math.Abs(got-n*p) > 4*sigma {
			t.Errorf("data set %d: %d sequences, expected %.0f within 4 sigma = %.0f", i, len(sets[i]), n*p, 4*sigma)
		}
		checkSweeps(t, i, sets[i], len(srcs[i].infos), srcs[i])
	}
}

// checkSweeps checks that a data set's sequences come as whole sweeps, each a permutation.
func checkSweeps(t *testing.T, set int, seqs []int, _ int, src *memSource) {
	t.Helper()
	n64, _ := mlfeed.Totals(src.infos)
	n := int(n64)
	for s := 0; s*n < len(seqs); s++ {
		sweep := slices.Clone(seqs[s*n : min(len(seqs), (s+1)*n)])
		slices.Sort(sweep)
		if len(slices.Compact(sweep)) != len(sweep) {
			t.Fatalf("data set %d: a sequence comes twice in sweep %d", set, s)
		}
	}
}

// TestMixOwnOrder: a data set's sequences come in the order its own randomizer gives them
// (the first data set's is the order it has alone).
func TestMixOwnOrder(t *testing.T) {
	a, b := uniform(120, 1, 10), jagged(80, 9)
	m := newMixed(t, Never, []float64{1, 1}, nil, a, b)
	cfg := Config{MinibatchSize: 16, RandomizationSeed: 3, RandomizationWindow: 4, MaxSamples: 600}
	sets := perSet(collectMix(t, mustNew(t, m.x, cfg), m, 1<<20), 2)
	alone := Config{MinibatchSize: 1, RandomizationSeed: 3, RandomizationWindow: 4, MaxSweeps: 5}
	var want []int
	for _, s := range collect(t, mustNew(t, a, alone), a, 1<<20) {
		want = append(want, s.Seqs...)
	}
	if !slices.Equal(sets[0], want[:len(sets[0])]) {
		t.Fatalf("data set 0 is not read in its own order:\n%v\n%v", sets[0][:20], want[:20])
	}
	alone.RandomizationSeed = 3 + 1<<32
	want = want[:0]
	for _, s := range collect(t, mustNew(t, b, alone), b, 1<<20) {
		want = append(want, s.Seqs...)
	}
	if !slices.Equal(sets[1], want[:len(sets[1])]) {
		t.Fatalf("data set 1 is not read in its own order (seed + 1<<32)")
	}
}

// TestMixRestore restores a mixture at every step, with 1, 2 and 3 workers, across mixture
// sweeps, segment ends and a change of weights, and checks that the minibatches that follow
// are the uninterrupted run's; and, at every step, that a state taken with one worker count
// continues with another (every minibatch's sequences, over the ranks, those of the single
// worker's, and a state of n workers continues one worker's run).
func TestMixRestore(t *testing.T) {
	defer func(n int) { mixSegmentForTests = n }(mixSegmentForTests)
	restores, minibatches := 0, 0
	defer func() { t.Logf("%d restores compared, over %d minibatches", restores, minibatches) }()
	segs := []int{7, 0} // segments of 7 sequences cross their ends often; 0: the default
	if testing.Short() {
		segs = segs[:1]
	}
	for _, seg := range segs {
		mixSegmentForTests = seg
		for _, stop := range []Stop{FirstExhausted, AllExhausted, Never} {
			a, b, c := uniform(90, 1, 8), jagged(60, 7), uniform(40, 1, 40)
			m := newMixed(t, stop, []float64{0.5, 0.3, 0.2}, []MixPhase{{At: 100, Weights: []float64{0.1, 0.1, 0.8}}}, a, b, c)
			base := Config{MinibatchSize: 10, RandomizationSeed: 5, RandomizationWindow: 3, MaxSweeps: 3, MaxSamples: 500, EpochSize: 45}
			single := collectMix(t, mustNew(t, m.x, base), m, 1<<20)
			for _, n := range []int{1, 2, 3} {
				for _, mode := range []Distribution{Balanced, CNTKCompatible} {
					cfg := base
					cfg.Workers, cfg.Distribution = n, mode
					union := make([][][2]int, len(single))
					for rank := range n {
						cfg.Rank = rank
						full := collectMix(t, mustNew(t, m.x, cfg), m, 1<<20)
						if len(full) != len(single) {
							t.Fatalf("%v workers %d: %d minibatches, one worker %d", stop, n, len(full), len(single))
						}
						for k := range full {
							union[k] = append(union[k], full[k].Seqs...)
						}
						for k := 0; k <= len(full); k++ {
							r := mustNew(t, m.x, cfg)
							collectMix(t, r, m, k)
							st := roundTrip(t, r.State())
							r2 := mustNew(t, m.x, cfg)
							if err := r2.Restore(st); err != nil {
								t.Fatal(err)
							}
							if got := collectMix(t, r2, m, 1<<20); !reflect.DeepEqual(got, full[k:]) && !(len(got) == 0 && k == len(full)) {
								t.Fatalf("seg %d %v, %d workers (mode %d), rank %d: restore after %d minibatches differs", seg, stop, n, mode, rank, k)
							}
							restores += 2
							minibatches += len(full) - k + len(single) - k
							// The same state continues one worker's run.
							one := mustNew(t, m.x, base)
							if err := one.Restore(st); err != nil {
								t.Fatal(err)
							}
							if got := collectMix(t, one, m, 1<<20); !reflect.DeepEqual(got, single[k:]) && !(len(got) == 0 && k == len(single)) {
								t.Fatalf("seg %d %v: a state of %d workers after %d minibatches, restored into one, differs", seg, stop, n, k)
							}
						}
					}
					for k := range single {
						want := slices.Clone(single[k].Seqs)
						got := union[k]
						slices.SortFunc(want, cmpPair)
						slices.SortFunc(got, cmpPair)
						if !slices.Equal(got, want) {
							t.Fatalf("%v: minibatch %d over %d workers holds %v, one worker %v", stop, k, n, got, want)
						}
					}
					// A state of one worker continues with n workers.
					for k := range single {
						r := mustNew(t, m.x, base)
						collectMix(t, r, m, k)
						st := roundTrip(t, r.State())
						parts := make([][][2]int, len(single)-k)
						for rank := range n {
							cfg.Rank = rank
							r2 := mustNew(t, m.x, cfg)
							if err := r2.Restore(st); err != nil {
								t.Fatal(err)
							}
							rest := collectMix(t, r2, m, 1<<20)
							restores++
							minibatches += len(rest)
							if len(rest) != len(parts) {
								t.Fatalf("%v: %d minibatches after restoring into %d workers, want %d", stop, len(rest), n, len(parts))
							}
							for q := range rest {
								parts[q] = append(parts[q], rest[q].Seqs...)
							}
						}
						for q := range parts {
							want := slices.Clone(single[k+q].Seqs)
							slices.SortFunc(want, cmpPair)
							slices.SortFunc(parts[q], cmpPair)
							if !slices.Equal(parts[q], want) {
								t.Fatalf("%v: a 1-worker state after %d minibatches into %d workers: minibatch %d differs", stop, k, n, q)
							}
						}
					}
				}
			}
		}
	}
}

func cmpPair(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

func roundTrip(t *testing.T, st State) State {
	t.Helper()
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMixSegmentsDoNotMatter: the minibatches are the same whatever the segments' size.
func TestMixSegmentsDoNotMatter(t *testing.T) {
	defer func(n int) { mixSegmentForTests = n }(mixSegmentForTests)
	a, b := jagged(70, 6), uniform(50, 1, 5)
	m := newMixed(t, AllExhausted, []float64{2, 1}, nil, a, b)
	cfg := Config{MinibatchSize: 9, RandomizationSeed: 2, MaxSweeps: 3}
	want := collectMix(t, mustNew(t, m.x, cfg), m, 1<<20)
	for _, seg := range []int{1, 2, 5, 13} {
		mixSegmentForTests = seg
		if got := collectMix(t, mustNew(t, m.x, cfg), m, 1<<20); !reflect.DeepEqual(got, want) {
			t.Fatalf("segments of %d sequences change the minibatches", seg)
		}
	}
}

// TestMixSchedule: the weights change at the schedule's position; shares before and after
// are within 4 sigma of each phase's weights.
func TestMixSchedule(t *testing.T) {
	a, b := uniform(500, 1, 10), uniform(500, 1, 10)
	const at = 8000
	m := newMixed(t, Never, []float64{0.9, 0.1}, []MixPhase{{At: at, Weights: []float64{0.25, 0.75}}}, a, b)
	bs := collectMix(t, mustNew(t, m.x, Config{MinibatchSize: 50, RandomizationSeed: 1, MaxSamples: 2 * at}), m, 1<<20)
	var count [2][2]float64 // phase, data set
	for _, b := range bs {
		ph := 0
		if b.Position > at {
			ph = 1
		}
		for _, s := range b.Seqs {
			count[ph][s[0]]++
		}
	}
	for ph, p := range []float64{0.9, 0.25} {
		n := count[ph][0] + count[ph][1]
		sigma := math.Sqrt(n * p * (1 - p))
		t.Logf("phase %d: data set 0 gave %.0f of %.0f (%.4f), weight %.2f, 4 sigma %.0f", ph, count[ph][0], n, count[ph][0]/n, p, 4*sigma)
		if math.Abs(count[ph][0]-n*p) > 4*sigma {
			t.Errorf("phase %d: data set 0 gave %.0f of %.0f, expected %.0f within %.0f", ph, count[ph][0], n, n*p, 4*sigma)
		}
	}
}

// TestMixStop checks the stopping rules' sweeps.
func TestMixStop(t *testing.T) {
	small, big := uniform(30, 1, 6), uniform(200, 1, 10)
	t.Run("first_exhausted", func(t *testing.T) {
		m := newMixed(t, FirstExhausted, []float64{1, 1}, nil, small, big)
		bs := collectMix(t, mustNew(t, m.x, Config{MinibatchSize: 8, RandomizationSeed: 4, MaxSweeps: 3}), m, 1<<20)
		sweeps := splitSweeps(t, bs)
		if len(sweeps) != 3 {
			t.Fatalf("%d mixture sweeps, want 3", len(sweeps))
		}
		for s, seqs := range sweeps {
			sets := perSet([]mixBatch{{Seqs: seqs}}, 2)
			// The sweep ends with the sequence that ends the small data set's (or, rarely,
			// the big one's) sweep; each is a part of one sweep of its data set, no repeat.
			last := seqs[len(seqs)-1][0]
			if len(sets[last]) != []int{30, 200}[last] || len(sets[1-last]) >= []int{30, 200}[1-last] {
				t.Fatalf("sweep %d: %d and %d sequences, ending with data set %d", s, len(sets[0]), len(sets[1]), last)
			}
			for i := range sets {
				sorted := slices.Clone(sets[i])
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != len(sets[i]) {
					t.Fatalf("sweep %d: data set %d repeats a sequence", s, i)
				}
			}
			t.Logf("first_exhausted sweep %d: %d + %d sequences", s, len(sets[0]), len(sets[1]))
		}
	})
	t.Run("all_exhausted", func(t *testing.T) {
		m := newMixed(t, AllExhausted, []float64{1, 1}, nil, small, big)
		bs := collectMix(t, mustNew(t, m.x, Config{MinibatchSize: 8, RandomizationSeed: 4, MaxSweeps: 2}), m, 1<<20)
		sweeps := splitSweeps(t, bs)
		if len(sweeps) != 2 {
			t.Fatalf("%d mixture sweeps, want 2", len(sweeps))
		}
		for s, seqs := range sweeps {
			sets := perSet([]mixBatch{{Seqs: seqs}}, 2)
			for i, n := range []int{30, 200} {
				seen := map[int]bool{}
				for _, g := range sets[i] {
					seen[g] = true
				}
				if len(seen) != n {
					t.Fatalf("sweep %d: data set %d gave %d distinct of %d", s, i, len(seen), n)
				}
			}
			// It ends as the big data set ends its sweep: its last sequence is the sweep's.
			if len(sets[1]) != 200 || seqs[len(seqs)-1][0] != 1 {
				t.Fatalf("sweep %d: the big data set gave %d, the last sequence is data set %d's", s, len(sets[1]), seqs[len(seqs)-1][0])
			}
			t.Logf("all_exhausted sweep %d: %d + %d sequences", s, len(sets[0]), len(sets[1]))
		}
	})
	t.Run("never", func(t *testing.T) {
		m := newMixed(t, Never, []float64{1, 1}, nil, small, big)
		bs := collectMix(t, mustNew(t, m.x, Config{MinibatchSize: 8, MaxSamples: 1000, MaxSweeps: 1}), m, 1<<20)
		if n := len(bs); n != 125 || bs[n-1].Position != 1000 {
			t.Fatalf("%d minibatches to position %d, want 125 to 1000", n, bs[n-1].Position)
		}
		for _, b := range bs {
			if b.EOS || b.Sweep != 0 {
				t.Fatal("a mixture that never stops ended a sweep")
			}
		}
	})
}

// splitSweeps cuts minibatches into mixture sweeps at EndOfSweep, checking Sweep numbers.
func splitSweeps(t *testing.T, bs []mixBatch) [][][2]int {
	t.Helper()
	var out [][][2]int
	var cur [][2]int
	for _, b := range bs {
		if b.Sweep != int64(len(out)) {
			t.Fatalf("minibatch of sweep %d in sweep %d", b.Sweep, len(out))
		}
		cur = append(cur, b.Seqs...)
		if b.EOS {
			out = append(out, cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("the last mixture sweep did not end (%d sequences)", len(cur))
	}
	return out
}

// TestMixSetPosition: CNTK's state of a position alone seeks a mixture (by replay).
func TestMixSetPosition(t *testing.T) {
	a, b := jagged(50, 6), uniform(40, 1, 5)
	m := newMixed(t, AllExhausted, []float64{1, 3}, nil, a, b)
	cfg := Config{MinibatchSize: 7, RandomizationSeed: 9, MaxSweeps: 3}
	full := collectMix(t, mustNew(t, m.x, cfg), m, 1<<20)
	for _, k := range []int{1, 5, len(full) / 2, len(full) - 1} {
		r := mustNew(t, m.x, cfg)
		if err := r.Restore(State{MinibatchSourcePosition: full[k-1].Position}); err != nil {
			t.Fatal(err)
		}
		if got := collectMix(t, r, m, 1<<20); !reflect.DeepEqual(got, full[k:]) {
			t.Fatalf("seeking to the position after minibatch %d differs", k)
		}
	}
}

// TestMixErrors: streams that differ, and bad weights, states and schedules.
func TestMixErrors(t *testing.T) {
	a := uniform(10, 1, 5)
	b := uniform(10, 1, 5)
	b.schema.Streams = slices.Clone(b.schema.Streams)
	b.schema.Streams[1].Dim = 50
	_, err := NewMix(Mix{Sources: []MixSource{{Name: "a", Source: a, Weight: 1}, {Name: "a", Source: a, Weight: 1}, {Name: "code/", Source: b, Weight: 1}}})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "data set 2 (code/)") || !strings.Contains(err.Error(), `stream "y"`) {
		t.Fatalf("streams that differ: %v", err)
	}
	t.Log(err)
	c := uniform(10, 1, 5)
	c.schema.Streams = c.schema.Streams[:1]
	if _, err := NewMix(Mix{Sources: []MixSource{{Source: a, Weight: 1}, {Source: c, Weight: 1}}}); err == nil || !strings.Contains(err.Error(), `lacks stream "y"`) {
		t.Fatalf("a stream fewer: %v", err)
	}
	for _, w := range [][]float64{{0, 0}, {-1, 2}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if _, err := NewMix(Mix{Sources: []MixSource{{Source: a, Weight: w[0]}, {Source: a, Weight: w[1]}}}); !errors.Is(err, ErrConfig) {
			t.Fatalf("weights %v: %v", w, err)
		}
	}
	for _, s := range [][]MixPhase{{{At: 0, Weights: []float64{1, 1}}}, {{At: 5, Weights: []float64{1}}}, {{At: 5, Weights: []float64{1, 1}}, {At: 5, Weights: []float64{1, 1}}}} {
		if _, err := NewMix(Mix{Sources: []MixSource{{Source: a, Weight: 1}, {Source: a, Weight: 1}}, Schedule: s}); !errors.Is(err, ErrConfig) {
			t.Fatalf("schedule %v: %v", s, err)
		}
	}
	many := make([]MixSource, math.MaxUint16+1)
	for i := range many {
		many[i] = MixSource{Source: a, Weight: 1}
	}
	if _, err := NewMix(Mix{Sources: many}); !errors.Is(err, ErrConfig) {
		t.Fatalf("65536 data sets: %v", err)
	}
	if _, err := NewMix(Mix{Sources: many[:3], Stop: Never + 1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("an unknown stopping rule: %v", err)
	}
	if _, err := NewMix(Mix{Sources: []MixSource{{Source: a, Weight: 1}, {Source: uniform(0, 1, 5), Weight: 1}}}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no sequence") {
		t.Fatalf("an empty data set: %v", err)
	}
	if _, err := ParseStop("sometimes"); !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	m := newMixed(t, FirstExhausted, []float64{1, 1}, nil, a, uniform(12, 1, 5))
	r := mustNew(t, m.x, Config{})
	one := mustNew(t, a, Config{})
	if err := r.Restore(one.State()); !errors.Is(err, ErrState) {
		t.Fatalf("a single data set's state restored into a mixture: %v", err)
	}
	if err := one.Restore(r.State()); !errors.Is(err, ErrState) {
		t.Fatalf("a mixture's state restored into a single data set: %v", err)
	}
	other := newMixed(t, FirstExhausted, []float64{1, 1}, nil, a, uniform(13, 1, 5))
	if err := mustNew(t, other.x, Config{}).Restore(r.State()); !errors.Is(err, ErrState) {
		t.Fatalf("a state of other data: %v", err)
	}
	st := r.State()
	st.Mix.Taken[0] = -1
	if err := r.Restore(st); !errors.Is(err, ErrState) {
		t.Fatalf("a negative count: %v", err)
	}
}

// ownChunks counts the chunks passed back to it to decode into (prev): its own, or another
// data set's, which it must never be given (they may be that data set's mapped memory).
type ownChunks struct {
	*memSource
	mu           sync.Mutex
	mine         map[*mlfeed.Chunk]bool
	own, foreign int
}

func (o *ownChunks) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	c, err := o.memSource.ReadChunk(ctx, i)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case prev == nil:
	case o.mine[prev]:
		o.own++
	default:
		o.foreign++
	}
	o.mine[c] = true
	return c, err
}

// TestMixRecyclesWithinADataSet: chunks recycled to decode into go back only to the data set
// that returned them.
func TestMixRecyclesWithinADataSet(t *testing.T) {
	a := &ownChunks{memSource: uniform(400, 1, 10), mine: map[*mlfeed.Chunk]bool{}}
	b := &ownChunks{memSource: uniform(300, 1, 10), mine: map[*mlfeed.Chunk]bool{}}
	x, err := NewMix(Mix{Stop: Never, Sources: []MixSource{{Source: a, Weight: 1}, {Source: b, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, x, Config{MinibatchSize: 16, RandomizationWindow: 3, MaxSamples: 20000, Packers: -1})
	for r.Next() {
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	t.Logf("chunks decoded into: %d and %d of the data set's own, %d and %d of the other's", a.own, b.own, a.foreign, b.foreign)
	if a.foreign+b.foreign > 0 || a.own+b.own == 0 {
		t.Fatalf("recycling: own %d+%d, foreign %d+%d", a.own, b.own, a.foreign, b.foreign)
	}
}

// TestMixWindowMemory: a mixture holds each data set's randomization window, not its whole
// data: a chunk used in two sweeps of its data set within one planned segment is let go
// between them, and each chunk is read about once per sweep of its data set.
func TestMixWindowMemory(t *testing.T) {
	a, b := uniform(2000, 1, 10), uniform(1000, 1, 10) // 200 and 100 chunks
	x, err := NewMix(Mix{Stop: Never, Sources: []MixSource{{Source: a, Weight: 2}, {Source: b, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, x, Config{MinibatchSize: 16, RandomizationWindow: 6, MaxSamples: 12000})
	peak := 0
	for r.Next() {
		held := len(r.retired) + len(r.spare)
		for _, s := range r.slots {
			if s != nil {
				held++
			}
		}
		peak = max(peak, held)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	_, ra := a.readCount()
	_, rb := b.readCount()
	t.Logf("held up to %d chunks of 300 (windows of 6); %d and %d chunk reads for about 4 sweeps of each", peak, ra, rb)
	// Both windows, the chunks read ahead, and those of the minibatches planned ahead.
	if bound := 2*6 + r.prefetch + (r.packers+2)*16/10 + 4; peak > bound {
		t.Fatalf("held up to %d chunks (bound %d)", peak, bound)
	}
	if ra > 4*200+20 || rb > 4*100+20 {
		t.Fatalf("%d and %d chunk reads for 4 sweeps of 200 and 100 chunks", ra, rb)
	}
}

// TestMixPhaseAt: the weights in force at a position are the last schedule entry's at or
// before it.
func TestMixPhaseAt(t *testing.T) {
	a := uniform(10, 1, 5)
	var sched []MixPhase
	for k := 1; k <= 50; k++ {
		sched = append(sched, MixPhase{At: int64(10 * k), Weights: []float64{float64(k), 1}})
	}
	x, err := NewMix(Mix{Sources: []MixSource{{Source: a, Weight: 0}, {Source: a, Weight: 1}}, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	m := &mixPlanner{phases: x.phases}
	for pos := int64(0); pos < 600; pos++ {
		want := min(pos/10, 50)
		if got := m.phaseAt(pos).at; got != 10*want {
			t.Fatalf("position %d: the phase from %d, want %d", pos, got, 10*want)
		}
	}
}
