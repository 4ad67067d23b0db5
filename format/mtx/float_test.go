package mtx

import (
	"math"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed/internal/nantext"
)

// FuzzParseFloat checks the fast decimal path against strconv.ParseFloat, and NaN texts
// against internal/nantext.
func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "-2.25", "0.1", "123456789012345", "1234567.89012345", ".5", "5.", "1e5", "-0.007721779", "nan", "+3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseFloat([]byte(s))
		if nan, isNaN := nantext.Parse([]byte(s)); isNaN {
			// NaN with a sign or a payload ("-nan", "nan(0x1)", as C and mlfeed's writer
			// print them), which strconv refuses: nantext's bits, exactly
			if !ok || math.Float64bits(got) != math.Float64bits(nan) {
				t.Fatalf("%q: %v (%#x) ok %v, want nantext's %#x", s, got, math.Float64bits(got), ok, math.Float64bits(nan))
			}
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
				err = nil
			}
		}
		if ok != (err == nil) {
			t.Fatalf("%q: ok %v, strconv error %v", s, ok, err)
		}
		if ok && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("%q: %v, strconv %v", s, got, want)
		}
	})
}
