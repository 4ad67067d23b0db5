package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/cbf"
)

// TestDensifyRepeatedIndex: a CBF file can store a sparse sample that holds an index twice
// (CTF, LIBSVM, Matrix Market and Binsparse readers refuse one); `convert --densify` refuses it
// with exit 1, naming the stream, the sequence and the index, and leaves no output, rather than
// keep one of the two values. Converted without --densify to a format that holds sparse
// samples, both values are kept.
func TestDensifyRepeatedIndex(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "dup.cbf")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 4}}}
	vals := mlfeed.NewBuffer(mlfeed.Float32, 4)
	copy(vals.Float32s(), []float32{1, 2, 3, 4})
	w, err := cbf.NewWriter(f, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	// sequence 0: {0: 1}; sequence 1: {2: 2, 3: 3, 2: 4}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 1, 4}, Indices: []int32{0, 2, 3, 2}, Values: vals}}}
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, out := range []string{"d.npz", "d.idv"} {
		_, stderr, code := run(t, "convert", "--densify", in, filepath.Join(dir, out))
		if code != 1 || !strings.Contains(stderr, `stream "s": sequence 1 (from 0), sample 0, holds index 2 more than once`) {
			t.Errorf("convert --densify to %s: exit %d: %s", out, code, stderr)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "d.*")); len(m) != 0 {
		t.Errorf("a failed conversion left %v", m)
	}
	if out, stderr, code := run(t, "convert", in, filepath.Join(dir, "kept.cbf")); code != 0 {
		t.Fatalf("convert without --densify: exit %d: %s %s", code, out, stderr)
	}
	// both values of index 2, in their order (the writer sorts indices stably)
	want := `{"s":[{"indices":[2,2,3],"values":[2,4,3]}]}`
	if out, stderr, code := run(t, "cat", "--json", filepath.Join(dir, "kept.cbf")); code != 0 || !strings.Contains(out, want) {
		t.Errorf("cat --json of the copy: exit %d: %s %s, want %s", code, out, stderr, want)
	}
}
