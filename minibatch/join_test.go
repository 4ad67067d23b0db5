package minibatch

import (
	"errors"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// withIDs gives a memSource's sequences the ids ids (in file order) and renames its streams.
func withIDs(s *memSource, prefix string, ids ...int) *memSource {
	s.schema.HasIDs = true
	for i := range s.schema.Streams {
		s.schema.Streams[i].Name = prefix + s.schema.Streams[i].Name
	}
	g := 0
	for _, c := range s.chunks {
		c.IDs = make([]string, c.Sequences)
		for q := range c.IDs {
			c.IDs[q] = strconv.Itoa(ids[g])
			g++
		}
	}
	return s
}

func TestJoin(t *testing.T) {
	a := withIDs(newMemSource([]int{1, 2, 3}, []int{2, 1}), "a", 10, 20, 30)
	b := withIDs(newMemSource([]int{4, 1, 2, 9}, []int{1, 3}), "b", 30, 10, 20, 99)
	j, err := Join(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// Lengths are the longest stream's: 10 -> max(1, 1), 20 -> max(2, 2), 30 -> max(3, 4).
	if got := j.Chunks(); len(got) != 2 || got[0].Samples != 3 || got[1].Samples != 4 {
		t.Fatalf("chunks %+v", got)
	}
	if sc := j.Schema(); len(sc.Streams) != 4 || sc.Streams[2].Name != "bx" {
		t.Fatalf("schema %+v", sc.Streams)
	}
	c, err := j.ReadChunk(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(ptr(j.Schema())); err != nil {
		t.Fatal(err)
	}
	// Sequence id 30 of a is sequence 0 of b (global 0 there, 4 samples).
	if x := c.Streams[2]; x.Samples() != 4 || x.Values.Float32s()[0] != 0 || c.Streams[3].Indices[0] != 0 {
		t.Fatalf("joined stream %+v", x)
	}
	c, _ = j.ReadChunk(t.Context(), 0)
	if x := c.Streams[2]; x.Samples() != 3 || x.Values.Float32s()[0] != 1 || x.Values.Float32s()[2] != 2 {
		t.Fatalf("joined stream %+v", x.Values.Float32s())
	}
	// Reading through the engine delivers every sequence with both parts.
	r := mustNew(t, j, Config{MinibatchSize: 3, MaxSweeps: 1})
	n := 0
	for r.Next() {
		n += r.Batch().Sequences
	}
	if n != 3 || r.Err() != nil {
		t.Fatalf("%d sequences, %v", n, r.Err())
	}

	missing := withIDs(newMemSource([]int{1, 1}, []int{2}), "m", 10, 20)
	if _, err := Join(withIDs(newMemSource([]int{1, 2, 3}, []int{3}), "a", 10, 20, 30), missing); !errors.Is(err, mlfeed.ErrFormat) {
		t.Fatalf("missing id: %v", err)
	}
	dup := withIDs(newMemSource([]int{1, 1, 1}, []int{3}), "d", 10, 20, 10)
	if _, err := Join(withIDs(newMemSource([]int{1, 2}, []int{2}), "a", 10, 20), dup); !errors.Is(err, mlfeed.ErrFormat) {
		t.Fatalf("duplicate id: %v", err)
	}
	if _, err := Join(newMemSource([]int{1}, []int{1}), newMemSource([]int{1}, []int{1})); !errors.Is(err, ErrConfig) {
		t.Fatalf("no ids: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
