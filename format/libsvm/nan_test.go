package libsvm

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// TestNaNPayloads writes labels and feature values that are NaNs of every kind to LIBSVM and
// reads them back bit for bit (every NaN read back as Go's math.NaN(), 0x7ff8000000000001,
// before); "nan" is numpy's np.nan, 0x7ff8000000000000, as C's strtod reads it.
func TestNaNPayloads(t *testing.T) {
	bits := []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000001, 0x7ff0000000000001, 0x7ffc00000000dead, 0xfff4000000000123}
	n := len(bits)
	labels := mlfeed.NewBuffer(mlfeed.Float64, n)
	feats := mlfeed.NewBuffer(mlfeed.Float64, n)
	seq := make([]int64, n+1)
	for i, b := range bits {
		labels.Float64s()[i] = math.Float64frombits(b)
		feats.Float64s()[i] = math.Float64frombits(bits[n-1-i])
		seq[i+1] = int64(i + 1)
	}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: LabelsName, Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 1},
		{Name: FeaturesName, Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: 3},
	}}
	c := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
		{SeqStart: seq, Values: labels},
		{SeqStart: seq, SampleStart: seq, Indices: make([]int32, n), Values: feats},
	}}
	var text bytes.Buffer
	w, err := NewWriter(&text, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := text.String()[:len("nan 1:-nan(0x4000000000123)\n")], "nan 1:-nan(0x4000000000123)\n"; got != want {
		t.Errorf("first line %q, want %q", got, want)
	}
	rd, err := NewReaderBytes(text.Bytes(), &ReaderOptions{FileName: "nan.svm"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	gl, gf := back.Streams[0].Values.Float64s(), back.Streams[1].Values.Float64s()
	for i, b := range bits {
		if g := math.Float64bits(gl[i]); g != b {
			t.Errorf("label %d: %#x read back as %#x", i, b, g)
		}
		if g := math.Float64bits(gf[i]); g != bits[n-1-i] {
			t.Errorf("feature %d: %#x read back as %#x", i, bits[n-1-i], g)
		}
	}
}
