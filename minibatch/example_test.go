package minibatch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/minibatch"
)

// table is a tiny in-memory source: n one-sample sequences whose value is their index, in
// chunks of per sequences.
type table struct{ n, per int }

func (t table) Schema() mlfeed.Schema {
	return mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}}
}

func (t table) Chunks() []mlfeed.ChunkInfo {
	var c []mlfeed.ChunkInfo
	for i := 0; i < t.n; i += t.per {
		k := min(t.per, t.n-i)
		c = append(c, mlfeed.ChunkInfo{Sequences: k, Samples: int64(k)})
	}
	return c
}

func (t table) ReadChunk(_ context.Context, i int) (*mlfeed.Chunk, error) {
	k := min(t.per, t.n-i*t.per)
	d := mlfeed.StreamData{SeqStart: make([]int64, k+1), Values: mlfeed.NewBuffer(mlfeed.Float32, k)}
	for q := 0; q < k; q++ {
		d.SeqStart[q+1] = int64(q + 1)
		d.Values.Float32s()[q] = float32(i*t.per + q)
	}
	return &mlfeed.Chunk{Sequences: k, Streams: []mlfeed.StreamData{d}}, nil
}

func (t table) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return t.ReadChunk(ctx, i)
}

func (t table) SequenceLengths(i int) ([]int64, error) {
	return mlfeed.Ones(t.Chunks()[i].Sequences), nil
}

func (t table) Close() error { return nil }

func Example() {
	r, err := minibatch.New(table{n: 10, per: 2}, minibatch.Config{MinibatchSize: 4, MaxSweeps: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var saved minibatch.State
	for r.Next() {
		b := r.Batch()
		fmt.Println("sweep", b.Sweep, b.Data.Streams[0].Values.Float32s())
		if b.Position == 8 {
			saved = r.State() // a checkpoint after the second minibatch
		}
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
	}
	st, _ := json.Marshal(saved)
	fmt.Println(string(st))
	// Output:
	// sweep 0 [6 3 1 5]
	// sweep 0 [9 0 4 2]
	// sweep 0 [7 8]
	// sweep 1 [3 0 8 4]
	// sweep 1 [7 5 2 9]
	// sweep 1 [1 6]
	// {"minibatchSourcePosition":8,"next":8,"sequences":10,"samples":10,"chunks":5,"randomize":true}
}

// ExampleStats measures how well mixed the minibatches are: in file order, and shuffled over
// the whole data set.
func ExampleStats() {
	for _, cfg := range []minibatch.Config{
		{MinibatchSize: 100, MaxSweeps: 1, NoRandomize: true},
		{MinibatchSize: 100, MaxSweeps: 1},
	} {
		r, err := minibatch.New(table{n: 1000, per: 100}, cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		st, err := minibatch.NewStats(r, "") // no label stream here: x holds floats
		if err != nil {
			fmt.Println(err)
			return
		}
		for r.Next() {
			st.Add(r.Batch())
		}
		r.Close()
		s := st.Sweeps()[0]
		fmt.Printf("randomized %v: %d minibatches, %.1f chunks each, rank correlation %.2f\n",
			!cfg.NoRandomize, s.Minibatches, s.MeanChunks, s.RankCorrelation)
	}
	// Output:
	// randomized false: 10 minibatches, 1.0 chunks each, rank correlation 1.00
	// randomized true: 10 minibatches, 10.0 chunks each, rank correlation -0.04
}

// A mixture of two data sets weighted 3:1 (values 0-99 and 1000-1019): each sequence's data
// set is drawn from the seed and its position, each data set in its own randomized order. The
// mixture sweep ends, by the default rule (FirstExhausted), with the sequence that ends the
// first data set's sweep. A state taken mid-way restores exactly.
func ExampleNewMix() {
	mix, err := minibatch.NewMix(minibatch.Mix{Sources: []minibatch.MixSource{
		{Name: "big", Source: table{n: 100, per: 10}, Weight: 3},
		{Name: "small", Source: shifted{table{n: 20, per: 10}, 1000}, Weight: 1},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mix.Close()
	cfg := minibatch.Config{MinibatchSize: 8, RandomizationSeed: 1, MaxSweeps: 1}
	r, err := minibatch.New(mix, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	count := make([]int, 2)
	var st minibatch.State
	var rest []float32
	for k := 0; r.Next(); k++ {
		b := r.Batch()
		for q := range b.Sequences {
			count[mix.SourceOf(b.Origins[q].Chunk)]++
		}
		if k == 2 {
			st = r.State()
		}
		if k > 2 {
			rest = append(rest, b.Data.Streams[0].Values.Float32s()...)
		}
	}
	fmt.Println("sequences from big, small:", count)
	r2, _ := minibatch.New(mix, cfg)
	defer r2.Close()
	if err := r2.Restore(st); err != nil {
		fmt.Println(err)
		return
	}
	var again []float32
	for r2.Next() {
		again = append(again, r2.Batch().Data.Streams[0].Values.Float32s()...)
	}
	fmt.Println("restored:", fmt.Sprint(again) == fmt.Sprint(rest), len(again), "sequences")
	data, _ := json.Marshal(st.Mix.Taken)
	fmt.Println("taken after 3 minibatches:", string(data))
	// Output:
	// sequences from big, small: [35 20]
	// restored: true 31 sequences
	// taken after 3 minibatches: [13,11]
}

// shifted adds off to a table's values.
type shifted struct {
	table
	off float32
}

func (s shifted) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	c, err := s.table.ReadChunk(ctx, i)
	if err == nil {
		for k, v := range c.Streams[0].Values.Float32s() {
			c.Streams[0].Values.Float32s()[k] = v + s.off
		}
	}
	return c, err
}

func (s shifted) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}
