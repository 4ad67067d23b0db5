package ctf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// randomChunk builds a chunk of n sequences of 1 to maxLen samples: a dense stream of dim 3
// and a sparse one of dim 1000, with values that stress shortest formatting (subnormals,
// extremes, negative zero).
func randomChunk(rng *rand.Rand, et mlfeed.ElemType, n, maxLen int, ids bool) (mlfeed.Schema, *mlfeed.Chunk) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "features", Alias: "F", Storage: mlfeed.Dense, Type: et, Dim: 3},
		{Name: "labels", Storage: mlfeed.Sparse, Type: et, Dim: 1000},
	}, HasIDs: ids}
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-45, 1.4e-45, 3.4028234663852886e38, 5e-324, 1.7976931348623157e308, 123456789, 1e21, 1e-7}
	val := func() float64 {
		var v float64
		if rng.IntN(4) == 0 {
			v = special[rng.IntN(len(special))]
		} else {
			v = math.Float64frombits(rng.Uint64())
			for math.IsNaN(v) || math.IsInf(v, 0) {
				v = math.Float64frombits(rng.Uint64())
			}
		}
		if et == mlfeed.Float32 {
			f := float32(v)
			if math.IsInf(float64(f), 0) {
				f = 1
			}
			return float64(f)
		}
		return v
	}
	c := &mlfeed.Chunk{Sequences: n, Streams: make([]mlfeed.StreamData, 2)}
	var dv, sv []float64
	var idx []int32
	dStart, sStart, sSample := []int64{0}, []int64{0}, []int64{0}
	for q := 0; q < n; q++ {
		if ids {
			c.IDs = append(c.IDs, itoa(q*3+1))
		}
		l := 1 + rng.IntN(maxLen)
		for s := 0; s < l; s++ {
			for k := 0; k < 3; k++ {
				dv = append(dv, val())
			}
			for _, ix := range rng.Perm(1000)[:rng.IntN(4)] { // distinct indices, in any order
				idx = append(idx, int32(ix))
				sv = append(sv, val())
			}
			sSample = append(sSample, int64(len(sv)))
		}
		dStart = append(dStart, dStart[q]+int64(l))
		sStart = append(sStart, sStart[q]+int64(l))
	}
	c.Streams[0] = mlfeed.StreamData{SeqStart: dStart, Values: toBuffer(dv, et)}
	c.Streams[1] = mlfeed.StreamData{SeqStart: sStart, SampleStart: sSample, Indices: idx, Values: toBuffer(sv, et)}
	if idx == nil {
		c.Streams[1].Indices = []int32{}
	}
	return sc, c
}

func toBuffer(v []float64, et mlfeed.ElemType) mlfeed.Buffer {
	b := mlfeed.NewBuffer(et, len(v))
	for i, x := range v {
		b.SetFloat64(i, x)
	}
	return b
}

// TestRoundTrip writes random float32 and float64 data, with and without ids, reads it back
// and requires every value bit for bit.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, et := range []mlfeed.ElemType{mlfeed.Float32, mlfeed.Float64} {
		for _, ids := range []bool{false, true} {
			maxLen := 1
			if ids {
				maxLen = 5
			}
			sc, c := randomChunk(rng, et, 300, maxLen, ids)
			var buf bytes.Buffer
			w, err := NewWriter(&buf, sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteChunk(c.Slice(0, 100)); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteChunk(c.Slice(100, 300)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			opts := &ReaderOptions{Inputs: sc.Streams, Precision: et, ChunkSize: 2000}
			r, chunks, err := readAll(t, buf.String(), opts)
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String()[:200])
			}
			if r.Schema().HasIDs != ids {
				t.Fatalf("HasIDs = %v", r.Schema().HasIDs)
			}
			got := concat(chunks)
			if got.Sequences != c.Sequences || !reflect.DeepEqual(got.IDs, c.IDs) {
				t.Fatalf("%d sequences, ids %v", got.Sequences, got.IDs[:3])
			}
			for i := range c.Streams {
				a, b := c.Streams[i], got.Streams[i]
				if !reflect.DeepEqual(a.SeqStart, b.SeqStart) || !reflect.DeepEqual(a.SampleStart, b.SampleStart) || !reflect.DeepEqual(a.Indices, b.Indices) || !bytes.Equal(a.Values.Bytes, b.Values.Bytes) {
					t.Fatalf("%s ids=%v: stream %d differs after the round trip", et, ids, i)
				}
			}
			if !strings.Contains(buf.String(), "|F ") {
				t.Fatal("alias not used")
			}
		}
	}
}

// concat joins chunks into one (test helper).
func concat(chunks []*mlfeed.Chunk) *mlfeed.Chunk {
	out := &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(chunks[0].Streams))}
	for i := range out.Streams {
		out.Streams[i].SeqStart = []int64{0}
		out.Streams[i].Values.Type = chunks[0].Streams[i].Values.Type
		if chunks[0].Streams[i].SampleStart != nil {
			out.Streams[i].SampleStart = []int64{0}
			out.Streams[i].Indices = []int32{}
		}
	}
	for _, c := range chunks {
		out.Sequences += c.Sequences
		out.IDs = append(out.IDs, c.IDs...)
		for i := range c.Streams {
			d, o := &c.Streams[i], &out.Streams[i]
			base := o.SeqStart[len(o.SeqStart)-1]
			for _, s := range d.SeqStart[1:] {
				o.SeqStart = append(o.SeqStart, base+s)
			}
			if d.SampleStart != nil {
				vb := o.SampleStart[len(o.SampleStart)-1]
				for _, s := range d.SampleStart[1:] {
					o.SampleStart = append(o.SampleStart, vb+s)
				}
				o.Indices = append(o.Indices, d.Indices...)
			}
			o.Values.Append(d.Values)
		}
	}
	return out
}

func TestWriterText(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 2},
		{Name: "y", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 1},
	}}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 2}, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: []byte{1, 2, 255, 0}}},
		{SeqStart: []int64{0, 1, 2}, Values: toBuffer([]float64{0.1, -2.5e-7}, mlfeed.Float32)},
	}}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if want := "|x 1 2 |y 0.1\n|x 255 0 |y -2.5e-07\n"; buf.String() != want {
		t.Fatalf("got %q want %q", buf.String(), want)
	}
}

// TestWriterNumbersSequences checks that multi-sample sequences without source ids get ids.
func TestWriterNumbersSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sc, c := randomChunk(rng, mlfeed.Float32, 3, 4, false)
	c.Streams[0].SeqStart = []int64{0, 2, 3, c.Streams[0].SeqStart[3]}
	c.Streams[1].SeqStart = c.Streams[0].SeqStart
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, sc, nil)
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !strings.HasPrefix(buf.String(), "0 |F ") {
		t.Fatalf("no ids: %q", buf.String()[:40])
	}
	w, _ = NewWriter(io.Discard, sc, &WriterOptions{IDs: IDsNone})
	if err := w.WriteChunk(c); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Fatalf("IDsNone with a 2-sample sequence: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	if _, err := NewWriter(io.Discard, mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "s", Type: mlfeed.String}}}, nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("string stream: %v", err)
	}
	if _, err := NewWriter(io.Discard, mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "my col", Type: mlfeed.Float32, Dim: 1}}}, nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("name with a space: %v", err)
	}
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{dense("a", 1)}}
	sc.Streams[0].Type = mlfeed.Float64
	w, _ := NewWriter(io.Discard, sc, nil)
	c := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: toBuffer([]float64{math.NaN()}, mlfeed.Float64)}}}
	if err := w.WriteChunk(c); !errors.Is(err, mlfeed.ErrRange) {
		t.Fatalf("NaN: %v", err)
	}
	sc.HasIDs = true
	w, _ = NewWriter(io.Discard, sc, nil)
	c = &mlfeed.Chunk{Sequences: 2, IDs: []string{"5", "05"}, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: toBuffer([]float64{1, 2}, mlfeed.Float64)}}}
	if err := w.WriteChunk(c); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("equal consecutive ids: %v", err)
	}
}

// TestCreateNonSeekable writes through the registry to a pipe, as `mlfeed cat` does to stdout.
func TestCreateNonSeekable(t *testing.T) {
	ft, _ := format.Lookup("ctf")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(pr)
		done <- string(b)
	}()
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "a", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 2}}}
	sink, err := ft.Create(pw, sc, &format.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: toBuffer([]float64{1.5, 2}, mlfeed.Float32)}}}
	if err := sink.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if got := <-done; got != "|a 1.5 2\n" {
		t.Fatalf("got %q", got)
	}
	if _, err := ft.Create(pw, sc, &format.WriteOptions{Params: map[string]string{"ids": "sometimes"}}); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("bad ids param: %v", err)
	}
}

// TestRewriteCNTKFiles reads CNTK's inputs, writes them and reads them back.
func TestRewriteCNTKFiles(t *testing.T) {
	for _, name := range []string{"50x20_jagged_sequences_dense.txt", "20x10_MI_jagged_samples_sparse.txt", "ref_data_with_escape_sequences.txt", "Simple_dense.txt"} {
		t.Run(name, func(t *testing.T) {
			r, err := Open(testdataPath(t, name), &ReaderOptions{Precision: mlfeed.Float64})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var buf bytes.Buffer
			w, err := NewWriter(&buf, r.Schema(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []*mlfeed.Chunk
			err = r.ReadChunks(context.Background(), func(_ int, c *mlfeed.Chunk) error {
				want = append(want, c)
				return w.WriteChunk(c)
			})
			if err != nil || w.Close() != nil {
				t.Fatal(err)
			}
			r2, got, err := readAll(t, buf.String(), &ReaderOptions{Inputs: r.Schema().Streams, Precision: mlfeed.Float64})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := flat(r, want), flat(r2, got); a != b {
				t.Fatalf("round trip differs:\n%s", firstDiff(b, a))
			}
		})
	}
}
