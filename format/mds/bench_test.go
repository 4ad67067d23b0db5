package mds_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/mds"
	"github.com/mlfeed/mlfeed/internal/cputime"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// benchSource is n MNIST-like samples: a 28x28 uint8 image, an int64 label and a text caption.
func benchSource(b *testing.B, n int, text bool) *mlfeed.MemorySource {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "image", Type: mlfeed.Uint8, Dim: 784, Shape: []int{28, 28}},
		{Name: "label", Type: mlfeed.Int64, Dim: 1},
	}}
	one := make([]int64, n+1)
	for q := range one {
		one[q] = int64(q)
	}
	img := mlfeed.NewBuffer(mlfeed.Uint8, 784*n)
	for k, p := 0, img.Uint8s(); k < len(p); k++ {
		p[k] = byte(k / 7)
	}
	lab := mlfeed.NewBuffer(mlfeed.Int64, n)
	for q := range n {
		lab.Int64s()[q] = int64(q % 10)
	}
	data := []mlfeed.StreamData{{SeqStart: one, Values: img}, {SeqStart: one, Values: lab}}
	if text {
		sc.Streams = append(sc.Streams, mlfeed.Stream{Name: "text", Type: mlfeed.String, Dim: 1})
		txt := mlfeed.Buffer{Type: mlfeed.String, Strings: make([]string, n)}
		for q := range n {
			txt.Strings[q] = "a handwritten digit, sample " + string(rune('0'+q%10))
		}
		data = append(data, mlfeed.StreamData{SeqStart: one, Values: txt})
	}
	src, err := mlfeed.NewMemorySource(sc, &mlfeed.Chunk{Sequences: n, Streams: data})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// readAll opens a data set and decodes every chunk on one goroutine, touching every value.
func readAll(b *testing.B, dir string) int64 {
	rd, err := mds.Open(dir, nil)
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
		for s := range c.Streams {
			v := c.Streams[s].Values
			if v.Type.IsVarLen() {
				for _, x := range v.Strings {
					sum += int64(len(x))
				}
			} else {
				for _, x := range v.Bytes {
					sum += int64(x)
				}
			}
		}
		prev = c
	}
	return sum
}

func write(b *testing.B, src mlfeed.Source, o *mds.WriterOptions) string {
	dir := b.TempDir()
	w, err := mds.NewWriter(dir, src.Schema(), o)
	if err != nil {
		b.Fatal(err)
	}
	testutil.WriteAll(b, src, w)
	return dir
}

func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func benchRead(b *testing.B, dir string) {
	b.SetBytes(dirSize(dir))
	cpu0, n := cputime.Seconds(), 0
	for b.Loop() {
		readAll(b, dir)
		n++
	}
	b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
}

// BenchmarkRead reads 20000 samples of fixed-size columns (every shard's samples one size).
func BenchmarkRead(b *testing.B) { benchRead(b, write(b, benchSource(b, 20000, false), nil)) }

// BenchmarkReadText reads them with a text column (samples of varying size).
func BenchmarkReadText(b *testing.B) { benchRead(b, write(b, benchSource(b, 20000, true), nil)) }

// BenchmarkReadZstd reads zstd shards.
func BenchmarkReadZstd(b *testing.B) {
	benchRead(b, write(b, benchSource(b, 20000, true), &mds.WriterOptions{Compression: "zstd", SizeLimit: 4 << 20}))
}

func BenchmarkWrite(b *testing.B) {
	src := benchSource(b, 20000, true)
	b.SetBytes(dirSize(write(b, src, nil)))
	for b.Loop() {
		write(b, src, nil)
	}
}

// BenchmarkScript reads the data set bench/mds.sh writes: MLFEED_BENCH_DIR/mds.
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("MLFEED_BENCH_DIR not set (bench/mds.sh sets it)")
	}
	benchRead(b, filepath.Join(dir, "mds"))
}
