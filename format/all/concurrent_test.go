package all_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// Options that cut the small data set of TestConcurrentReads into several chunks, for the
// formats that declare them: read options, and write options besides WriteOptions.ChunkSize.
var (
	smallReadChunks  = map[string]string{"chunk_size": "512", "chunk_rows": "16", "blocks_per_chunk": "1"}
	smallWriteChunks = map[string]string{"rows_per_block": "16", "size_limit": "2048", "dense_features": "true"}
)

// Every writable format's reader keeps mlfeed.Source's promise that ReadChunk is safe from
// several goroutines at once (testutil.ConcurrentReads), on a data set of several chunks that
// the format wrote: a float32 feature vector and a label, or the features alone where the
// format holds one stream. scripts/test.sh runs it under -race. Binsparse and Matrix Market,
// whose chunks are a million values (one source serves both), are tested with smaller chunks
// in package binsparse (TestStreamingMatchesWholeRead).
func TestConcurrentReads(t *testing.T) {
	const chunks, per, dim = 6, 40, 5
	features := mlfeed.Stream{Name: "features", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: dim}
	label := mlfeed.Stream{Name: "label", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 1}
	var in []*mlfeed.Chunk
	for c := range chunks {
		seq := make([]int64, per+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		x, y := mlfeed.NewBuffer(mlfeed.Float32, per*dim), mlfeed.NewBuffer(mlfeed.Float32, per)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32((c*per*dim+i)%251) * 0.5
		}
		for i := range y.Float32s() {
			y.Float32s()[i] = float32((c*per + i) % 10)
		}
		in = append(in, &mlfeed.Chunk{Sequences: per, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: x}, {SeqStart: seq, Values: y}}})
	}
	featuresOnly := make([]*mlfeed.Chunk, len(in))
	for i, c := range in {
		featuresOnly[i] = &mlfeed.Chunk{Sequences: c.Sequences, Streams: c.Streams[:1]}
	}
	dir := t.TempDir()
	ctx := context.Background()
	for _, ft := range format.All() {
		if !ft.Writable() || ft.Name == "binsparse" || ft.Name == "mtx" {
			continue
		}
		t.Run(ft.Name, func(t *testing.T) {
			wo := format.WriteOptions{ChunkSize: 512, Params: declared(ft.WriteParams, smallWriteChunks)}
			out := outName(dir, ft.Name, ft)
			src, _ := mlfeed.NewMemorySource(mlfeed.Schema{Streams: []mlfeed.Stream{features, label}}, in...)
			err := convert.File(ctx, src, out, &convert.Options{Format: ft, Write: wo})
			if errors.Is(err, mlfeed.ErrUnsupported) { // a format of one stream
				src, _ = mlfeed.NewMemorySource(mlfeed.Schema{Streams: []mlfeed.Stream{features}}, featuresOnly...)
				err = convert.File(ctx, src, out, &convert.Options{Format: ft, Write: wo})
			}
			if err != nil {
				t.Fatal(err)
			}
			rd, err := dataset.OpenFiles([]string{out}, ft.Name, &format.Options{Params: declared(ft.ReadParams, smallReadChunks)})
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			testutil.ConcurrentReads(t, rd)
		})
	}
}

// declared returns the entries of params that decl declares.
func declared(decl []format.Param, params map[string]string) map[string]string {
	out := map[string]string{}
	for _, p := range decl {
		if v, ok := params[p.Name]; ok {
			out[p.Name] = v
		}
	}
	return out
}
