package fsum

import "testing"

func TestFloat32s(t *testing.T) {
	v := make([]float32, 21) // two blocks of eight and a tail
	want := 0.0
	for i := range v {
		v[i] = float32(i) - 3.5
		want += float64(v[i])
	}
	if got := Float32s(v); got != want {
		t.Fatalf("sum %v, want %v", got, want)
	}
	if Float32s(nil) != 0 {
		t.Fatal("empty sum")
	}
}
