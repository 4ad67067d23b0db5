package minibatch

import (
	"encoding/json"
	"testing"
)

// FuzzReader drives the engine with arbitrary sequence lengths, chunking, minibatch sizes,
// windows and worker counts, and checks that every sweep delivers each sequence exactly once
// over all workers, in minibatches that respect the size rule. With window's high bit set the
// source holds one dense stream of one-sample sequences, whose chunks packRaw packs from their
// own memory: each sequence's values must then be its own.
func FuzzReader(f *testing.F) {
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, uint8(2), uint8(3), uint64(0), uint8(0), false, uint8(1), false)
	f.Add([]byte{3, 1, 4, 1, 5, 9, 2, 6}, uint8(3), uint8(6), uint64(7), uint8(2), false, uint8(3), true)
	f.Add([]byte{2, 2, 2, 2, 2, 2}, uint8(1), uint8(1), uint64(1), uint8(4), true, uint8(8), false)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(4), uint8(5), uint64(3), uint8(128+2), false, uint8(2), false)
	f.Fuzz(func(t *testing.T, lens []byte, per, mb uint8, seed uint64, window uint8, sampleBased bool, workers uint8, cntk bool) {
		if len(lens) == 0 || len(lens) > 300 || per == 0 || mb == 0 || workers == 0 || workers > 8 {
			return
		}
		unit := window&128 != 0
		window &= 127
		ls := make([]int, len(lens))
		for i, l := range lens {
			if ls[i] = 1 + int(l%7); unit {
				ls[i] = 1
			}
		}
		var sizes []int
		for left := len(ls); left > 0; left -= int(per) {
			sizes = append(sizes, min(int(per), left))
		}
		src := newMemSource(ls, sizes)
		if unit {
			src.schema.Streams = src.schema.Streams[:1]
			for _, c := range src.chunks {
				c.Streams = c.Streams[:1]
			}
		}
		dist := Balanced
		if cntk {
			dist = CNTKCompatible
		}
		seen := map[[2]int]int{}
		for rank := 0; rank < int(workers); rank++ {
			r, err := New(src, Config{MinibatchSize: int(mb), RandomizationSeed: seed, RandomizationWindow: int64(window),
				SampleBasedRandomizationWindow: sampleBased, MaxSweeps: 2, Workers: int(workers), Rank: rank, Distribution: dist})
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				b := r.Batch()
				if b.GlobalSamples > int64(mb) && b.Sequences > 1 {
					t.Fatalf("minibatch of %d samples with limit %d", b.GlobalSamples, mb)
				}
				for q := 0; q < b.Sequences; q++ {
					g := src.global(b, q)
					seen[[2]int{int(b.Sweep), g}]++
					if x := b.Dense(0).Float32s(); unit && (x[2*q] != float32(g) || x[2*q+1] != 0) {
						t.Fatalf("sequence %d packed as %v", g, x[2*q:2*q+2])
					}
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			r.Close()
		}
		if len(seen) != 2*len(ls) {
			t.Fatalf("%d of %d sequences delivered", len(seen), 2*len(ls))
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("sequence %v delivered %d times", k, n)
			}
		}
	})
}

// FuzzRestore restores arbitrary states: an error or a valid continuation, never a panic.
func FuzzRestore(f *testing.F) {
	src := uniform(30, 2, 4)
	r, _ := New(src, Config{MinibatchSize: 5})
	for i := 0; i < 7; i++ {
		r.Next()
		st, _ := json.Marshal(r.State())
		f.Add(st)
	}
	f.Add([]byte(`{"minibatchSourcePosition": 17}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st State
		if json.Unmarshal(data, &st) != nil {
			return
		}
		r, err := New(src, Config{MinibatchSize: 5, MaxSweeps: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Restore(st) != nil {
			return
		}
		for r.Next() {
		}
	})
}
