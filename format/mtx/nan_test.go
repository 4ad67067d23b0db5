package mtx_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
)

// nanBits are NaNs of every kind: numpy's np.nan, its negative, Go's math.NaN(), signalling
// ones and ones with payloads.
var nanBits = []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000001, 0x7ff0000000000001, 0x7ffc00000000dead, 0xfff4000000000123}

// TestNaNPayloads writes NaNs to Matrix Market and reads them back bit for bit (every NaN
// read back as Go's math.NaN(), 0x7ff8000000000001, before), float64 and float32 values.
func TestNaNPayloads(t *testing.T) {
	n := len(nanBits)
	idx := mlfeed.NewBuffer(mlfeed.Int64, n)
	for i := range n {
		idx.Int64s()[i] = int64(i)
	}
	f64 := mlfeed.NewBuffer(mlfeed.Float64, n)
	f32 := mlfeed.NewBuffer(mlfeed.Float32, n)
	want32 := []uint32{0x7fc00000, 0xffc00000, 0x7fc00001, 0x7f800001, 0x7fe0dead, 0xffa00123}
	for i, b := range nanBits {
		f64.Float64s()[i] = math.Float64frombits(b)
		f32.Float32s()[i] = math.Float32frombits(want32[i])
	}
	for _, c := range []struct {
		vals mlfeed.Buffer
		want func(i int) uint64
	}{
		{f64, func(i int) uint64 { return nanBits[i] }},
		{f32, func(i int) uint64 { // as float64: the payload moved up, the quiet bit as it was
			b := want32[i]
			return uint64(b>>31)<<63 | 0x7ff<<52 | uint64(b&(1<<23-1))<<29
		}},
	} {
		m, err := binsparse.New(binsparse.COOR, []int64{int64(n), int64(n)}, map[string]mlfeed.Buffer{"indices_0": idx, "indices_1": idx, "values": c.vals}, false)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := mtx.Write(&text, m, nil); err != nil {
			t.Fatal(err)
		}
		back, err := mtx.Read(bytes.NewReader(text.Bytes()), "nan.mtx")
		if err != nil {
			t.Fatalf("%v\n%s", err, text.Bytes())
		}
		got := back.Values().Float64s()
		for i := range n {
			if g := math.Float64bits(got[i]); g != c.want(i) {
				t.Errorf("%s value %d: %#x read back as %#x\n%s", c.vals.Type, i, c.want(i), g, text.Bytes())
			}
		}
	}
}
