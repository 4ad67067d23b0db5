package tfrecord_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/tfrecord"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

// benchSource is n records of an MNIST-like Example: 784 image bytes, an int64 label and 64
// float32 values.
func benchSource(b *testing.B, n int) *mlfeed.MemorySource {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "embedding", Type: mlfeed.Float32, Dim: 64},
		{Name: "image", Type: mlfeed.Bytes, Dim: 1},
		{Name: "label", Type: mlfeed.Int64, Dim: 1},
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
		{SeqStart: one, Values: emb}, {SeqStart: one, Values: img}, {SeqStart: one, Values: lab}}})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// readAll opens a file and decodes every chunk on one goroutine, touching every value: what
// a training loop's reader does, the scan included.
func readAll(b *testing.B, path string) int64 {
	rd, err := tfrecord.Open(path, nil)
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
			if v.Type == mlfeed.Bytes {
				for _, x := range v.Strings {
					sum += int64(len(x))
				}
			} else {
				sum += int64(len(v.Bytes))
			}
		}
		prev = c
	}
	return sum
}

func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "b.tfrecord")
	f, _ := os.Create(path)
	src := benchSource(b, 20000)
	w, _ := tfrecord.NewWriter(f, src.Schema(), nil)
	c, _ := src.ReadChunk(context.Background(), 0)
	if err := w.WriteChunk(c); err != nil {
		b.Fatal(err)
	}
	w.Close()
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	cpu0, n := cputime.Seconds(), 0
	for b.Loop() {
		readAll(b, path)
		n++
	}
	// CPU seconds per read: on a loaded machine a fairer figure than the wall clock.
	b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
}

func BenchmarkWrite(b *testing.B) {
	src := benchSource(b, 20000)
	c, _ := src.ReadChunk(context.Background(), 0)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		w, _ := tfrecord.NewWriter(&out, src.Schema(), nil)
		if err := w.WriteChunk(c); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.SetBytes(int64(out.Len()))
}

// BenchmarkScript reads the file bench/tfrecord.sh writes: MLFEED_BENCH_DIR/data.tfrecord.
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("MLFEED_BENCH_DIR not set (bench/tfrecord.sh sets it)")
	}
	path := filepath.Join(dir, "data.tfrecord")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	cpu0, n := cputime.Seconds(), 0
	for b.Loop() {
		readAll(b, path)
		n++
	}
	// CPU seconds per read: on a loaded machine a fairer figure than the wall clock.
	b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
}
