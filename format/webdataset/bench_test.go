package webdataset_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/webdataset"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

// benchSource is n samples of an MNIST-like shard: a 784-byte "image" (bytes), an int64 label
// (cls) and 64 float32 values (a .npy member).
func benchSource(b *testing.B, n int) *mlfeed.MemorySource {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "cls", Type: mlfeed.Int64, Dim: 1},
		{Name: "emb.npy", Type: mlfeed.Float32, Dim: 64},
		{Name: "png", Type: mlfeed.Bytes, Dim: 1},
	}}
	one := make([]int64, n+1)
	for q := range one {
		one[q] = int64(q)
	}
	emb := mlfeed.NewBuffer(mlfeed.Float32, 64*n)
	for k, f := 0, emb.Float32s(); k < len(f); k++ {
		f[k] = float32(k%1000) / 7
	}
	lab := mlfeed.NewBuffer(mlfeed.Int64, n)
	img := mlfeed.Buffer{Type: mlfeed.Bytes, Strings: make([]string, n)}
	pix := make([]byte, 784)
	for q := 0; q < n; q++ {
		lab.Int64s()[q] = int64(q % 10)
		for k := range pix {
			pix[k] = byte(q + k)
		}
		img.Strings[q] = string(pix)
	}
	src, err := mlfeed.NewMemorySource(sc, &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
		{SeqStart: one, Values: lab}, {SeqStart: one, Values: emb}, {SeqStart: one, Values: img}}})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// writeBench writes the bench shard to dir/name.
func writeBench(b *testing.B, dir, name string, n int, opts *webdataset.WriterOptions) string {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	src := benchSource(b, n)
	w, err := webdataset.NewWriter(f, src.Schema(), opts)
	if err != nil {
		b.Fatal(err)
	}
	c, _ := src.ReadChunk(context.Background(), 0)
	if err := w.WriteChunk(c); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// readShard opens a shard and decodes every chunk, touching every value: what a training
// loop's reader does, the scan included.
func readShard(b *testing.B, path string) {
	rd, err := webdataset.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	var prev *mlfeed.Chunk
	var sum int64
	for i := range rd.Chunks() {
		c, err := rd.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			b.Fatal(err)
		}
		sum += c.Streams[0].Values.Int64s()[0] + int64(len(c.Streams[2].Values.Strings[0])) + int64(c.Streams[1].Values.Float32s()[0])
		prev = c
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}

func BenchmarkRead(b *testing.B) {
	const n = 10000
	for _, name := range []string{"bench.tar", "bench.tar.gz"} {
		b.Run(name, func(b *testing.B) {
			comp := webdataset.CompressionNone
			if name == "bench.tar.gz" {
				comp = webdataset.CompressionGzip
			}
			path := writeBench(b, b.TempDir(), name, n, &webdataset.WriterOptions{Compression: comp, Level: 1})
			b.SetBytes(n * (784 + 64*4 + 8))
			b.ResetTimer()
			for range b.N {
				readShard(b, path)
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	const n = 10000
	src := benchSource(b, n)
	c, _ := src.ReadChunk(context.Background(), 0)
	dir := b.TempDir()
	b.SetBytes(n * (784 + 64*4 + 8))
	b.ResetTimer()
	for range b.N {
		f, err := os.Create(filepath.Join(dir, "w.tar"))
		if err != nil {
			b.Fatal(err)
		}
		w, err := webdataset.NewWriter(f, src.Schema(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteChunk(c); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkScript reads the shard bench/webdataset.sh writes: MLFEED_BENCH_DIR/data.tar.
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("MLFEED_BENCH_DIR not set (bench/webdataset.sh sets it)")
	}
	path := filepath.Join(dir, "data.tar")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	cpu0, n := cputime.Seconds(), 0
	for b.Loop() {
		readShard(b, path)
		n++
	}
	// CPU seconds per read: on a loaded machine a fairer figure than the wall clock.
	b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
}
