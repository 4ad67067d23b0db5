package cbf

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/cbf/internal/fsum"
)

// benchData returns a data set of about size bytes in CBF: dense float32 samples of dim 64,
// or sparse samples of dim 10000 with 32 values each, in sequences of 1 to 8 samples.
func benchData(tb testing.TB, storage mlfeed.Storage, size int) (mlfeed.Schema, []*mlfeed.Chunk) {
	st := mlfeed.Stream{Name: "x", Storage: storage, Type: mlfeed.Float32, Dim: 64}
	perSample := 64 * 4
	if storage == mlfeed.Sparse {
		st.Dim = 10000
		perSample = 32*8 + 4
	}
	r := rand.New(rand.NewPCG(1, 2))
	var chunks []*mlfeed.Chunk
	for total := 0; total < size; {
		d := mlfeed.StreamData{SeqStart: []int64{0}}
		var vals []float32
		c := &mlfeed.Chunk{}
		for ; c.Sequences < 1000 && total < size; c.Sequences++ {
			n := 1 + r.IntN(8)
			for range n {
				if storage == mlfeed.Dense {
					for range st.Dim {
						vals = append(vals, r.Float32())
					}
					continue
				}
				if d.SampleStart == nil {
					d.SampleStart = []int64{0}
				}
				ix := r.Perm(st.Dim)[:32]
				for _, i := range ix {
					d.Indices = append(d.Indices, int32(i))
					vals = append(vals, r.Float32())
				}
				d.SampleStart = append(d.SampleStart, int64(len(d.Indices)))
			}
			d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+int64(n))
			total += n * perSample
		}
		d.Values = mlfeed.NewBuffer(mlfeed.Float32, len(vals))
		copy(d.Values.Float32s(), vals)
		c.Streams = []mlfeed.StreamData{d}
		chunks = append(chunks, c)
	}
	return mlfeed.Schema{Streams: []mlfeed.Stream{st}}, chunks
}

func benchFile(b *testing.B, storage mlfeed.Storage) string {
	schema, chunks := benchData(b, storage, 16<<20)
	path := filepath.Join(b.TempDir(), "bench.cbf")
	if err := os.WriteFile(path, writeChunks(b, schema, &WriterOptions{ChunkSize: 4 << 20}, chunks...), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchRead decodes every chunk of a memory-mapped file and sums the values; with reuse,
// each chunk is decoded into the previous one's memory.
func benchRead(b *testing.B, storage mlfeed.Storage, reuse bool) {
	path := benchFile(b, storage)
	st, _ := os.Stat(path)
	rd, err := Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	b.SetBytes(st.Size())
	var sum float64
	var c *mlfeed.Chunk
	for b.Loop() {
		for i := range rd.Chunks() {
			if reuse {
				c, err = rd.ReadChunkReuse(context.Background(), i, c)
			} else {
				c, err = rd.ReadChunk(context.Background(), i)
			}
			if err != nil {
				b.Fatal(err)
			}
			sum += fsum.Float32s(c.Streams[0].Values.Float32s())
		}
	}
	_ = sum
}

func BenchmarkReadDense(b *testing.B)       { benchRead(b, mlfeed.Dense, false) }
func BenchmarkReadSparse(b *testing.B)      { benchRead(b, mlfeed.Sparse, false) }
func BenchmarkReadDenseReuse(b *testing.B)  { benchRead(b, mlfeed.Dense, true) }
func BenchmarkReadSparseReuse(b *testing.B) { benchRead(b, mlfeed.Sparse, true) }

func benchWrite(b *testing.B, compat string) {
	schema, chunks := benchData(b, mlfeed.Sparse, 16<<20)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		w, err := NewWriter(&out, schema, &WriterOptions{Compat: compat})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range chunks {
			if err := w.WriteChunk(c); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(out.Len()))
	}
}

func BenchmarkWrite(b *testing.B)        { benchWrite(b, "") }
func BenchmarkWriteCTF2Bin(b *testing.B) { benchWrite(b, CompatCTF2Bin) }
