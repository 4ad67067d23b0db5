package mlfeed

import (
	"errors"
	"math"
	"testing"
)

func TestConvertBufferLossless(t *testing.T) {
	cases := []struct {
		from, to ElemType
		vals     []float64
		ok       bool
	}{
		{Uint8, Float32, []float64{0, 255}, true},
		{Float32, Uint8, []float64{0, 255}, true},
		{Float32, Uint8, []float64{0.5}, false},
		{Float32, Uint8, []float64{256}, false},
		{Float32, Uint8, []float64{-1}, false},
		{Int16, Int8, []float64{-128, 127}, true},
		{Int16, Int8, []float64{-129}, false},
		{Int32, Uint16, []float64{65535}, true},
		{Int32, Uint16, []float64{-1}, false},
		{Float64, Float32, []float64{0.1}, false},
		{Float64, Float32, []float64{0.5, math.Inf(1)}, true},
		{Float32, Float64, []float64{0.1}, true},
		{Int32, Float32, []float64{1 << 24}, true},
		{Int32, Float32, []float64{1<<24 + 1}, false},
		{Float64, Int32, []float64{math.NaN()}, false},
		{Bool, Uint8, []float64{0, 1}, true},
		{Uint8, Bool, []float64{2}, false},
	}
	for _, c := range cases {
		b := NewBuffer(c.from, len(c.vals))
		for i, v := range c.vals {
			b.SetFloat64(i, v)
		}
		out, err := ConvertBuffer(b, c.to)
		if c.ok != (err == nil) {
			t.Errorf("%s %v -> %s: err %v, want ok=%v", c.from, c.vals, c.to, err, c.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrRange) {
				t.Errorf("%s -> %s: error %v does not wrap ErrRange", c.from, c.to, err)
			}
			continue
		}
		for i := range c.vals {
			want := b.Float64At(i)
			if got := out.Float64At(i); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s -> %s: element %d is %v, want %v", c.from, c.to, i, got, want)
			}
		}
	}
}

func TestConvertBufferBigIntegers(t *testing.T) {
	b := NewBuffer(Uint64, 1)
	putUint(b.Bytes, 8, math.MaxUint64)
	if _, err := ConvertBuffer(b, Int64); !errors.Is(err, ErrRange) {
		t.Errorf("MaxUint64 -> int64: %v", err)
	}
	if _, err := ConvertBuffer(b, Float64); !errors.Is(err, ErrRange) {
		t.Errorf("MaxUint64 -> float64 is inexact: %v", err)
	}
	putUint(b.Bytes, 8, 1<<53+1)
	if _, err := ConvertBuffer(b, Float64); !errors.Is(err, ErrRange) {
		t.Errorf("2^53+1 -> float64 is inexact: %v", err)
	}
	putUint(b.Bytes, 8, 1<<62)
	out, err := ConvertBuffer(b, Int64)
	if err != nil || out.Int64At(0) != 1<<62 {
		t.Errorf("2^62 -> int64: %v %v", out, err)
	}
	n := NewBuffer(Int64, 1)
	putUint(n.Bytes, 8, uint64(1)<<63) // math.MinInt64
	if out, err := ConvertBuffer(n, Float64); err != nil || out.Float64At(0) != -(1<<63) {
		t.Errorf("MinInt64 -> float64 is exact: %v %v", out, err)
	}
	if _, err := ConvertBuffer(NewBuffer(String, 1), Float32); !errors.Is(err, ErrUnsupported) {
		t.Errorf("string -> float32: %v", err)
	}
}

func TestViews(t *testing.T) {
	b := NewBuffer(Float32, 3)
	b.SetFloat64(2, 1.5)
	if v := b.Float32s(); len(v) != 3 || v[2] != 1.5 {
		t.Fatalf("view %v", v)
	}
	// A misaligned buffer is copied, not mis-read.
	raw := append([]byte{0}, NewBuffer(Float64, 2).Bytes...)
	mis := Buffer{Type: Float64, Bytes: raw[1:]}
	mis.SetFloat64(1, -2)
	if v := mis.Float64s(); v[1] != -2 {
		t.Fatalf("misaligned view %v", v)
	}
	defer func() {
		if recover() == nil {
			t.Error("viewing float32 as int32 did not panic")
		}
	}()
	b.Int32s()
}

func TestParseElemType(t *testing.T) {
	for tt := Float32; tt < numElemTypes; tt++ {
		got, err := ParseElemType(tt.String())
		if err != nil || got != tt {
			t.Errorf("%s: %v %v", tt, got, err)
		}
	}
	if got, _ := ParseElemType("double"); got != Float64 {
		t.Error("double")
	}
	if _, err := ParseElemType("float16"); err == nil {
		t.Error("float16 accepted")
	}
}
