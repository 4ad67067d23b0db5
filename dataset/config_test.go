package dataset_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

// totals returns a source's sequences and each stream's samples, read chunk by chunk.
func totals(t *testing.T, src mlfeed.Source) (int, []int64) {
	t.Helper()
	seqs, samples := 0, make([]int64, len(src.Schema().Streams))
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		seqs += c.Sequences
		for k := range c.Streams {
			samples[k] += c.Streams[k].Samples()
		}
	}
	return seqs, samples
}

// TestReaderOpen opens CNTK's composite reader test section (two CTF files joined) and
// checks the result against the files opened one by one, then runs the engine on it.
func TestReaderOpen(t *testing.T) {
	cfgPath := testutil.Testdata(t, "cntk", "configs", "CNTKTextFormatReader", "dense.cntk")
	t.Chdir(testutil.Testdata(t, "cntk", "ctf")) // the section's files are relative, as in CNTK's test
	spec := &dataset.Spec{Config: cfgPath + ":5x10_and_5x5_jagged_composite"}
	r, err := spec.Reader()
	if err != nil {
		t.Fatal(err)
	}
	src, err := spec.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sc := src.Schema()
	if len(sc.Streams) != 2 || sc.Streams[0].Name != "features1" || sc.Streams[0].Dim != 10 || sc.Streams[1].Name != "features2" || sc.Streams[1].Type != mlfeed.Float64 {
		t.Fatalf("schema %+v", sc.Streams)
	}
	seqs, samples := totals(t, src)
	for k, d := range r.Deserializers {
		one, err := dataset.OpenFiles([]string{filepath.Base(d.File)}, "ctf", &d.Options)
		if err != nil {
			t.Fatal(err)
		}
		n, s := totals(t, one)
		one.Close()
		if n != seqs || s[0] != samples[k] {
			t.Errorf("%s: %d sequences, %d samples; joined: %d, %v", d.File, n, s[0], seqs, samples)
		}
	}
	c, err := spec.MinibatchConfig()
	if err != nil || c.NoRandomize || c.RandomizationWindow != 128 {
		t.Fatalf("%+v", c)
	}
	c.MinibatchSize, c.MaxSweeps = 7, 1
	mb, err := minibatch.New(src, c)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	n := 0
	for mb.Next() {
		n += mb.Batch().Sequences
	}
	if err := mb.Err(); err != nil || n != seqs {
		t.Fatalf("%d sequences in a sweep of %d: %v", n, seqs, err)
	}
	// An explicit option overrides the section's; a bad one fails.
	bad := &dataset.Spec{Config: spec.Config, Params: map[string]string{"maxErrors": "x"}}
	if _, err := bad.Open(context.Background()); err == nil {
		t.Fatal("a bad option was accepted")
	}
}

// TestBinaryDeserializer opens a composite reader over a CBF file, its streams renamed by
// alias-only input entries (CNTK's CBFDeserializer config, StreamDef(field=...)).
func TestBinaryDeserializer(t *testing.T) {
	text := `precision = "float"
train = [
    BrainScriptNetworkBuilder = { model = Sequential (DenseLayer {50, activation = Sigmoid} : LinearLayer {2}) }
    reader = {
        randomize = false
        deserializers = ({
            type = "CNTKBinaryFormatDeserializer" ; module = "CNTKBinaryReader"
            file = "$DataDir$/Simple_dense.bin"
            input = { x = { alias = "features" } ; y = { alias = "labels" } }
        })
    }
]`
	cfgPath := filepath.Join(t.TempDir(), "cbf.cntk")
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &dataset.Spec{Config: cfgPath, Defines: map[string]string{"DataDir": testutil.Testdata(t, "cntk", "cbf")}}
	r, err := spec.Reader()
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Deserializers[0]; d.Format != "cbf" || len(d.Options.Inputs) != 2 || d.Options.Inputs[0].Alias != "features" || d.Options.Inputs[0].Dim != 0 {
		t.Fatalf("%+v", d)
	}
	src, err := spec.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sc := src.Schema()
	if len(sc.Streams) != 2 || sc.Streams[0].Name != "x" || sc.Streams[1].Name != "y" || sc.Streams[0].Dim != 2 {
		t.Fatalf("schema %+v", sc.Streams)
	}
	if n, _ := totals(t, src); n != 10000 {
		t.Fatalf("%d sequences", n)
	}
}
