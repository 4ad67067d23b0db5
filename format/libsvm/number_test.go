package libsvm

import (
	"math"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

// FuzzScanValue checks scanValue against fastfloat.Scan (itself fuzzed against strconv): the
// same value bits, length and status for any input.
func FuzzScanValue(f *testing.F) {
	for _, s := range []string{"0.6716540974221343", "-2.5e17", "1e-300", "12345678901234567890", "0.1",
		"-0.0", "1.", "0.00000000000000000000001", "9007199254740993", "123456789.123456789 4:1", "nan", "-", "1.5x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, st := scanValue(b)
		w, wn, wst := fastfloat.Scan(b)
		if n != wn || st != wst || st == fastfloat.OK && math.Float64bits(v) != math.Float64bits(w) {
			t.Fatalf("%q: scanValue %v %d %v, fastfloat %v %d %v", b, v, n, st, w, wn, wst)
		}
		if st == fastfloat.OK {
			if p, err := strconv.ParseFloat(string(b[:n]), 64); err == nil && math.Float64bits(p) != math.Float64bits(v) {
				t.Fatalf("%q: %v, strconv %v", b[:n], v, p)
			}
		}
	})
}
