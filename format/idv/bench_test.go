package idv

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/cputime"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// benchSource generates a table of a float32 vector column, a key label and a text column,
// chunk by chunk, deterministically.
type benchSource struct {
	schema mlfeed.Schema
	rows   int
	chunk  int
	dim    int
	words  []string
}

func newBenchSource(rows, dim int) *benchSource {
	s := &benchSource{rows: rows, chunk: 8192, dim: dim}
	s.schema.Streams = []mlfeed.Stream{
		{Name: "Features", Type: mlfeed.Float32, Dim: dim},
		{Name: "Label", Type: mlfeed.Uint32, Dim: 1, KeyCount: 10},
		{Name: "Text", Type: mlfeed.String, Dim: 1},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		w := make([]byte, 3+rng.IntN(8))
		for k := range w {
			w[k] = byte('a' + rng.IntN(26))
		}
		s.words = append(s.words, string(w))
	}
	return s
}

func (s *benchSource) Schema() mlfeed.Schema { return s.schema }

func (s *benchSource) Chunks() []mlfeed.ChunkInfo {
	var out []mlfeed.ChunkInfo
	for r := 0; r < s.rows; r += s.chunk {
		n := min(s.chunk, s.rows-r)
		out = append(out, mlfeed.ChunkInfo{Sequences: n, Samples: int64(n)})
	}
	return out
}

func (s *benchSource) ReadChunk(_ context.Context, i int) (*mlfeed.Chunk, error) {
	n := min(s.chunk, s.rows-i*s.chunk)
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	feat := mlfeed.NewBuffer(mlfeed.Float32, n*s.dim)
	fv := feat.Float32s()
	for k := range fv {
		// Quantized values with runs of zeros, like scaled pixels or counts.
		if rng.IntN(3) == 0 {
			fv[k] = float32(rng.IntN(256)) / 16
		}
	}
	label := mlfeed.NewBuffer(mlfeed.Uint32, n)
	lv := label.Uint32s()
	text := make([]string, n)
	buf := make([]byte, 0, 128)
	for r := 0; r < n; r++ {
		lv[r] = uint32(1 + rng.IntN(10))
		buf = buf[:0]
		for w := 0; w < 4+rng.IntN(9); w++ {
			if w > 0 {
				buf = append(buf, ' ')
			}
			buf = append(buf, s.words[rng.IntN(len(s.words))]...)
		}
		text[r] = string(buf)
	}
	seq := seqStart(n)
	return &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
		{SeqStart: seq, Values: feat}, {SeqStart: seq, Values: label},
		{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: text}},
	}}, nil
}

func (s *benchSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

func (s *benchSource) SequenceLengths(i int) ([]int64, error) {
	return mlfeed.Ones(s.Chunks()[i].Sequences), nil
}

func (s *benchSource) Close() error { return nil }

// readAll decodes every chunk of r with GOMAXPROCS goroutines and returns the values read.
func readAll(r *Reader) (int64, error) {
	var next, values atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(r.Chunks()) {
					return
				}
				c, err := r.ReadChunk(context.Background(), i)
				if err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				for k := range c.Streams {
					values.Add(int64(c.Streams[k].Values.Len()))
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return 0, err
	}
	return values.Load(), nil
}

func benchData(b *testing.B, rows int, opts *WriterOptions) []byte {
	b.Helper()
	return writeAll(b, newBenchSource(rows, 128), opts)
}

func BenchmarkRead(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts *WriterOptions
	}{{"deflate", nil}, {"raw", &WriterOptions{Uncompressed: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			data := benchData(b, 40000, tc.opts)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := readBytes(b, data, nil)
				if _, err := readAll(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	src := newBenchSource(40000, 128)
	var chunks []*mlfeed.Chunk
	for i := range src.Chunks() {
		c, _ := src.ReadChunk(context.Background(), i)
		chunks = append(chunks, c)
	}
	mem := &memSource{schema: src.schema, chunks: chunks}
	b.SetBytes(int64(40000 * (128*4 + 4 + 40)))
	for i := 0; i < b.N; i++ {
		writeAll(b, mem, nil)
	}
}

// BenchmarkLargeFile is run by bench/idv.sh: with MLFEED_IDV_BENCH=path it writes a DEFLATE
// IDV of at least MLFEED_IDV_BENCH_MB megabytes (default 520) to path unless it exists, then
// reads it from memory MLFEED_IDV_BENCH_ROUNDS times (default 3) and prints the fastest read's
// throughput. It is skipped otherwise.
func BenchmarkLargeFile(b *testing.B) {
	path := os.Getenv("MLFEED_IDV_BENCH")
	if path == "" {
		b.Skip("set MLFEED_IDV_BENCH to a file path (see bench/idv.sh)")
	}
	mb, _ := strconv.Atoi(os.Getenv("MLFEED_IDV_BENCH_MB"))
	if mb <= 0 {
		mb = 520
	}
	if st, err := os.Stat(path); err != nil || st.Size() < int64(mb)<<20 {
		t0 := time.Now()
		if err := writeLarge(path, int64(mb)<<20); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		fmt.Printf("idv-write: bytes=%d seconds=%.3f\n", st.Size(), time.Since(t0).Seconds())
	}
	// Like the Python peer, read the file into memory first and time the decoding.
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	rounds, _ := strconv.Atoi(os.Getenv("MLFEED_IDV_BENCH_ROUNDS"))
	if rounds <= 0 {
		rounds = 3
	}
	for i := 0; i < b.N; i++ {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			b.Fatal(err)
		}
		var inflated int64
		for _, c := range r.alive {
			for _, e := range c.blocks {
				inflated += int64(e.inflated)
			}
		}
		// The machine may be shared: report the fastest of a few rounds.
		best, bestCPU := math.Inf(1), 0.0
		var values int64
		for k := 0; k < rounds; k++ {
			cpu0 := cputime.Seconds()
			t0 := time.Now()
			if values, err = readAll(r); err != nil {
				b.Fatal(err)
			}
			if sec := time.Since(t0).Seconds(); sec < best {
				best, bestCPU = sec, cputime.Seconds()-cpu0
			}
		}
		fmt.Printf("idv-read: bytes=%d inflated=%d values=%d chunks=%d rounds=%d cpu=%.3f seconds=%.3f\n", r.size, inflated, values, len(r.Chunks()), rounds, bestCPU, best)
		// One consumer reading chunk after chunk, as mlfeed convert does: the scheduler decodes
		// the next chunks on its other threads meanwhile (sched.ReadAhead).
		t0 := time.Now()
		order := make([]int, len(r.Chunks()))
		for k := range order {
			order[k] = k
		}
		ra := sched.New(runtime.GOMAXPROCS(0), 0).ReadAhead(context.Background(), r, order, nil)
		for ra.Next() {
		}
		if err := ra.Err(); err != nil {
			b.Fatal(err)
		}
		ra.Close()
		fmt.Printf("idv-read-sequential: seconds=%.3f\n", time.Since(t0).Seconds())
		b.SetBytes(r.size)
		r.Close()
	}
}

// writeLarge writes bench rows to path until the file holds at least size bytes.
func writeLarge(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	src := newBenchSource(1<<40, 128)
	w, err := NewWriter(f, src.schema, nil)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, _ := src.ReadChunk(context.Background(), i)
		if err := w.WriteChunk(c); err != nil {
			return err
		}
		if st, err := f.Stat(); err != nil || st.Size() >= size {
			break
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// BenchmarkInflate measures inflating the blocks of a generated file (klauspost/compress).
func BenchmarkInflate(b *testing.B) {
	data := benchData(b, 40000, nil)
	r := readBytes(b, data, nil)
	var srcs [][]byte
	var dsts [][]byte
	var total int64
	for _, c := range r.alive {
		for _, e := range c.blocks {
			srcs = append(srcs, data[e.off:e.off+int64(e.stored)])
			dsts = append(dsts, make([]byte, e.inflated))
			total += int64(e.inflated)
		}
	}
	b.SetBytes(total)
	for i := 0; i < b.N; i++ {
		for k := range srcs {
			if err := inflate(dsts[k], srcs[k]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
