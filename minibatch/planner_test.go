package minibatch

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// newPlanner returns a planner over chunks of the given sequence lengths, in file order.
func newPlanner(chunks [][]int32, mbSize int64) *planner {
	pl := &planner{mbSize: mbSize, workers: 1}
	for _, c := range chunks {
		var n int64
		for _, l := range c {
			n += int64(l)
		}
		pl.rz.chunks = append(pl.rz.chunks, chunkCounts{len(c), n})
		pl.rz.sequences += len(c)
		pl.samples += n
	}
	pl.lengths = func(c int32) ([]int32, error) { return chunks[c], nil }
	return pl
}

// plannedBatch is what the planner decided for one minibatch: this worker's sequences (as
// "chunk.index") and where it ends.
type plannedBatch struct {
	seqs []string
	st   step
}

// planAll plans every minibatch of sweeps [0, sweeps) as the Reader walks them.
func planAll(t *testing.T, pl *planner, sweeps int64) []plannedBatch {
	t.Helper()
	var out []plannedBatch
	p := &sweepPlan{}
	for s := int64(0); s < sweeps; s++ {
		if err := pl.planSweep(s, p); err != nil {
			t.Fatal(err)
		}
		next, pos := 0, s*pl.samples
		for next < len(p.order) && !pl.finished(p, pos) {
			var b plannedBatch
			st, err := pl.minibatch(p, next, pos, func(tt int, ref seqRef, n int64) error {
				b.seqs = append(b.seqs, fmt.Sprintf("%d.%d", ref.chunk, ref.idx))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			b.st = st
			out = append(out, b)
			next, pos = st.next, st.pos
		}
	}
	return out
}

func seqs(b []plannedBatch) [][]string {
	var out [][]string
	for _, x := range b {
		out = append(out, x.seqs)
	}
	return out
}

func TestPlannerMinibatches(t *testing.T) {
	jagged := [][]int32{{2, 1, 1}, {3, 1}}
	for _, tc := range []struct {
		name    string
		chunks  [][]int32
		mb      int64
		epoch   int64
		max     int64
		workers int
		rank    int
		dist    Distribution
		sweeps  int64
		want    [][]string
		ends    []step
	}{
		{name: "whole sequences up to the size", chunks: jagged, mb: 4, sweeps: 1,
			want: [][]string{{"0.0", "0.1", "0.2"}, {"1.0", "1.1"}},
			ends: []step{{next: 3, pos: 4, global: 4}, {next: 5, pos: 8, global: 4, endOfSweep: true}}},
		{name: "a sequence longer than the minibatch comes alone", chunks: jagged, mb: 2, sweeps: 1,
			want: [][]string{{"0.0"}, {"0.1", "0.2"}, {"1.0"}, {"1.1"}}},
		{name: "no minibatch crosses a sweep end", chunks: [][]int32{{1, 1, 1}}, mb: 2, sweeps: 2,
			want: [][]string{{"0.0", "0.1"}, {"0.2"}, {"0.0", "0.1"}, {"0.2"}}},
		{name: "epoch ends cut minibatches", chunks: [][]int32{{1, 1, 1, 1, 1}}, mb: 4, epoch: 3, sweeps: 1,
			want: [][]string{{"0.0", "0.1", "0.2"}, {"0.3", "0.4"}},
			ends: []step{{next: 3, pos: 3, global: 3, endOfEpoch: true}, {next: 5, pos: 5, global: 2, endOfSweep: true}}},
		{name: "max samples stops at the first minibatch reaching it", chunks: [][]int32{{1, 1, 1, 1, 1}}, mb: 2, max: 3, sweeps: 1,
			want: [][]string{{"0.0", "0.1"}, {"0.2"}}},
		{name: "balanced: rank 0 of 2 takes the first half of the samples", chunks: jagged, mb: 4, workers: 2, rank: 0, sweeps: 1,
			want: [][]string{{"0.0", "0.1", "0.2"}, nil}},
		{name: "balanced: rank 1 of 2", chunks: jagged, mb: 4, workers: 2, rank: 1, sweeps: 1,
			want: [][]string{nil, {"1.0", "1.1"}}},
		{name: "CNTK-compatible without randomization: by position", chunks: jagged, mb: 4, workers: 2, rank: 1, dist: CNTKCompatible, sweeps: 1,
			want: [][]string{{"0.1"}, {"1.0"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlanner(tc.chunks, tc.mb)
			pl.epochSize, pl.maxSamples = tc.epoch, tc.max
			if tc.workers > 0 {
				pl.workers, pl.rank, pl.distribution = tc.workers, tc.rank, tc.dist
			}
			got := planAll(t, pl, tc.sweeps)
			if !reflect.DeepEqual(seqs(got), tc.want) {
				t.Fatalf("minibatches %v, want %v", seqs(got), tc.want)
			}
			for i, e := range tc.ends {
				if got[i].st != e {
					t.Fatalf("minibatch %d ends %+v, want %+v", i, got[i].st, e)
				}
			}
		})
	}
}

// TestPlannerNeeds checks the chunks a worker needs, in order of first use, and their last
// uses, under a randomization window.
func TestPlannerNeeds(t *testing.T) {
	chunks := make([][]int32, 8)
	for i := range chunks {
		chunks[i] = []int32{1, 1, 1, 1}
	}
	pl := newPlanner(chunks, 4)
	pl.rz.randomize, pl.rz.window, pl.rz.seed = true, 2, 5
	p := &sweepPlan{}
	if err := pl.planSweep(0, p); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	var need []needEntry
	for tt, ref := range p.order {
		if !seen[ref.chunk] {
			seen[ref.chunk] = true
			need = append(need, needEntry{ref.chunk, int32(tt), p.lastUse[ref.chunk]})
		}
		if p.lastUse[ref.chunk] < int32(tt) {
			t.Fatalf("chunk %d used at %d after its last use %d", ref.chunk, tt, p.lastUse[ref.chunk])
		}
	}
	if !reflect.DeepEqual(need, p.need) || len(need) != 8 {
		t.Fatalf("need %v, want %v", p.need, need)
	}
}

func TestPlannerSeek(t *testing.T) {
	pl := newPlanner([][]int32{{2, 1, 1}, {3, 1}}, 4)
	p := &sweepPlan{}
	if err := pl.planSweep(1, p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pos      int64
		at       int64
		wantNext int
	}{
		{pos: 8, wantNext: 0, at: 8},   // the sweep's start
		{pos: 9, wantNext: 1, at: 10},  // inside the first sequence: the next one
		{pos: 12, wantNext: 3, at: 12}, // a sequence's start
		{pos: 16, wantNext: 5, at: 16}, // the sweep's end
	} {
		next, at, err := pl.seek(p, tc.pos)
		if err != nil || next != tc.wantNext || at != tc.at {
			t.Fatalf("seek %d: %d at %d (%v), want %d at %d", tc.pos, next, at, err, tc.wantNext, tc.at)
		}
	}
}

// TestFirstChunks checks that the chunks firstChunks names, from the sequences planFirst hands
// over, are those the planner's first minibatch reads, in order of first use: all of them when
// that minibatch ends within those sequences, else the ones it reads among them.
func TestFirstChunks(t *testing.T) {
	chunks := make([][]int32, 30)
	for c := range chunks {
		for q := range 4 + c*5%9 {
			chunks[c] = append(chunks[c], int32(1+(c+q)*7%4)) // 1 to 4 samples
		}
	}
	for _, w := range []int64{1, 2, 4, 9, 0} {
		for _, mb := range []int64{1, 5, 16, 45, 400} {
			for _, max := range []int64{0, mb - 1, mb + 3} {
				for _, epoch := range []int64{0, mb / 2} {
					pl := newPlanner(chunks, mb)
					pl.rz.randomize, pl.rz.seed, pl.rz.window = true, 9, w
					pl.maxSamples, pl.epochSize = max, epoch
					var got []int32
					var within int
					p := &sweepPlan{}
					err := pl.planSweepFirst(0, p, func(seqs []seqRef) {
						within = len(seqs)
						var err error
						if got, err = pl.firstChunks(seqs, nil); err != nil {
							t.Fatal(err)
						}
					})
					if err != nil {
						t.Fatal(err)
					}
					var want []int32
					st, err := pl.minibatch(p, 0, 0, func(q int, ref seqRef, n int64) error {
						if q < within && !slices.Contains(want, ref.chunk) {
							want = append(want, ref.chunk)
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Errorf("window %d, minibatch %d, max %d, epoch %d (minibatch ends at %d of %d): firstChunks %v, the minibatch reads %v",
							w, mb, max, epoch, st.next, within, got, want)
					}
				}
			}
		}
	}
}

// TestUnitMinibatch checks that unitMinibatch, which counts, ends every minibatch where
// minibatch, which walks the sequences, does when every sequence is one sample long, and that
// minibatch counting (planner.unit) hands over the same sequences: over
// minibatch sizes, epochs, maxima, workers and randomization, from every position.
func TestUnitMinibatch(t *testing.T) {
	var chunks [][]int32
	for _, n := range []int{5, 0, 7, 1, 12} {
		c := make([]int32, n)
		for i := range c {
			c[i] = 1
		}
		chunks = append(chunks, c)
	}
	for _, mb := range []int64{1, 2, 4, 7, 25, 100} {
		for _, epoch := range []int64{0, 3, 10, 26} {
			for _, max := range []int64{0, 1, 9, 60} {
				for _, workers := range []int{1, 3} {
					pl := newPlanner(chunks, mb)
					pl.epochSize, pl.maxSamples = epoch, max
					pl.workers, pl.rank = workers, workers-1
					pl.rz.randomize, pl.rz.seed = epoch%2 == 0, uint64(mb)
					p := &sweepPlan{}
					for s := int64(0); s < 3; s++ {
						if err := pl.planSweep(s, p); err != nil {
							t.Fatal(err)
						}
						for next := 0; next < len(p.order); next++ {
							pos := s*pl.samples + int64(next)
							if pl.finished(p, pos) {
								break
							}
							var wantOwn, gotOwn []string
							record := func(to *[]string) func(int, seqRef, int64) error {
								return func(tt int, ref seqRef, n int64) error {
									*to = append(*to, fmt.Sprintf("%d:%d.%d/%d", tt, ref.chunk, ref.idx, n))
									return nil
								}
							}
							pl.unit = false
							want, err := pl.minibatch(p, next, pos, record(&wantOwn))
							if err != nil {
								t.Fatal(err)
							}
							if got := pl.unitMinibatch(p, next, pos); got != want {
								t.Fatalf("mb %d epoch %d max %d workers %d, sweep %d at %d: %+v, want %+v",
									mb, epoch, max, workers, s, next, got, want)
							}
							pl.unit = true
							got, err := pl.minibatch(p, next, pos, record(&gotOwn))
							if err != nil || got != want || !slices.Equal(gotOwn, wantOwn) {
								t.Fatalf("mb %d epoch %d max %d workers %d, sweep %d at %d, counting: %+v %v (%v), want %+v %v",
									mb, epoch, max, workers, s, next, got, gotOwn, err, want, wantOwn)
							}
						}
					}
				}
			}
		}
	}
}
