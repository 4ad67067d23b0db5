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
