package fastfloat

import (
	"math/bits"
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

// benchLine returns a line of 100 values with up to six decimals, each followed by a space.
func benchLine() []byte {
	var line []byte
	x := uint64(12345)
	for k := 0; k < 100; k++ {
		x = x*6364136223846793005 + 1442695040888963407
		v := float64(int64(x>>40)%2000000-1000000) / 1e6
		line = strconv.AppendFloat(line, v, 'f', -1, 64)
		line = append(line, ' ')
	}
	return line
}

// BenchmarkScanLine scans a line of 100 values with six decimals, as CTF dense data holds.
func BenchmarkScanLine(b *testing.B) {
	line := benchLine()
	b.SetBytes(int64(len(line)))
	var s float64
	for i := 0; i < b.N; i++ {
		for p := 0; p < len(line); {
			v, n, _ := Scan(line[p:])
			s += v
			p += n + 1
		}
	}
	_ = s
}

// BenchmarkTokenLine scans BenchmarkScanLine's line with Spaces and Token, as CTF's dense
// parser does.
func BenchmarkTokenLine(b *testing.B) {
	line := benchLine()
	line = append(line, make([]byte, 80)...)
	b.SetBytes(int64(len(line) - 80))
	var s float64
	for i := 0; i < b.N; i++ {
		for p := 0; p < len(line)-80; {
			q := p
			for m := Spaces(line[p:]); m != 0; m &= m - 1 {
				e := p + bits.TrailingZeros64(m)
				v, _, ok := Token(line, q, e)
				if !ok {
					b.Fatalf("Token(%q)", line[q:e])
				}
				s += v
				q = e + 1
			}
			p = q
		}
	}
	_ = s
}
