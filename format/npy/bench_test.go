package npy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

// benchChunk returns n records of 784 float32 values (MNIST-sized images).
func benchChunk(n int) (mlfeed.Schema, *mlfeed.Chunk) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 784}}}
	v := mlfeed.NewBuffer(mlfeed.Float32, n*784)
	f := v.Float32s()
	for i := range f {
		f[i] = float32(i%1000) / 7
	}
	seq := make([]int64, n+1)
	for i := range seq {
		seq[i] = int64(i)
	}
	return sc, &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: v}}}
}

// BenchmarkWrite writes 10 000 records as a .npy file in memory, straight through.
func BenchmarkWrite(b *testing.B) {
	sc, c := benchChunk(10000)
	b.SetBytes(int64(len(c.Streams[0].Values.Bytes)))
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		w, err := NewWriter(&buf, sc, &WriterOptions{Records: 10000})
		if err != nil {
			b.Fatal(err)
		}
		w.WriteChunk(c)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchFile writes the records to a .npy file and returns its name.
func benchFile(b *testing.B, n int, bigEndian bool) string {
	sc, c := benchChunk(n)
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, sc, &WriterOptions{Records: int64(n)})
	w.WriteChunk(c)
	w.Close()
	data := buf.Bytes()
	if bigEndian {
		data = bytes.Replace(data, []byte("'<f4'"), []byte("'>f4'"), 1)
		h, err := ParseHeader(data, "")
		if err != nil {
			b.Fatal(err)
		}
		swapBytes(data[h.DataOffset:], 4)
	}
	name := filepath.Join(b.TempDir(), "x.npy")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return name
}

// readSum reads every chunk of the file and sums its values (touching all of them).
func readSum(b *testing.B, name string) float64 {
	rd, err := Open(name, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	var s float64
	var c *mlfeed.Chunk
	for i := range rd.Chunks() {
		if c, err = rd.ReadChunkReuse(context.Background(), i, c); err != nil {
			b.Fatal(err)
		}
		f := c.Streams[0].Values.Float32s()
		var s0, s1, s2, s3 float64
		k := 0
		for ; k+4 <= len(f); k += 4 {
			s0 += float64(f[k])
			s1 += float64(f[k+1])
			s2 += float64(f[k+2])
			s3 += float64(f[k+3])
		}
		for ; k < len(f); k++ {
			s0 += float64(f[k])
		}
		s += s0 + s1 + s2 + s3
	}
	return s
}

// BenchmarkRead reads a mapped little-endian file (no copy) and a big-endian one (swapped),
// summing the values.
func BenchmarkRead(b *testing.B) {
	for _, be := range []bool{false, true} {
		name := map[bool]string{false: "little-endian", true: "big-endian"}[be]
		b.Run(name, func(b *testing.B) {
			f := benchFile(b, 10000, be)
			b.SetBytes(10000 * 784 * 4)
			for b.Loop() {
				readSum(b, f)
			}
		})
	}
}

// BenchmarkScript reads and writes the files bench/npy.sh names: MLFEED_BENCH_DIR/le.npy and
// be.npy are read (every value summed), and le.npy's records are written to out.npy.
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("MLFEED_BENCH_DIR not set (bench/npy.sh sets it)")
	}
	for _, name := range []string{"le", "be"} {
		b.Run("read-"+name, func(b *testing.B) {
			cpu0, n := cputime.Seconds(), 0
			for b.Loop() {
				readSum(b, filepath.Join(dir, name+".npy"))
				n++
			}
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
		})
	}
	b.Run("write", func(b *testing.B) {
		rd, err := Open(filepath.Join(dir, "le.npy"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rd.Close()
		cpu0, n := cputime.Seconds(), 0
		for b.Loop() {
			n++
			f, err := os.Create(filepath.Join(dir, "out.npy"))
			if err != nil {
				b.Fatal(err)
			}
			w, _ := NewWriter(f, rd.Schema(), &WriterOptions{Records: int64(rd.records)})
			for i := range rd.Chunks() {
				c, _ := rd.ReadChunk(context.Background(), i)
				if err := w.WriteChunk(c); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		b.ReportMetric((cputime.Seconds()-cpu0)/float64(n), "cpu-s/op")
	})
}
