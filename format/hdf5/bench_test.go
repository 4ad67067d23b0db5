package hdf5_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/hdf5"
)

// benchFile writes rows of 256 float32 values (and a label) with options o.
func benchFile(b *testing.B, rows int, o *hdf5.WriterOptions) (string, int64) {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "X", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 256, Shape: []int{16, 16}},
		{Name: "y", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 1},
	}}
	p := filepath.Join(b.TempDir(), "b.h5")
	w, err := hdf5.Create(p, schema, o)
	if err != nil {
		b.Fatal(err)
	}
	c := &mlfeed.Chunk{Sequences: rows, Streams: []mlfeed.StreamData{
		{SeqStart: make([]int64, rows+1), Values: mlfeed.NewBuffer(mlfeed.Float32, rows*256)},
		{SeqStart: make([]int64, rows+1), Values: mlfeed.NewBuffer(mlfeed.Uint8, rows)},
	}}
	for i := 0; i <= rows; i++ {
		c.Streams[0].SeqStart[i], c.Streams[1].SeqStart[i] = int64(i), int64(i)
	}
	for i := 0; i < rows*256; i++ {
		c.Streams[0].Values.SetFloat64(i, float64(i%1000)*0.5)
	}
	if err := w.WriteChunk(c); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return p, int64(rows) * (256*4 + 1)
}

func benchRead(b *testing.B, o *hdf5.WriterOptions) {
	p, n := benchFile(b, 20000, o)
	b.SetBytes(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := hdf5.Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		var prev *mlfeed.Chunk
		for k := range r.Chunks() {
			if prev, err = r.ReadChunkReuse(context.Background(), k, prev); err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}

func BenchmarkReadChunked(b *testing.B) { benchRead(b, nil) }

func BenchmarkReadDeflate(b *testing.B) { benchRead(b, &hdf5.WriterOptions{Level: 1, Shuffle: true}) }

func BenchmarkWriteDeflate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_, n := benchFile(b, 20000, &hdf5.WriterOptions{Level: 1, Shuffle: true})
		b.SetBytes(n)
	}
}
