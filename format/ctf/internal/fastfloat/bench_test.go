package fastfloat

import (
	"strconv"
	"testing"
)

var benchTokens = [][]byte{[]byte("0.123456"), []byte("-251.7"), []byte("6.4265e+020"), []byte("1"), []byte("0.00160272")}

func BenchmarkScan(b *testing.B) {
	n := 0
	for _, t := range benchTokens {
		n += len(t)
	}
	b.SetBytes(int64(n))
	var s float64
	for i := 0; i < b.N; i++ {
		for _, t := range benchTokens {
			v, _, _ := Scan(t)
			s += v
		}
	}
	_ = s
}

func BenchmarkStrconv(b *testing.B) {
	n := 0
	for _, t := range benchTokens {
		n += len(t)
	}
	b.SetBytes(int64(n))
	var s float64
	for i := 0; i < b.N; i++ {
		for _, t := range benchTokens {
			v, _ := strconv.ParseFloat(string(t), 64)
			s += v
		}
	}
	_ = s
}
