package arrow

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// benchData returns MNIST-shaped data: n rows of 784 float32 values (mostly zeros, as
// images are) and a uint8 label, in chunks of 2048 rows.
func benchData(n int) (mlfeed.Schema, []*mlfeed.Chunk, int64) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Type: mlfeed.Float32, Dim: 784, Shape: []int{28, 28}},
		{Name: "labels", Type: mlfeed.Uint8, Dim: 1},
	}}
	var chunks []*mlfeed.Chunk
	var bytes int64
	for from := 0; from < n; from += 2048 {
		k := min(2048, n-from)
		seq := make([]int64, k+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		f := mlfeed.NewBuffer(mlfeed.Float32, k*784)
		v := f.Float32s()
		for i := range v {
			if (i*7+from)%5 == 0 {
				v[i] = float32(i%255) / 255
			}
		}
		l := mlfeed.NewBuffer(mlfeed.Uint8, k)
		for i := range l.Bytes {
			l.Bytes[i] = byte((from + i) % 10)
		}
		bytes += int64(len(f.Bytes) + len(l.Bytes))
		chunks = append(chunks, &mlfeed.Chunk{Sequences: k, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: f}, {SeqStart: seq, Values: l}}})
	}
	return schema, chunks, bytes
}

func BenchmarkWrite(b *testing.B) {
	schema, chunks, n := benchData(10000)
	b.SetBytes(n)
	for b.Loop() {
		write(b, schema, nil, chunks...)
	}
}

// BenchmarkReadMapped reads a mapped file: values are handed out without a copy.
func BenchmarkReadMapped(b *testing.B) {
	schema, chunks, n := benchData(10000)
	path := filepath.Join(b.TempDir(), "bench.arrow")
	if err := os.WriteFile(path, write(b, schema, nil, chunks...), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n)
	for b.Loop() {
		rd, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		var prev *mlfeed.Chunk
		for i := range rd.Chunks() {
			if prev, err = rd.ReadChunkReuse(context.Background(), i, prev); err != nil {
				b.Fatal(err)
			}
		}
		rd.Close()
	}
}

// BenchmarkRead reads through ReadAt, with copies.
func BenchmarkRead(b *testing.B) {
	schema, chunks, n := benchData(10000)
	data := write(b, schema, nil, chunks...)
	b.SetBytes(n)
	for b.Loop() {
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)), "bench.arrow", nil)
		if err != nil {
			b.Fatal(err)
		}
		var prev *mlfeed.Chunk
		for i := range rd.Chunks() {
			if prev, err = rd.ReadChunkReuse(context.Background(), i, prev); err != nil {
				b.Fatal(err)
			}
		}
		rd.Close()
	}
}
