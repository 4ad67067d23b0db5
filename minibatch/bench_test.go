package minibatch

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/prefetch"
)

// denseSource holds n float32 samples of dim values in chunks of per sequences, decoded once.
type denseSource struct {
	dim    int
	infos  []mlfeed.ChunkInfo
	chunks []*mlfeed.Chunk
}

func newDenseSource(n, dim, per int) *denseSource {
	s := &denseSource{dim: dim}
	for i := 0; i < n; i += per {
		k := min(per, n-i)
		d := mlfeed.StreamData{SeqStart: make([]int64, k+1), Values: mlfeed.NewBuffer(mlfeed.Float32, k*dim)}
		for q := range k {
			d.SeqStart[q+1] = int64(q + 1)
		}
		for j, v := range d.Values.Float32s() {
			d.Values.Float32s()[j] = float32(j%251) + v
		}
		s.chunks = append(s.chunks, &mlfeed.Chunk{Sequences: k, Streams: []mlfeed.StreamData{d}})
		s.infos = append(s.infos, mlfeed.ChunkInfo{Sequences: k, Samples: int64(k)})
	}
	return s
}

func (s *denseSource) Schema() mlfeed.Schema {
	return mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "features", Type: mlfeed.Float32, Dim: s.dim}}}
}
func (s *denseSource) Chunks() []mlfeed.ChunkInfo { return s.infos }
func (s *denseSource) Close() error               { return nil }
func (s *denseSource) ReadChunk(_ context.Context, i int) (*mlfeed.Chunk, error) {
	return s.chunks[i], nil
}
func (s *denseSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}
func (s *denseSource) SequenceLengths(i int) ([]int64, error) {
	return mlfeed.Ones(s.chunks[i].Sequences), nil
}

// BenchmarkSweep measures one randomized sweep over MNIST-sized data (60000 x 784 float32,
// minibatch 256) per iteration: the engine, the bare gather in its order on one goroutine and
// on one per CPU, and "copy", the same bytes copied sequentially in 256-sample pieces.
func BenchmarkSweep(b *testing.B) {
	const n, dim, mb = 60000, 784, 256
	src := newDenseSource(n, dim, 6000)
	b.Run("engine", func(b *testing.B) {
		b.ReportAllocs()
		sweeps(b, src, Config{MinibatchSize: mb})
	})
	r, _ := New(src, Config{MinibatchSize: mb})
	var p plan
	r.pl.rz.plan(0, &p)
	sz := dim * 4
	// gather copies the samples in the engine's randomized order, minibatches parts of the
	// sweep on as many goroutines, each prefetching the sample four ahead as the packers do:
	// the floor for any shuffling reader on this machine.
	gather := func(b *testing.B, workers int) {
		b.SetBytes(n * dim * 4)
		dsts := make([][]byte, workers)
		for w := range dsts {
			dsts[w] = make([]byte, mb*sz)
		}
		for b.Loop() {
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for start := w * mb; start < n; start += workers * mb {
						for t := start; t < min(start+mb, n); t++ {
							if t+4 < n {
								ahead := p.order[t+4]
								prefetch.Bytes(src.chunks[ahead.chunk].Streams[0].Values.Bytes[int(ahead.idx)*sz:])
							}
							ref := p.order[t]
							k := t - start
							copy(dsts[w][k*sz:(k+1)*sz], src.chunks[ref.chunk].Streams[0].Values.Bytes[int(ref.idx)*sz:])
						}
					}
				})
			}
			wg.Wait()
		}
	}
	b.Run("gather", func(b *testing.B) { gather(b, 1) })
	b.Run("gather-parallel", func(b *testing.B) { gather(b, runtime.GOMAXPROCS(0)) })
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(n * dim * 4)
		dst := make([]byte, mb*dim*4)
		for b.Loop() {
			for _, c := range src.chunks {
				v := c.Streams[0].Values.Bytes
				for off := 0; off < len(v); off += len(dst) {
					copy(dst, v[off:])
				}
			}
		}
	})
}

// BenchmarkSweepPackers measures the sweep of BenchmarkSweep with packing on the caller's
// goroutine (-1) and on 1 to 3 packers.
func BenchmarkSweepPackers(b *testing.B) {
	src := newDenseSource(60000, 784, 6000)
	for _, p := range []int{-1, 1, 2, 3} {
		b.Run(fmt.Sprint(p), func(b *testing.B) { sweeps(b, src, Config{MinibatchSize: 256, Packers: p}) })
	}
}

// sweeps reads one sweep of src per iteration.
func sweeps(b *testing.B, src *denseSource, cfg Config) {
	b.SetBytes(int64(len(src.chunks[0].Streams[0].Values.Bytes) * len(src.chunks)))
	r, err := New(src, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		for r.Next() {
			if r.Batch().EndOfSweep {
				break
			}
		}
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPlan measures the randomizer's order of one MNIST-sized sweep (60000 sequences in
// chunks of 6000, the default window of the whole data set): the part of planning done once
// per sweep.
func BenchmarkPlan(b *testing.B) {
	rz := randomizer{randomize: true}
	for range 10 {
		rz.chunks = append(rz.chunks, chunkCounts{6000, 6000})
	}
	rz.sequences = 60000
	var p plan
	s := int64(0)
	for b.Loop() {
		rz.plan(s, &p)
		s++
	}
}

// BenchmarkPlanMinibatches measures planning an MNIST-sized sweep's minibatches of 256 (which
// sequences, from which chunks), per sweep, without loading or packing: the part of Next's
// work done on the caller's goroutine for every minibatch.
func BenchmarkPlanMinibatches(b *testing.B) {
	src := newDenseSource(60000, 1, 6000)
	r, err := New(src, Config{MinibatchSize: 256, Threads: 1, MaxSweeps: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	j := &job{done: make(chan struct{}, 1)}
	for b.Loop() {
		for mbs := 0; mbs < (60000+255)/256; mbs++ {
			if !r.planNext(j) || j.err != nil {
				b.Fatal("planning ended", j.err)
			}
		}
	}
}

// BenchmarkMix reads 60000 samples per iteration (MNIST-sized: 784 float32, minibatch 256)
// from a mixture of two data sets of 30000 weighted 1:1, and, as "one", from one data set of
// 60000 in sweeps: the cost of the draws and of each data set's own order.
func BenchmarkMix(b *testing.B) {
	const dim, mb = 784, 256
	read := func(b *testing.B, src mlfeed.Source) {
		b.ReportAllocs()
		b.SetBytes(60000 * dim * 4)
		r, err := New(src, Config{MinibatchSize: mb})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		for b.Loop() {
			for n := int64(0); n < 60000 && r.Next(); {
				n += r.Batch().Samples
			}
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("one", func(b *testing.B) { read(b, newDenseSource(60000, dim, 6000)) })
	b.Run("mix2", func(b *testing.B) {
		x, err := NewMix(Mix{Stop: Never, Sources: []MixSource{
			{Source: newDenseSource(30000, dim, 6000), Weight: 1}, {Source: newDenseSource(30000, dim, 6000), Weight: 1}}})
		if err != nil {
			b.Fatal(err)
		}
		read(b, x)
	})
}

// BenchmarkMixPlan plans a mixture's segment of 65536 sequences from three data sets of
// 60000 one-sample sequences in chunks of 6000 (the draws, each data set's sweep order and
// the chunks' uses): per op, one segment; ns/op / 65536 is the planning cost per sequence.
func BenchmarkMixPlan(b *testing.B) {
	var srcs []MixSource
	for range 3 {
		srcs = append(srcs, MixSource{Source: newDenseSource(60000, 1, 6000), Weight: 1})
	}
	x, err := NewMix(Mix{Stop: Never, Sources: srcs})
	if err != nil {
		b.Fatal(err)
	}
	r, err := New(x, Config{MinibatchSize: 256})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var p sweepPlan
	g := int64(0)
	for b.Loop() {
		if err := r.pl.planSweep(g, &p); err != nil {
			b.Fatal(err)
		}
		g++
	}
}
