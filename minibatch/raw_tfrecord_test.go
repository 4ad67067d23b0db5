package minibatch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/tfrecord"
)

// TestRawSamplesTFRecord packs minibatches straight from a mapped TFRecord file of Examples (a
// float_list of 64 values in place, an int64 label decoded once and kept): as from decoded
// chunks, for every configuration, and the raw path is the one taken.
func TestRawSamplesTFRecord(t *testing.T) {
	const n = 1000
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 64},
		{Name: "label", Storage: mlfeed.Dense, Type: mlfeed.Int64, Dim: 1},
	}}
	img, lab := mlfeed.NewBuffer(mlfeed.Float32, n*64), mlfeed.NewBuffer(mlfeed.Int64, n)
	for k, f := 0, img.Float32s(); k < len(f); k++ {
		f[k] = float32(k) / 7
	}
	for q := range n {
		lab.Int64s()[q] = int64(q % 10)
	}
	seq := make([]int64, n+1)
	for q := range seq {
		seq[q] = int64(q)
	}
	name := filepath.Join(t.TempDir(), "x.tfrecord")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tfrecord.NewWriter(f, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(&mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
		{SeqStart: seq, Values: img}, {SeqStart: seq, Values: lab}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src, err := tfrecord.Open(name, &tfrecord.ReaderOptions{ChunkSize: 20000})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if len(src.Chunks()) < 5 {
		t.Fatalf("%d chunks", len(src.Chunks()))
	}
	checkRaw(t, "TFRecord", src, nil)
}
