package minibatch

import (
	"slices"
	"testing"
	"time"
)

// TestReady reads with Ready before each Next, as the Python package does: the minibatches are
// those of Next alone, Ready reports most of them ready once the packers run ahead, never
// when Next would pack itself, and always at the end.
func TestReady(t *testing.T) {
	cases := []struct {
		name string
		src  func() *memSource
		cfg  Config
	}{
		{"randomized", func() *memSource { return uniform(500, 1, 20) }, Config{MinibatchSize: 32, MaxSweeps: 3}},
		{"kept", func() *memSource { return uniform(500, 1, 20) }, Config{MinibatchSize: 32, MaxSweeps: 3, KeepDataInMemory: true}},
		{"sequences", func() *memSource { return jagged(400, 16) }, Config{MinibatchSize: 24, RandomizationWindow: 4, MaxSweeps: 3}},
		{"epochs", func() *memSource { return jagged(300, 10) }, Config{MinibatchSize: 40, EpochSize: 170, MaxSamples: 2000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, packers := range []int{-1, 2} {
				cfg := tc.cfg
				cfg.Packers, cfg.Threads = packers, 3
				want := dumpBatches(t, mustNew(t, tc.src(), cfg), 1<<20)
				r := mustNew(t, tc.src(), cfg)
				if r.Ready(0) {
					t.Fatal("ready before the first minibatch")
				}
				var got []string
				ready := 0
				for {
					if r.Ready(10 * time.Second) {
						ready++
					}
					mb := dumpBatches(t, r, 1)
					if len(mb) == 0 {
						break
					}
					got = append(got, mb...)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%d packers: the minibatches differ from Next's alone", packers)
				}
				if !r.Ready(0) || r.Next() {
					t.Fatalf("%d packers: not ready at the end", packers)
				}
				switch {
				case packers < 0 && ready != 1: // the end
					t.Errorf("packing in Next: ready %d times, want only at the end", ready)
				case packers > 0 && ready < len(want)/2:
					t.Errorf("%d packers: ready %d times of %d minibatches", packers, ready, len(want))
				}
				r.Close()
			}
		})
	}
}

// TestReadyPacksOnCaller holds the scheduler's one thread besides the caller's, so that no
// packer can run: Ready must then pack each minibatch on the caller's goroutine, without
// waiting, once the chunks are loaded (the second sweep of data kept in memory).
func TestReadyPacksOnCaller(t *testing.T) {
	cfg := Config{MinibatchSize: 32, MaxSweeps: 2, KeepDataInMemory: true, Threads: 2, Packers: 1}
	want := dumpBatches(t, mustNew(t, uniform(500, 1, 20), cfg), 1<<20)
	r := mustNew(t, uniform(500, 1, 20), cfg)
	defer r.Close()
	var got []string
	for !r.Batch().EndOfSweep {
		got = append(got, dumpBatches(t, r, 1)...)
	}
	if err := r.sched.AcquireThread(r.ctx); err != nil {
		t.Fatal(err)
	}
	defer r.sched.ReleaseThread()
	for {
		if !r.Ready(0) {
			t.Fatalf("minibatch %d not ready with the packers stopped", len(got))
		}
		mb := dumpBatches(t, r, 1)
		if len(mb) == 0 {
			break
		}
		got = append(got, mb...)
	}
	if !slices.Equal(got, want) {
		t.Fatal("the minibatches differ from Next's alone")
	}
}

// TestPackAhead checks how many minibatches take turns in memory of their own: one per
// packer, PackAhead more (1 by default), and the one the caller holds; without packers, the
// one the caller holds and the next. The minibatches are the same whatever PackAhead is.
func TestPackAhead(t *testing.T) {
	base := Config{MinibatchSize: 7, MaxSweeps: 2, RandomizationWindow: 3, Threads: 3}
	want := dumpBatches(t, mustNew(t, uniform(300, 1, 20), base), 1<<20)
	for _, tc := range []struct{ packers, ahead, batches int }{
		{2, 0, 4}, {2, 3, 6}, {1, 5, 7}, {-1, 3, 2},
	} {
		cfg := base
		cfg.Packers, cfg.PackAhead = tc.packers, tc.ahead
		r := mustNew(t, uniform(300, 1, 20), cfg)
		seen := map[*Batch]bool{}
		var got []string
		for {
			mb := dumpBatches(t, r, 1)
			if len(mb) == 0 {
				break
			}
			seen[r.Batch()] = true
			got = append(got, mb...)
		}
		r.Close()
		if len(seen) != tc.batches {
			t.Errorf("%d packers, PackAhead %d: %d batches take turns, want %d", tc.packers, tc.ahead, len(seen), tc.batches)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d packers, PackAhead %d: the minibatches differ", tc.packers, tc.ahead)
		}
	}
}
