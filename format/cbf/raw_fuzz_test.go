package cbf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// FuzzRawSamples opens arbitrary bytes as a mapped CBF file and asks RawSamples for every
// chunk and stream: it must never panic, and where it describes a chunk the chunk must decode
// and every sample it describes must be the decoded sample, byte for byte (the engine packs
// from that description instead of decoding, so it must not accept what decoding refuses).
func FuzzRawSamples(f *testing.F) {
	addCorpusSeeds(f, 3, "cbf")
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "a", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3},
		{Name: "b", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 4, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2, 3, 4}, Values: mlfeed.NewBuffer(mlfeed.Float32, 12)},
		{SeqStart: []int64{0, 1, 2, 3, 4}, Values: mlfeed.NewBuffer(mlfeed.Float64, 4)},
	}}
	for j := range 12 {
		c.Streams[0].Values.SetFloat64(j, float64(j)/3)
	}
	f.Add(writeChunks(f, schema, &WriterOptions{ChunkSize: 40}, c))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(dir, "fuzz.bin")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := Open(name, nil)
		if err != nil {
			return
		}
		defer rd.Close()
		sc := rd.Schema()
		for i := range rd.Chunks() {
			var decoded *mlfeed.Chunk
			for k, st := range sc.Streams {
				b, off, stride, swap, ok := rd.RawSamples(i, k)
				if !ok {
					continue
				}
				if decoded == nil {
					if decoded, err = rd.ReadChunk(context.Background(), i); err != nil {
						t.Fatalf("chunk %d: RawSamples describes it, but it does not decode: %v", i, err)
					}
				}
				size := st.Dim * st.Type.Size()
				want := decoded.Streams[k].Values.Bytes
				if swap != 0 || len(want) != decoded.Sequences*size {
					t.Fatalf("chunk %d stream %d: swap %d, %d bytes decoded for %d sequences", i, k, swap, len(want), decoded.Sequences)
				}
				for q := range decoded.Sequences {
					if !bytes.Equal(b[off+q*stride:off+q*stride+size], want[q*size:(q+1)*size]) {
						t.Fatalf("chunk %d stream %d sample %d: RawSamples differs from the decoded sample", i, k, q)
					}
				}
			}
		}
	})
}
