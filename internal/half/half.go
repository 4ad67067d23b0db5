// Package half converts IEEE 754 binary16 values (numpy's float16) to float32 and back.
// Every float16 is exactly a float32, so widening loses nothing (NaN payloads included);
// narrowing succeeds only for float32 values that are exactly a float16.
package half

import (
	"encoding/binary"
	"math"
	"sync"
)

// ToFloat32 returns the float32 of the binary16 bits h, exactly (a NaN keeps its payload).
func ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalize
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// FromFloat32 returns the binary16 bits of f and whether f is exactly a float16 value.
func FromFloat32(f float32) (uint16, bool) {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	frac := b & 0x7fffff
	switch {
	case exp == 0xff:
		if frac&0x1fff != 0 {
			return 0, false
		}
		return sign | 0x7c00 | uint16(frac>>13), true
	case exp == 0 && frac == 0:
		return sign, true
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return 0, false
	}
	if e >= 1 {
		if frac&0x1fff != 0 {
			return 0, false
		}
		return sign | uint16(e)<<10 | uint16(frac>>13), true
	}
	// subnormal float16: value = m * 2^-24
	if exp == 0 || e < -10 {
		return 0, false
	}
	m := frac | 0x800000
	shift := uint(14 - e)
	if m&(1<<shift-1) != 0 {
		return 0, false
	}
	return sign | uint16(m>>shift), true
}

// table holds the float32 bits of every float16, built on first use (256 KiB): a lookup is
// several times faster than the conversion.
var table = sync.OnceValue(func() *[1 << 16]uint32 {
	t := new([1 << 16]uint32)
	for h := range t {
		t[h] = math.Float32bits(ToFloat32(uint16(h)))
	}
	return t
})

// Widen writes the float16 values of src (big-endian if bigEndian, else little-endian) into
// dst as little-endian float32 values: len(dst) must be 2*len(src) (rounded down to whole
// values). src may be the second half of dst, to widen in place: each value is read before
// its float32 is written, and the float32 of value i ends where the float16 of value i+1
// begins.
func Widen(dst, src []byte, bigEndian bool) {
	t := table()
	n := min(len(src)/2, len(dst)/4)
	src, dst = src[:2*n], dst[:4*n]
	if bigEndian {
		for i := range n {
			binary.LittleEndian.PutUint32(dst[4*i:], t[binary.BigEndian.Uint16(src[2*i:])])
		}
		return
	}
	for i := range n {
		binary.LittleEndian.PutUint32(dst[4*i:], t[binary.LittleEndian.Uint16(src[2*i:])])
	}
}

// AppendWiden appends the float16 values of src (little-endian) to dst as little-endian
// float32 values.
func AppendWiden(dst, src []byte) []byte {
	t := table()
	for i := 0; i+1 < len(src); i += 2 {
		dst = binary.LittleEndian.AppendUint32(dst, t[binary.LittleEndian.Uint16(src[i:])])
	}
	return dst
}
