//go:build cgo

package main

import (
	"context"
	"runtime"
	"runtime/cgo"
	"testing"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/cputime"
	"github.com/mlfeed/mlfeed/minibatch"
)

// mnistLike is an in-memory source shaped as MNIST's training set as bench/python.sh reads
// it: 60000 sequences of 784 float32 features and one uint8 label, in 45 chunks.
func mnistLike(b *testing.B) mlfeed.Source {
	const n, dim, chunks = 60000, 784, 45
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: dim, Shape: []int{28, 28}},
		{Name: "labels", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 1},
	}}
	var cs []*mlfeed.Chunk
	for c := range chunks {
		m := n / chunks
		if c < n%chunks {
			m++
		}
		seq := make([]int64, m+1)
		for q := range seq {
			seq[q] = int64(q)
		}
		x := mlfeed.NewBuffer(mlfeed.Float32, m*dim)
		for i, xs := 0, x.Float32s(); i < len(xs); i++ {
			xs[i] = float32(i % 251)
		}
		y := mlfeed.NewBuffer(mlfeed.Uint8, m)
		cs = append(cs, &mlfeed.Chunk{Sequences: m, Streams: []mlfeed.StreamData{
			{SeqStart: seq, Values: x}, {SeqStart: seq, Values: y}}})
	}
	src, err := mlfeed.NewMemorySource(sc, cs...)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkNext reads sweeps of shuffled minibatches of 256 from mnistLike, as the engine's
// caller does (engine) and through the ABI with buffer sets the caller registered (abi), and
// reports the CPU time per minibatch and the cores used.
func BenchmarkNext(b *testing.B) {
	src := mnistLike(b)
	cfg := minibatch.Config{MinibatchSize: 256, KeepDataInMemory: true, MaxSweeps: 1 << 40}
	const perSweep = 235
	b.Run("engine", func(b *testing.B) {
		r, err := minibatch.New(src, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		measure(b, perSweep, func() {
			for r.Next() && !r.Batch().EndOfSweep {
			}
		})
	})
	b.Run("abi", func(b *testing.B) {
		runtime.LockOSThread() // as a caller from C is
		defer runtime.UnlockOSThread()
		s, err := newSource(context.Background(), src, nil, cfg)
		if err != nil {
			b.Fatal(err)
		}
		h := uintptr(cgo.NewHandle(s))
		defer func() { cgo.Handle(h).Delete(); s.close() }()
		meta := make([]int64, len(s.meta))
		var keep [][]uint64
		measure(b, perSweep, func() {
			for {
				rc, err := sourceNext(h, false, 100, meta)
				if rc == 2 {
					continue
				}
				if err != nil || rc != 1 {
					b.Fatal(rc, err)
				}
				if meta[9] == 0 {
					var set bufSet
					for _, n := range byteSizes(nil, meta[metaLen:], len(s.schema.Streams)) {
						m := make([]uint64, n/8+2)
						keep = append(keep, m)
						set.ptrs = append(set.ptrs, unsafe.Pointer(&m[0]))
						set.caps = append(set.caps, n)
					}
					if err := sourceFill(h, int(meta[7]), set); err != nil {
						b.Fatal(err)
					}
				}
				if meta[4] != 0 {
					break
				}
			}
		})
	})
}

// measure runs sweep b.N times and reports its CPU time per minibatch and the cores used.
func measure(b *testing.B, perSweep int, sweep func()) {
	sweep() // the chunks are loaded
	c0 := cputime.Used()
	t := time.Now()
	b.ResetTimer()
	for range b.N {
		sweep()
	}
	b.StopTimer()
	wall := time.Since(t)
	cpu := cputime.Used() - c0
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*perSweep), "cpu-us/mb")
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N*perSweep), "wall-us/mb")
	b.ReportMetric(float64(cpu)/float64(wall), "cores")
}
