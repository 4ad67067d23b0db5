package ctf

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/idx"
)

// TestIDXFloat64RoundTrip converts a float64 IDX file to CTF and back: every bit survives,
// the CTF reader inferring float64 from values float32 cannot hold.
func TestIDXFloat64RoundTrip(t *testing.T) {
	vals := []float64{1e-300, 0.1, -0.0, 5e-324, math.MaxFloat64, 1.0 / 3, -2.5, 123456789.123456789,
		0.30000001192092896, 1e300, math.Inf(1), math.Inf(-1)}
	const dim = 3
	st := mlfeed.Stream{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: dim, Shape: []int{dim}}
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{st}}
	n := len(vals) / dim
	buf := mlfeed.NewBuffer(mlfeed.Float64, len(vals))
	copy(buf.Float64s(), vals)
	seq := make([]int64, n+1)
	for i := range seq {
		seq[i] = int64(i)
	}
	chunk := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: buf}}}

	writeIDX := func(c *mlfeed.Chunk, sc mlfeed.Schema) []byte {
		var b bytes.Buffer
		s, err := idx.NewSink(&b, sc, c.Sequences, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteChunk(c); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	orig := writeIDX(chunk, schema)
	ir, err := idx.NewReader(bytes.NewReader(orig), int64(len(orig)), &idx.ReaderOptions{FileName: "x.idx"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ir.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	w, err := NewWriter(&text, ir.Schema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "x.ctf")
	if err := os.WriteFile(name, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*ReaderOptions{nil, {Precision: mlfeed.Float64}} {
		r, err := Open(name, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Schema().Streams[0].Type != mlfeed.Float64 {
			t.Fatalf("read back as %v", r.Schema().Streams[0].Type)
		}
		back, err := r.ReadChunk(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		sc := r.Schema()
		sc.Streams[0].Shape = []int{dim}
		if got := writeIDX(back, sc); !bytes.Equal(got, orig) {
			t.Fatalf("IDX -> CTF -> IDX changed the data:\n%x\n%x\nvia %s", got, orig, text.Bytes())
		}
		r.Close()
	}
	// Declared streams without a precision: the values float32 cannot hold are an error.
	r, err := Open(name, &ReaderOptions{Inputs: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Dim: dim}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadChunk(context.Background(), 0); err == nil {
		t.Fatal("float64 values read as float32 without an error")
	}
}

func TestWriteLargeIntegers(t *testing.T) {
	for _, tc := range []struct {
		typ mlfeed.ElemType
		v   float64
		ok  bool
	}{{mlfeed.Int64, 1 << 53, true}, {mlfeed.Int64, -(1 << 53), true}, {mlfeed.Int64, 1<<53 + 2, false}, {mlfeed.Int64, -(1<<53 + 2), false},
		{mlfeed.Uint64, 1 << 53, true}, {mlfeed.Uint64, 1 << 60, false}, {mlfeed.Int32, -1 << 31, true}} {
		buf := mlfeed.NewBuffer(tc.typ, 1)
		buf.SetFloat64(0, tc.v)
		_, err := appendValue(nil, buf, 0)
		if (err == nil) != tc.ok {
			t.Errorf("%v %v: err = %v", tc.typ, tc.v, err)
		}
	}
}
