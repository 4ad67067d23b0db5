package minibatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
)

type summary struct {
	Sweep    int64
	Seqs     []int
	Global   int64
	Position int64
	EOS      bool
}

func collect(t *testing.T, r *Reader, src *memSource, n int) []summary {
	t.Helper()
	var out []summary
	for len(out) < n && r.Next() {
		b := r.Batch()
		s := summary{Sweep: b.Sweep, Global: b.GlobalSamples, Position: b.Position, EOS: b.EndOfSweep}
		for q := 0; q < b.Sequences; q++ {
			g := src.global(b, q)
			s.Seqs = append(s.Seqs, g)
			// The data must be the sequence's own.
			x := b.Data.Streams[0]
			if v := x.Values.Float32s()[2*x.SeqStart[q]]; int(v) != g {
				t.Fatalf("sequence %d carries data of %v", g, v)
			}
		}
		out = append(out, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustNew(t *testing.T, src mlfeed.Source, cfg Config) *Reader {
	t.Helper()
	r, err := New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestFileOrderJagged(t *testing.T) {
	lens := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}
	src := newMemSource(lens, []int{4, 3, 3})
	r := mustNew(t, src, Config{NoRandomize: true, MinibatchSize: 6, MaxSweeps: 2})
	got := collect(t, r, src, 100)
	// Whole sequences while the total stays <= 6, at least one, never across the sweep end.
	want := [][]int{{0, 1}, {2, 3}, {4}, {5}, {6}, {7}, {8}, {9}, {0, 1}, {2, 3}, {4}, {5}, {6}, {7}, {8}, {9}}
	if len(got) != len(want) {
		t.Fatalf("%d batches: %+v", len(got), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Seqs, want[i]) {
			t.Fatalf("batch %d = %v, want %v", i, got[i].Seqs, want[i])
		}
	}
	if got[7].Sweep != 0 || !got[7].EOS || got[8].Sweep != 1 || got[15].Position != 2*39 {
		t.Fatalf("sweeps: %+v", got)
	}
}

func TestEpochsAndMaxSamples(t *testing.T) {
	src := uniform(10, 2, 3) // 20 samples per sweep
	r := mustNew(t, src, Config{NoRandomize: true, MinibatchSize: 5, EpochSize: 7, MaxSamples: 30})
	var ends []int64
	var epochEnds []bool
	for r.Next() {
		ends = append(ends, r.Batch().Position)
		epochEnds = append(epochEnds, r.Batch().EndOfEpoch)
	}
	// Batches stop at the first sequence reaching 7, 14, 20 (sweep end), 21, 28, then 30.
	want := []int64{4, 8, 12, 14, 18, 20, 22, 26, 28, 30}
	if !reflect.DeepEqual(ends, want) {
		t.Fatalf("positions %v, want %v", ends, want)
	}
	if !epochEnds[1] || epochEnds[0] || !epochEnds[3] || !epochEnds[6] {
		t.Fatalf("epoch flags %v", epochEnds)
	}
}

func TestRandomizedMatchesPlan(t *testing.T) {
	src := uniform(50, 1, 5)
	cfg := Config{MinibatchSize: 7, RandomizationSeed: 3, RandomizationWindow: 4, MaxSweeps: 3}
	got := collect(t, mustNew(t, src, cfg), src, 1000)
	rz := randomizer{randomize: true, seed: 3, window: 4}
	for _, c := range src.infos {
		rz.chunks = append(rz.chunks, chunkCounts{c.Sequences, c.Samples})
	}
	rz.sequences = 50
	var want, all []int
	for s := int64(0); s < 3; s++ {
		var p plan
		rz.plan(s, &p)
		for _, ref := range p.order {
			want = append(want, int(ref.chunk)*5+int(ref.idx))
		}
	}
	for _, b := range got {
		all = append(all, b.Seqs...)
	}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("order differs from the plan")
	}
	if reflect.DeepEqual(want[:50], want[50:100]) {
		t.Fatal("sweeps 0 and 1 have the same order")
	}
	// Determinism: a second reader gives the same batches.
	if again := collect(t, mustNew(t, src, cfg), src, 1000); !reflect.DeepEqual(again, got) {
		t.Fatal("not deterministic")
	}
	// Every sweep is a permutation, and sequences stay near their chunk (window 4 chunks).
	for s := 0; s < 3; s++ {
		seen := map[int]bool{}
		for _, g := range want[s*50 : s*50+50] {
			seen[g] = true
		}
		if len(seen) != 50 {
			t.Fatalf("sweep %d is not a permutation", s)
		}
	}
}

// TestReaderExpectedOrders runs CNTK's randomizer vectors through the Reader with every
// minibatch size 1..11, as CNTK's tests do.
func TestReaderExpectedOrders(t *testing.T) {
	_, cases := loadOrders(t)
	for _, c := range cases {
		if c.Expected == nil {
			continue
		}
		for mb := 1; mb <= 11; mb++ {
			src := uniform(c.Chunks*c.SeqsPerChunk, 1, c.SeqsPerChunk)
			cfg := Config{MinibatchSize: mb, RandomizationSeed: c.SeedOffset, SampleBasedRandomizationWindow: c.SampleBasedWindow,
				NoRandomize: c.Randomizer == "none", EpochSize: int64(c.EpochSize)}
			if w, ok := c.Window.(float64); ok {
				cfg.RandomizationWindow = int64(w)
			}
			r := mustNew(t, src, cfg)
			if err := r.SetPosition(c.EpochIndex * int64(c.EpochSize)); err != nil {
				t.Fatal(err)
			}
			var got []int
			for r.Next() {
				b := r.Batch()
				for q := 0; q < b.Sequences; q++ {
					got = append(got, src.global(b, q))
				}
				if b.EndOfEpoch {
					break
				}
			}
			if !equalInts(got, c.Expected) {
				t.Errorf("%s, minibatch %d: got %v, want %v", c.Name, mb, got, c.Expected)
			}
		}
	}
}

func TestDistributed(t *testing.T) {
	layouts := []struct {
		name string
		src  *memSource
	}{
		{"one chunk", uniform(1000, 1, 1000)},
		{"three chunks", uniform(999, 1, 400)},
		{"many chunks", uniform(1000, 1, 7)},
		{"jagged", jagged(600, 37)},
	}
	for _, l := range layouts {
		for _, randomize := range []bool{true, false} {
			for _, mode := range []Distribution{Balanced, CNTKCompatible} {
				for n := 1; n <= 8; n++ {
					name := fmt.Sprintf("%s/randomize=%v/mode=%d/N=%d", l.name, randomize, mode, n)
					checkDistributed(t, name, l.src, n, mode, randomize)
				}
			}
		}
	}
}

func jagged(n, per int) *memSource {
	lens := make([]int, n)
	for i := range lens {
		lens[i] = 1 + (i*7919)%5
	}
	var sizes []int
	for left := n; left > 0; left -= per {
		sizes = append(sizes, min(per, left))
	}
	return newMemSource(lens, sizes)
}

func checkDistributed(t *testing.T, name string, src *memSource, n int, mode Distribution, randomize bool) {
	var total int64
	for _, c := range src.infos {
		total += c.Samples
	}
	count := map[[2]int]int{} // (sweep, sequence) -> deliveries
	var reference []summary
	for rank := 0; rank < n; rank++ {
		r := mustNew(t, src, Config{MinibatchSize: 64, NoRandomize: !randomize, RandomizationWindow: 3, MaxSweeps: 2, Workers: n, Rank: rank, Distribution: mode})
		var got []summary
		samples := [2]int64{}
		for r.Next() {
			b := r.Batch()
			got = append(got, summary{Sweep: b.Sweep, Position: b.Position, Global: b.GlobalSamples})
			samples[b.Sweep] += b.Samples
			for q := 0; q < b.Sequences; q++ {
				count[[2]int{int(b.Sweep), src.global(b, q)}]++
			}
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Every worker walks the same global timeline.
		if rank == 0 {
			reference = got
		} else if !reflect.DeepEqual(got, reference) {
			t.Fatalf("%s: rank %d's minibatch boundaries differ from rank 0's", name, rank)
		}
		if mode == Balanced {
			share := float64(total) / float64(n)
			for s, got := range samples {
				if math.Abs(float64(got)-share) > 0.05*share {
					t.Errorf("%s: rank %d got %d samples in sweep %d, share %.0f", name, rank, got, s, share)
				}
			}
		}
	}
	seqs := 0
	for _, c := range src.infos {
		seqs += c.Sequences
	}
	if len(count) != 2*seqs {
		t.Fatalf("%s: %d of %d sequences delivered", name, len(count), 2*seqs)
	}
	for k, c := range count {
		if c != 1 {
			t.Fatalf("%s: sequence %v delivered %d times", name, k, c)
		}
	}
}

func TestCNTKNoFirstMinibatchData(t *testing.T) {
	// One chunk, two workers: CNTK gives rank 1 nothing; the balanced default halves it.
	src := uniform(10, 1, 10)
	r := mustNew(t, src, Config{MinibatchSize: 4, MaxSweeps: 1, Workers: 2, Rank: 1, Distribution: CNTKCompatible})
	for _, b := range collect(t, r, src, 100) {
		if len(b.Seqs) != 0 {
			t.Fatalf("rank 1 got %v", b.Seqs)
		}
	}
	r = mustNew(t, src, Config{MinibatchSize: 4, MaxSweeps: 1, Workers: 2, Rank: 1})
	n := 0
	for _, b := range collect(t, r, src, 100) {
		n += len(b.Seqs)
	}
	if n != 5 {
		t.Fatalf("balanced rank 1 got %d sequences", n)
	}
}

func TestWorkersFromEnvironment(t *testing.T) {
	t.Setenv("WORLD_SIZE", "4")
	t.Setenv("RANK", "3")
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, uniform(8, 1, 8), cfg)
	if r.pl.workers != 4 || r.pl.rank != 3 {
		t.Fatalf("workers %d rank %d", r.pl.workers, r.pl.rank)
	}
	if r := mustNew(t, uniform(8, 1, 8), Config{}); r.pl.workers != 1 || r.pl.rank != 0 {
		t.Fatalf("the zero Config read the environment: workers %d rank %d", r.pl.workers, r.pl.rank)
	}
	t.Setenv("RANK", "4")
	if _, err := ConfigFromEnv(); !errors.Is(err, ErrConfig) {
		t.Fatalf("rank 4 of 4: %v", err)
	}
}

func TestRestore(t *testing.T) {
	srcs := map[string]*memSource{"uniform": uniform(200, 1, 9), "jagged": jagged(150, 11)}
	for name, src := range srcs {
		for _, n := range []int{1, 3} {
			for _, mode := range []Distribution{Balanced, CNTKCompatible} {
				cfg := Config{MinibatchSize: 10, RandomizationSeed: 5, RandomizationWindow: 4, MaxSweeps: 4, Workers: n, Distribution: mode}
				for rank := 0; rank < n; rank++ {
					cfg.Rank = rank
					full := collect(t, mustNew(t, src, cfg), src, 1<<20)
					for _, k := range []int{0, 1, 7, len(full) / 3, len(full)/2 + 1, len(full) - 1} {
						r := mustNew(t, src, cfg)
						collect(t, r, src, k)
						data, err := json.Marshal(r.State())
						if err != nil {
							t.Fatal(err)
						}
						var st State
						if err := json.Unmarshal(data, &st); err != nil {
							t.Fatal(err)
						}
						r2 := mustNew(t, src, cfg)
						if err := r2.Restore(st); err != nil {
							t.Fatal(err)
						}
						rest := collect(t, r2, src, 1<<20)
						if !reflect.DeepEqual(rest, full[k:]) {
							t.Fatalf("%s N=%d rank %d mode %d: restore after %d batches differs (%s)", name, n, rank, mode, k, data)
						}
					}
				}
				// A state from one worker count continues any other: the union over ranks of
				// what follows is what follows in a single worker.
				cfg.Workers, cfg.Rank = 1, 0
				single := mustNew(t, src, cfg)
				collect(t, single, src, 5)
				st := single.State()
				want := map[int]int{}
				for _, b := range collect(t, single, src, 1<<20) {
					for _, g := range b.Seqs {
						want[g]++
					}
				}
				got := map[int]int{}
				for rank := 0; rank < 4; rank++ {
					r := mustNew(t, src, Config{MinibatchSize: 10, RandomizationSeed: 5, RandomizationWindow: 4, MaxSweeps: 4, Workers: 4, Rank: rank, Distribution: mode})
					if err := r.Restore(st); err != nil {
						t.Fatal(err)
					}
					for _, b := range collect(t, r, src, 1<<20) {
						for _, g := range b.Seqs {
							got[g]++
						}
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: restoring a 1-worker state into 4 workers loses or repeats sequences", name)
				}
			}
		}
	}
}

func TestRestoreChecks(t *testing.T) {
	src := uniform(20, 1, 5)
	r := mustNew(t, src, Config{RandomizationSeed: 1})
	st := r.State()
	st.Seed = 2
	if err := r.Restore(st); !errors.Is(err, ErrState) {
		t.Fatalf("seed mismatch: %v", err)
	}
	other := mustNew(t, uniform(21, 1, 5), Config{RandomizationSeed: 1})
	if err := other.Restore(r.State()); !errors.Is(err, ErrState) {
		t.Fatalf("data mismatch: %v", err)
	}
	// CNTK's own state: a bare position.
	var cntk State
	if err := json.Unmarshal([]byte(`{"minibatchSourcePosition": 27}`), &cntk); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(cntk); err != nil || r.Position() != 27 {
		t.Fatalf("CNTK state: %v, position %d", err, r.Position())
	}
}

func TestFrameMode(t *testing.T) {
	src := uniform(10, 1, 4)
	r := mustNew(t, src, Config{FrameMode: true, MinibatchSize: 4, NoRandomize: true, MaxSweeps: 1})
	if !r.Next() {
		t.Fatal(r.Err())
	}
	if l := r.Batch().Layouts[0]; l.Rows != 4 || l.Width != 1 {
		t.Fatalf("layout %+v", l)
	}
	src = newMemSource([]int{1, 2, 1}, []int{3})
	r = mustNew(t, src, Config{FrameMode: true, MinibatchSize: 4, NoRandomize: true})
	for r.Next() {
	}
	if !errors.Is(r.Err(), ErrFrameMode) {
		t.Fatalf("err = %v", r.Err())
	}
}

func TestReadOnlyNeededChunks(t *testing.T) {
	src := uniform(1000, 1, 10) // 100 chunks
	r := mustNew(t, src, Config{MinibatchSize: 32, RandomizationWindow: 8, MaxSweeps: 1, Workers: 4, Rank: 2})
	collect(t, r, src, 1<<20)
	chunks, total := src.readCount()
	if chunks > 27 || total != chunks {
		t.Fatalf("rank 2 of 4 read %d chunks (%d reads)", chunks, total)
	}
}

// TestWindowMemory checks that a window of 6 chunks holds about 6 chunks, counting those being
// read or read ahead, those that minibatches packed ahead still read, and the spares kept to
// decode into.
func TestWindowMemory(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		mem := uniform(2000, 1, 10) // 200 chunks
		var src mlfeed.Source = mem
		if reuse {
			src = &reusingSource{memSource: mem}
		}
		r := mustNew(t, src, Config{MinibatchSize: 16, RandomizationWindow: 6, MaxSweeps: 2})
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
		// The window, the chunks read ahead, and those that minibatches planned but not yet
		// packed still read (a pool of minibatches of 16 sequences, from chunks of 10).
		if bound := 6 + r.prefetch + (r.packers+2)*16/10 + 2; peak > bound {
			t.Fatalf("reuse %v: held up to %d chunks with a window of 6 (bound %d)", reuse, peak, bound)
		}
		if _, total := mem.readCount(); total > 2*200+8 {
			t.Fatalf("reuse %v: %d chunk reads for 2 sweeps of 200 chunks", reuse, total)
		}
	}
}

// Chunks kept to decode into (spares) do not pile up on top of a full window: the chunks held
// for the window and the read-ahead, and the spares, stay within the window plus twice the
// read-ahead at every minibatch (they reached about twice the window), while nearly every
// chunk read after the first sweep is still decoded into a spare.
func TestWindowMemorySpares(t *testing.T) {
	for _, window := range []int64{6, 20} {
		for _, per := range []int{10, 1000} {
			mem := uniform(40*per, 1, per) // 40 chunks
			src := &reusingSource{memSource: mem}
			r := mustNew(t, src, Config{MinibatchSize: 16, RandomizationWindow: window, MaxSweeps: 3})
			peak := 0
			for r.Next() {
				held := len(r.spare)
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
			// The window (and one chunk it straddles), the chunks read ahead, and as many spares.
			if bound := int(window) + 1 + 2*r.prefetch; peak > bound {
				t.Errorf("window %d, %d sequences a chunk: %d chunks held and spare (bound %d)", window, per, peak, bound)
			}
			if _, total := mem.readCount(); src.reused.Load() < int64(total)-40-window-int64(r.prefetch) {
				t.Errorf("window %d, %d sequences a chunk: %d of %d reads decoded into a spare", window, per, src.reused.Load(), total)
			}
		}
	}
}

func TestPacking(t *testing.T) {
	src := newMemSource([]int{2, 1, 1, 3}, []int{4})
	r := mustNew(t, src, Config{NoRandomize: true, MinibatchSize: 4})
	if !r.Next() {
		t.Fatal(r.Err())
	}
	b := r.Batch()
	if b.Sequences != 3 {
		t.Fatalf("%d sequences", b.Sequences)
	}
	l := b.Layouts[0]
	// Lengths 2, 1, 1: rows [s0 s0] and [s1 s2].
	if l.Rows != 2 || l.Width != 2 || !reflect.DeepEqual(l.Row, []int{0, 1, 1}) || !reflect.DeepEqual(l.Start, []int{0, 0, 1}) {
		t.Fatalf("layout %+v", l)
	}
	if m := b.Mask(0); !reflect.DeepEqual(m, []byte{1, 1, 1, 1}) {
		t.Fatalf("mask %v", m)
	}
	// Columns t*rows+row: (s0,0) (s1,0) (s0,1) (s2,0).
	if d := b.Dense(0).Float32s(); !reflect.DeepEqual(d, []float32{0, 0, 1, 0, 0, 1, 2, 0}) {
		t.Fatalf("dense %v", d)
	}
	cs, idx, vals := b.Sparse(1)
	if !reflect.DeepEqual(cs, []int32{0, 1, 2, 3, 4}) || !reflect.DeepEqual(idx, []int32{0, 1, 0, 2}) || !reflect.DeepEqual(vals.Float64s(), []float64{0, 1, 0, 2}) {
		t.Fatalf("sparse %v %v %v", cs, idx, vals.Float64s())
	}
	keep := b.Clone()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	// A sequence longer than the minibatch comes alone; a gap-free single row needs no copy.
	b = r.Batch()
	if b.Sequences != 1 || b.Layouts[0].Rows != 1 || b.Layouts[0].Width != 3 {
		t.Fatalf("second batch %+v", b.Layouts[0])
	}
	if keep.Sequences != 3 || keep.Dense(0).Float32s()[6] != 2 {
		t.Fatal("clone changed by Next")
	}
	// Padding: lengths 3 and 1 give one row of 3 and a row with 2 gaps.
	src = newMemSource([]int{3, 1}, []int{2})
	r = mustNew(t, src, Config{NoRandomize: true, MinibatchSize: 4})
	r.Next()
	b = r.Batch()
	if m := b.Mask(0); !reflect.DeepEqual(m, []byte{1, 1, 1, 0, 1, 0}) {
		t.Fatalf("mask %v", m)
	}
	if d := b.Dense(0).Float32s(); !reflect.DeepEqual(d, []float32{0, 0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0}) {
		t.Fatalf("padded %v", d)
	}
	cs, _, _ = b.Sparse(1)
	if !reflect.DeepEqual(cs, []int32{0, 1, 2, 3, 3, 4, 4}) {
		t.Fatalf("csc %v", cs)
	}
}

func TestSteadyStateAllocations(t *testing.T) {
	src := uniform(100000, 1, 100000)
	r := mustNew(t, src, Config{MinibatchSize: 64, Prefetch: -1})
	for i := 0; i < 20; i++ {
		r.Next()
	}
	allocs := testing.AllocsPerRun(200, func() {
		if !r.Next() {
			t.Fatal(r.Err())
		}
		b := r.Batch()
		b.Mask(0)
		b.Dense(0)
		b.Sparse(1)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per minibatch", allocs)
	}
}

func TestKeepDataInMemory(t *testing.T) {
	src := uniform(300, 1, 10)
	r := mustNew(t, src, Config{MinibatchSize: 16, RandomizationWindow: 4, MaxSweeps: 3, KeepDataInMemory: true})
	got := collect(t, r, src, 1<<20)
	if chunks, total := src.readCount(); chunks != 30 || total != 30 {
		t.Fatalf("%d chunks read %d times over 3 sweeps", chunks, total)
	}
	plain := uniform(300, 1, 10)
	if want := collect(t, mustNew(t, plain, Config{MinibatchSize: 16, RandomizationWindow: 4, MaxSweeps: 3}), plain, 1<<20); !reflect.DeepEqual(got, want) {
		t.Fatal("keeping data in memory changed the minibatches")
	}
}
