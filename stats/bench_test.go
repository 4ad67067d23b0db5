package stats_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/cputime"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/stats"
)

// memory returns an in-memory source of n samples of dim values of type t (normal values,
// or 0..255 for uint8) in chunks of 1024 samples.
func memory(b *testing.B, t mlfeed.ElemType, n, dim int) mlfeed.Source {
	r := rand.New(rand.NewPCG(1, 1))
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: t, Dim: dim}}}
	var chunks []*mlfeed.Chunk
	for a := 0; a < n; a += 1024 {
		m := min(1024, n-a)
		buf := mlfeed.NewBuffer(t, m*dim)
		for i := range m * dim {
			buf.SetFloat64(i, float64(r.IntN(256)))
			if t == mlfeed.Float32 {
				buf.SetFloat64(i, r.NormFloat64())
			}
		}
		seq := make([]int64, m+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		chunks = append(chunks, &mlfeed.Chunk{Sequences: m, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: buf}}})
	}
	src, err := mlfeed.NewMemorySource(sc, chunks...)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkCompute times the statistics alone, over data already in memory (MB/s of values).
func BenchmarkCompute(b *testing.B) {
	for _, c := range []struct {
		name string
		t    mlfeed.ElemType
	}{{"uint8", mlfeed.Uint8}, {"float32", mlfeed.Float32}} {
		b.Run(c.name, func(b *testing.B) {
			src := memory(b, c.t, 16384, 784)
			b.SetBytes(int64(16384 * 784 * c.t.Size()))
			cpu0, n := cputime.Seconds(), 0
			for b.Loop() {
				if _, err := stats.Compute(context.Background(), src, nil); err != nil {
					b.Fatal(err)
				}
				n++
			}
			// CPU time per value: on a loaded machine a fairer figure than the wall clock.
			b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(n*16384*784), "cpu-ns/value")
		})
	}
}

// BenchmarkComputeMNIST times the statistics alone over MNIST's training images in memory
// (uint8 pixels, most of them zero, in runs), and the same as int64 (TFRecord's integers),
// float32 and float64 (CPU ns per value).
func BenchmarkComputeMNIST(b *testing.B) {
	name := testutil.Testdata(b, "mnist", "train-images-idx3-ubyte.gz")
	src0, err := dataset.OpenFiles([]string{name}, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src0.Close()
	var chunks []*mlfeed.Chunk
	for i := range src0.Chunks() {
		c, err := src0.ReadChunk(context.Background(), i)
		if err != nil {
			b.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	for _, t := range []mlfeed.ElemType{mlfeed.Uint8, mlfeed.Int64, mlfeed.Float32, mlfeed.Float64} {
		b.Run(t.String(), func(b *testing.B) {
			sc := src0.Schema()
			sc.Streams[0].Type = t
			var cs []*mlfeed.Chunk
			var n int
			for _, c := range chunks {
				v := c.Streams[0].Values
				if t != mlfeed.Uint8 {
					f := mlfeed.NewBuffer(t, v.Len())
					for k, x := range v.Bytes {
						f.SetFloat64(k, float64(x))
					}
					v = f
				}
				n += v.Len()
				cs = append(cs, &mlfeed.Chunk{Sequences: c.Sequences, Streams: []mlfeed.StreamData{{SeqStart: c.Streams[0].SeqStart, Values: v}}})
			}
			src, err := mlfeed.NewMemorySource(sc, cs...)
			if err != nil {
				b.Fatal(err)
			}
			cpu0, runs := cputime.Seconds(), 0
			for b.Loop() {
				if _, err := stats.Compute(context.Background(), src, nil); err != nil {
					b.Fatal(err)
				}
				runs++
			}
			b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(runs*n), "cpu-ns/value")
		})
	}
}

// BenchmarkMNIST compares stats with validate on the MNIST training images (gzip IDX), both
// on one thread: the goal is stats at least as fast as validate.
func BenchmarkMNIST(b *testing.B) {
	name := testutil.Testdata(b, "mnist", "train-images-idx3-ubyte.gz")
	ctx := sched.WithContext(context.Background(), sched.New(1, 0))
	b.Run("stats", func(b *testing.B) {
		b.SetBytes(60000 * 784)
		for b.Loop() {
			src, err := dataset.OpenFiles([]string{name}, "", &format.Options{Context: ctx})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := stats.Compute(ctx, src, nil); err != nil {
				b.Fatal(err)
			}
			src.Close()
		}
	})
	b.Run("validate", func(b *testing.B) {
		b.SetBytes(60000 * 784)
		for b.Loop() {
			n, err := inspect.Validate(ctx, name, "", &format.Options{Context: ctx}, 1, func(error) {})
			if err != nil || n != 0 {
				b.Fatal(n, err)
			}
		}
	})
}
