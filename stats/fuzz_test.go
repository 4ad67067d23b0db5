package stats

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// FuzzCompute reads arbitrary bytes as float32 values (dense, dim 3), int16 values (dense
// scalars) and as a sparse stream of dim 7 whose indices come from the bytes, and checks the
// figures against a direct computation: counts, min, max, mean, zeros, histogram totals.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0xc0, 0x7f, 1, 2, 3, 4})
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0xff, 0xff, 0x7f, 0xff, 0, 0, 0, 0x80, 9, 9, 9, 9, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 12 // sequences
		if n == 0 {
			return
		}
		sc := mlfeed.Schema{Streams: []mlfeed.Stream{
			{Name: "f", Type: mlfeed.Float32, Dim: 3},
			{Name: "i", Type: mlfeed.Int16, Dim: 1},
			{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Uint8, Dim: 7},
		}}
		seq := make([]int64, n+1)
		for i := range seq {
			seq[i] = int64(i)
		}
		fb := mlfeed.NewBuffer(mlfeed.Float32, 3*n)
		copy(fb.Bytes, data[:12*n])
		ib := mlfeed.NewBuffer(mlfeed.Int16, n)
		copy(ib.Bytes, data[:2*n])
		// Sparse: sample q has data[q]%4 non-zeros at indices data[k]%7, values data[k].
		ss := []int64{0}
		var idx []int32
		var vals []byte
		for q := range n {
			for k := range int(data[q] % 4) {
				b := data[(q+k)%len(data)]
				idx, vals = append(idx, int32(b%7)), append(vals, b)
			}
			ss = append(ss, int64(len(idx)))
		}
		c := &mlfeed.Chunk{Sequences: n, Streams: []mlfeed.StreamData{
			{SeqStart: seq, Values: fb},
			{SeqStart: seq, Values: ib},
			{SeqStart: seq, SampleStart: ss, Indices: idx, Values: mlfeed.Buffer{Type: mlfeed.Uint8, Bytes: vals}},
		}}
		src, err := mlfeed.NewMemorySource(sc, c)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Compute(context.Background(), src, &Options{Bins: 5})
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, got *Numeric, vals []float64) {
			var want Numeric
			want.Min, want.Max = math.Inf(1), math.Inf(-1)
			var sum float64
			for _, v := range vals {
				switch {
				case math.IsNaN(v):
					want.NaN++
				case math.IsInf(v, 1):
					want.PosInf++
				case math.IsInf(v, -1):
					want.NegInf++
				default:
					want.Finite++
					sum += v
					want.Min, want.Max = min(want.Min, v), max(want.Max, v)
					if v == 0 {
						want.Zeros++
					}
				}
			}
			if got.Count != int64(len(vals)) || got.Finite != want.Finite || got.NaN != want.NaN || got.PosInf != want.PosInf ||
				got.NegInf != want.NegInf || got.Zeros != want.Zeros || got.Histogram.Total() != want.Finite {
				t.Fatalf("%s: got %+v, want %+v", name, got, want)
			}
			if want.Finite == 0 {
				return
			}
			if got.Min != want.Min || got.Max != want.Max {
				t.Fatalf("%s: min %g max %g, want %g %g", name, got.Min, got.Max, want.Min, want.Max)
			}
			if !(got.Mean >= want.Min && got.Mean <= want.Max) && !math.IsInf(sum, 0) {
				t.Fatalf("%s: mean %g outside [%g, %g]", name, got.Mean, want.Min, want.Max)
			}
			h := got.Histogram
			for i := 1; i < len(h.Edges); i++ {
				if !(h.Edges[i] > h.Edges[i-1]) {
					t.Fatalf("%s: edges %v not increasing", name, h.Edges)
				}
			}
			if h.Edges[0] > want.Min || h.Edges[len(h.Edges)-1] <= want.Max && want.Max < 0x1p128 {
				t.Fatalf("%s: edges %v do not hold [%g, %g]", name, h.Edges, want.Min, want.Max)
			}
		}
		var fv, iv, sv []float64
		for k := range 3 * n {
			fv = append(fv, float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*k:]))))
		}
		for k := range n {
			iv = append(iv, float64(int16(binary.LittleEndian.Uint16(data[2*k:]))))
		}
		for _, v := range vals {
			sv = append(sv, float64(v))
		}
		check("f", r.Streams[0].Numeric, fv)
		check("i", r.Streams[1].Numeric, iv)
		if len(sv) > 0 {
			check("s", r.Streams[2].Numeric, sv)
		}
		if r.Streams[2].Values != int64(len(vals)) || r.Streams[2].Sparse.NonZeros.Histogram.Total() != int64(n) {
			t.Fatalf("s: %+v", r.Streams[2].Sparse)
		}
	})
}
