package nantext

import (
	"math"
	"testing"
)

// TestRoundTrip writes NaNs of every kind and reads them back to the same bits.
func TestRoundTrip(t *testing.T) {
	for _, b := range []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000001,
		0x7ff0000000000001, 0x7ffc00000000dead, 0xfff4000000000123, 0x7fffffffffffffff, 0xffffffffffffffff} {
		text := Append(nil, math.Float64frombits(b))
		v, ok := Parse(text)
		if !ok || math.Float64bits(v) != b {
			t.Errorf("%#x -> %q -> %#x, %v", b, text, math.Float64bits(v), ok)
		}
	}
	if got := string(Append(nil, math.Float64frombits(0x7ff8000000000000))); got != "nan" {
		t.Errorf("canonical NaN written %q, want nan", got)
	}
}

// TestParse checks the accepted forms and some that are not NaNs.
func TestParse(t *testing.T) {
	for tok, want := range map[string]uint64{"nan": 0x7ff8000000000000, "NaN": 0x7ff8000000000000, "+NAN": 0x7ff8000000000000,
		"-nan": 0xfff8000000000000, "nan(0x1)": 0x7ff0000000000001, "-NaN(0XABC)": 0xfff0000000000abc} {
		v, ok := Parse([]byte(tok))
		if !ok || math.Float64bits(v) != want {
			t.Errorf("%q: %#x, %v; want %#x", tok, math.Float64bits(v), ok, want)
		}
	}
	for _, tok := range []string{"", "na", "nanx", "nan(", "nan()", "nan(0x)", "nan(0x0)", "nan(12)", "nan(0x10000000000000)", "nan(0xg)", "inf", "1.5", "--nan"} {
		if _, ok := Parse([]byte(tok)); ok {
			t.Errorf("%q read as a NaN", tok)
		}
	}
}

// TestWiden32 widens float32 NaNs with their payloads, signalling ones included.
func TestWiden32(t *testing.T) {
	for b32, b64 := range map[uint32]uint64{0x7fc00000: 0x7ff8000000000000, 0xffc00001: 0xfff8000020000000, 0x7f800001: 0x7ff0000020000000} {
		if got := math.Float64bits(Widen32(b32)); got != b64 {
			t.Errorf("%#x widened to %#x, want %#x", b32, got, b64)
		}
	}
}

// FuzzParse: whatever Parse accepts is a NaN that Append writes back to text Parse reads to
// the same bits.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"nan", "-nan", "nan(0x1)", "NaN(0Xfffffffffffff)", "nan(0x8000000000001)"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		v, ok := Parse(tok)
		if !ok {
			return
		}
		if !math.IsNaN(v) {
			t.Fatalf("%q read as %v", tok, v)
		}
		w, ok := Parse(Append(nil, v))
		if !ok || math.Float64bits(w) != math.Float64bits(v) {
			t.Fatalf("%q: %#x does not come back", tok, math.Float64bits(v))
		}
	})
}
