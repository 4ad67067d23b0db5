package minibatch

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed/internal/sched"
)

// TestMemoryBudget checks that the scheduler's memory budget bounds the chunks the engine
// holds: with a budget of two chunks the chunks read ahead and kept as spares stop at the
// budget (with a large budget the same reader holds many more), the minibatches are the same,
// and Close gives every byte back.
func TestMemoryBudget(t *testing.T) {
	per := uniform(100, 1, 100)
	size := per.chunks[0].MemSize() // every chunk of uniform(_, 1, 100) has this size
	cfg := Config{MinibatchSize: 16, RandomizationWindow: 2, Prefetch: 16, MaxSweeps: 2, Threads: 2}
	run := func(budget int64) (peak int64, got []summary) {
		mem := uniform(4000, 1, 100)
		src := &reusingSource{memSource: mem}
		s := sched.New(cfg.Threads, budget)
		r, err := NewContext(sched.WithContext(context.Background(), s), src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for len(got) < 1<<20 && r.Next() {
			peak = max(peak, s.InUse())
			b := r.Batch()
			sum := summary{Sweep: b.Sweep, Global: b.GlobalSamples, Position: b.Position, EOS: b.EndOfSweep}
			for q := range b.Sequences {
				sum.Seqs = append(sum.Seqs, mem.global(b, q))
			}
			got = append(got, sum)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if n := s.InUse(); n != 0 {
			t.Errorf("budget %d: %d bytes still counted after Close", budget, n)
		}
		return peak, got
	}
	small, got := run(2 * size)
	large, want := run(1 << 30)
	t.Logf("chunks held at most: %d with a budget of 2 chunks, %d with 1 GiB", small/size, large/size)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the budget changed the minibatches")
	}
	// The window (2 chunks and one it straddles), what the planned minibatches read, and one
	// chunk requested past the budget.
	if small > 8*size {
		t.Errorf("budget of 2 chunks: up to %d chunks held", small/size)
	}
	if large < 12*size {
		t.Errorf("large budget: only up to %d chunks held with 16 read ahead", large/size)
	}
}

// TestMemoryKept checks that chunks kept in memory count against the budget once each, for the
// reader's life.
func TestMemoryKept(t *testing.T) {
	src := uniform(1000, 1, 100)
	var total int64
	for _, c := range src.chunks {
		total += c.MemSize()
	}
	s := sched.New(2, 0)
	r, err := NewContext(sched.WithContext(context.Background(), s), src, Config{MinibatchSize: 16, MaxSweeps: 2, KeepDataInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.InUse(); n != total {
		t.Errorf("%d bytes counted for %d bytes of chunks kept", n, total)
	}
	r.Close()
	if n := s.InUse(); n != 0 {
		t.Errorf("%d bytes still counted after Close", n)
	}
}

// TestNewContext checks that the reader runs on the scheduler the ctx carries, within its
// threads, and stops with ctx's error when ctx ends.
func TestNewContext(t *testing.T) {
	s := sched.New(3, 0)
	ctx, cancel := context.WithCancel(sched.WithContext(context.Background(), s))
	defer cancel()
	src := &reusingSource{memSource: uniform(5000, 1, 50)}
	r, err := NewContext(ctx, src, Config{MinibatchSize: 32, MaxSweeps: 1000, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.sched != s || r.packers == 0 {
		t.Fatalf("the reader did not take the ctx's scheduler of 3 threads (Config.Threads 1 is for a scheduler of its own)")
	}
	n := 0
	for r.Next() {
		if n++; n == 100 {
			cancel()
		}
	}
	if !errors.Is(r.Err(), context.Canceled) {
		t.Fatalf("after the ctx ended: %v after %d minibatches", r.Err(), n)
	}
	if p := s.PeakHelpers(); p > 2 {
		t.Errorf("%d helper threads at once on a scheduler of 3", p)
	}
}

// TestKeepLengths checks that with KeepDataInMemory a chunk decoded for its sequence lengths (a
// defining stream) is the one kept: every chunk is read once over two sweeps, and the
// minibatches are those of a reader that keeps nothing.
func TestKeepLengths(t *testing.T) {
	lens := make([]int, 400)
	for g := range lens {
		lens[g] = 1 + g%4
	}
	sizes := make([]int, 20)
	for k := range sizes {
		sizes[k] = 20
	}
	cfg := Config{MinibatchSize: 16, MaxSweeps: 2, DefinesMBSize: "x", RandomizationWindow: 3}
	plain := newMemSource(lens, sizes)
	want := collect(t, mustNew(t, plain, cfg), plain, 1<<20)
	cfg.KeepDataInMemory = true
	src := newMemSource(lens, sizes)
	if got := collect(t, mustNew(t, src, cfg), src, 1<<20); !reflect.DeepEqual(got, want) {
		t.Fatal("keeping data in memory changed the minibatches")
	}
	if chunks, total := src.readCount(); chunks != 20 || total != 20 {
		t.Fatalf("%d chunks read %d times over 2 sweeps", chunks, total)
	}
}
