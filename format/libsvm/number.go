package libsvm

import (
	"encoding/binary"

	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scanValue reads the number at the start of b as fastfloat.Scan does, with a quicker path for
// the form dump_svmlight_file and most writers use: [-]digits[.digits], no exponent, at most
// 19 digits, eight fraction digits at a time. Such a number is an integer mantissa of at most
// 2^53 over an exact power of ten, so one division rounds it correctly (Clinger's fast path),
// the same result as strconv.ParseFloat. Other numbers go to fastfloat.Scan.
func scanValue(b []byte) (float64, int, fastfloat.Status) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	d0 := i
	var mant uint64
	for i < len(b) && b[i]-'0' <= 9 && i-d0 < 19 {
		mant = mant*10 + uint64(b[i]-'0')
		i++
	}
	nd := i - d0
	frac := 0
	if nd > 0 && i < len(b) && b[i] == '.' {
		i++
		f0 := i
		for i+8 <= len(b) && nd+8 <= 19 {
			x := binary.LittleEndian.Uint64(b[i:])
			if x&0xF0F0F0F0F0F0F0F0|(x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 != 0x3333333333333333 {
				break // not eight digits
			}
			mant = mant*100000000 + eightDigits(x)
			i += 8
			nd += 8
		}
		for i < len(b) && b[i]-'0' <= 9 && nd < 19 {
			mant = mant*10 + uint64(b[i]-'0')
			i++
			nd++
		}
		frac = i - f0
	}
	if nd == 0 || nd >= 19 || mant > 1<<53 || frac > 22 || i < len(b) && (b[i]-'0' <= 9 || b[i] == 'e' || b[i] == 'E' || b[i] == '.') {
		return fastfloat.Scan(b)
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, i, fastfloat.OK
}

// eightDigits converts eight ASCII digits, the first in the lowest byte, to their value.
func eightDigits(x uint64) uint64 {
	x -= 0x3030303030303030
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}
