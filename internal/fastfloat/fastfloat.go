// Package fastfloat scans the real numbers of the CNTK Text Format and converts them to
// float64 with correct rounding: the result is bit-identical to strconv.ParseFloat(token, 64).
//
// The token syntax is the one CNTK's text reader accepts:
//
//	[+-]? digit+ ( "." digit* )? ( [eE] [+-]? digit+ )?
//
// A number ends at the first byte that cannot continue it. Numbers of at most 19 digits are
// converted without strconv: an integer up to 2^53 and a power of ten up to 10^22 with one
// float64 multiplication or division, which is correctly rounded because both operands are
// exact (Clinger's fast path); other mantissas and exponents within ±30 with the Eisel-Lemire
// algorithm, which recognises the rare cases it cannot round and hands them on. Everything
// else falls back to strconv.ParseFloat.
package fastfloat

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// Status says how a scan ended.
type Status uint8

// Scan results. For the Bad* results the returned length is the offset of the offending byte.
const (
	// OK: a number was read; it ends before the returned length's byte, or at the end of input.
	OK Status = iota
	// BadStart: the first byte is neither a digit nor a sign.
	BadStart
	// BadAfterSign: a sign is not followed by a digit.
	BadAfterSign
	// BadAfterE: an exponent letter is followed by neither a digit nor a sign.
	BadAfterE
	// BadAfterExpSign: an exponent sign is not followed by a digit.
	BadAfterExpSign
	// BadEnd: the input ended after a sign, an exponent letter or an exponent sign.
	BadEnd
)

// signLen is 1 for the bytes of a sign, 0 for others: a table, since a branch on a sign that
// real data flips at random would be mispredicted half the time.
var signLen = [256]uint8{'+': 1, '-': 1}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// Scan reads a number at the start of b. It returns the value, the number of bytes the number
// occupies (or, when st is not OK, the offset of the byte that broke it) and the status. When
// the number runs to the end of b, n == len(b) and st is OK or BadEnd.
func Scan(b []byte) (v float64, n int, st Status) {
	v, n, st, _ = ScanShort(b)
	return v, n, st
}

// ScanShort is Scan that also reports whether the number is short: at most six significant
// digits and a decimal exponent within ±22, so that float32 holds it to every digit it states
// (FLT_DIG is 6, and such a number lies within float32's normal range). A number that is not
// short may still fit float32; short is a cheap sufficient condition.
func ScanShort(b []byte) (v float64, n int, st Status, short bool) {
	if len(b) == 0 {
		return 0, 0, BadEnd, false
	}
	// Sign handling without branches: signs are as likely as not in real data.
	c := b[0]
	var sign uint64
	if c == '-' {
		sign = 1 << 63
	}
	i := int(signLen[c])
	if i == len(b) {
		return 0, i, BadEnd, false
	}
	if b[i]-'0' > 9 {
		if i == 1 {
			return 0, i, BadAfterSign, false
		}
		return 0, 0, BadStart, false
	}
	// Integer parts are short: a plain loop is quicker than the eight-byte path there.
	d0 := i
	var mant uint64
	for i < len(b) && i-d0 < 8 {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		mant = mant*10 + uint64(d)
		i++
	}
	if i-d0 == 8 {
		mant, i = digits(b, i, mant)
	}
	nd := i - d0
	exp := 0
	fracDigits := true // an exponent may follow: no '.', or digits after it
	if i < len(b) && b[i] == '.' {
		i++
		f0 := i
		if i+8 <= len(b) {
			v, n := Digits8(b[i:])
			mant = mant*pow10u[n] + v
			i += n
			if n == 8 {
				mant, i = digits(b, i, mant)
			}
		} else {
			mant, i = digits(b, i, mant)
		}
		fracDigits = i > f0
		nd += i - f0
		exp = f0 - i
	}
	if fracDigits && i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i == len(b) {
			return 0, i, BadEnd, false
		}
		eneg := false
		if c := b[i]; c == '-' || c == '+' {
			eneg = c == '-'
			i++
			if i == len(b) {
				return 0, i, BadEnd, false
			}
			if b[i]-'0' > 9 {
				return 0, i, BadAfterExpSign, false
			}
		} else if c-'0' > 9 {
			return 0, i, BadAfterE, false
		}
		e := 0
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			if e < 1e8 {
				e = e*10 + int(d)
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if nd <= 19 {
		if mant <= 1<<53 && exp >= -22 && exp <= 22 {
			f := float64(mant)
			switch {
			case exp < 0:
				f /= pow10[-exp]
			case exp > 0:
				f *= pow10[exp]
			}
			return math.Float64frombits(math.Float64bits(f) | sign), i, OK, mant < 1e6
		}
		if mant == 0 {
			return math.Float64frombits(sign), i, OK, true
		}
		if f, ok := lemire(mant, exp, sign != 0); ok {
			return f, i, OK, false
		}
	}
	return slow(b[:i]), i, OK, false
}

// pow10u holds 10^n for n in [0, 8].
var pow10u = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// digits accumulates the run of ASCII digits at b[i:] into acc (acc·10^n + digits, wrapping
// on overflow, which callers detect by counting digits) and returns the index after the run.
// It converts eight bytes at a time where eight are available (SWAR), so that the run's end
// costs no mispredicted branch.
func digits(b []byte, i int, acc uint64) (uint64, int) {
	for i+8 <= len(b) {
		if b[i]-'0' > 9 { // the run has ended: spare the eight-byte conversion
			return acc, i
		}
		v, n := Digits8(b[i:])
		if n == 0 {
			return acc, i
		}
		acc = acc*pow10u[n] + v
		i += n
		if n < 8 {
			return acc, i
		}
	}
	for i < len(b) {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		acc = acc*10 + uint64(d)
		i++
	}
	return acc, i
}

// Digits8 returns the value of the ASCII digits that start b and their count n, looking at
// b[:8] only (n is 8 when all eight are digits). b must hold at least eight bytes.
func Digits8(b []byte) (v uint64, n int) {
	x := binary.LittleEndian.Uint64(b)
	n = bits.TrailingZeros64(nonDigits(x)) >> 3
	// Shift the n digits to the top, then sum pairs, quads and octets of them.
	return sum8((x - 0x3030303030303030) << (uint(8-n) * 8)), n
}

// slow converts a token the fast path cannot handle exactly.
func slow(tok []byte) float64 {
	// The token is a syntactically valid Go float; the only possible error is ErrRange, with
	// ±Inf or ±0 as the correctly rounded result, which is what is wanted.
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 64)
	return f
}

// Parse converts a complete token to float64 as strconv.ParseFloat would, or reports false when
// b is not exactly one CTF number.
func Parse(b []byte) (float64, bool) {
	v, n, st := Scan(b)
	return v, st == OK && n == len(b)
}

// Token converts b[s:e], which must be all of one number, when it has the short form most
// text data holds: an optional sign and at most eight bytes of digits with at most one '.'
// among them, after at least one digit ("-0.788744", "12", "3."). It reports false for any
// other text, which the caller then hands to Scan; when it reports true, the value and short
// are ScanShort's for b[s:], provided the byte at e (if any) cannot continue a number (it is
// not a digit, '.', 'e' or 'E'). It also takes nine to sixteen bytes after the sign when a '.'
// is among the first eight ("0.00160272"). b must hold at least nine bytes from s (seventeen
// for the longer numbers); it reports false otherwise.
//
// It looks at eight bytes at once and has no loop, so that it costs about the same for every
// number, and its caller can find the numbers' ends on its own (see Spaces).
func Token(b []byte, s, e int) (v float64, short, ok bool) {
	if uint(s) >= uint(len(b)) || len(b)-s < 9 {
		return 0, false, false
	}
	c := b[s]
	var sign uint64
	if c == '-' {
		sign = 1 << 63
	}
	s += int(signLen[c])
	l := e - s
	if uint(l-1) > 7 {
		return tokenLong(b, s, l, sign)
	}
	x := binary.LittleEndian.Uint64(b[s:])
	// Drop the '.', if any, so that x starts with the m digits to convert.
	m, frac := l, 0
	if byte(x>>8) == '.' && l >= 2 { // one integer digit, the usual case
		x = x&0xFF | x>>8&^0xFF
		m, frac = l-1, l-2
	} else if nd := nonDigits(x) & keep(l); nd != 0 {
		p := bits.TrailingZeros64(nd) >> 3
		if p == 0 || byte(x>>(8*p&63)) != '.' {
			return 0, false, false
		}
		low := uint64(1)<<(8*p&63) - 1
		x = x&low | x>>8&^low
		m, frac = l-1, l-1-p
	}
	if nonDigits(x)&keep(m) != 0 {
		return 0, false, false
	}
	// The m digits (at least one), moved to the top and summed in pairs, quads and octets
	// (see Digits8; a borrow from the bytes after them cannot reach them).
	mant := sum8((x - 0x3030303030303030) << (8 * (8 - m) & 63))
	// At most eight digits and seven decimals: Clinger's fast path is exact.
	return signed(mant, sign) / pow10[frac&7], mant < 1e6, true
}

// signed returns mant as a float64 (exactly: it is below 2^53) with the sign bit of sign.
// Dividing it by a power of ten then rounds as dividing its magnitude does, since rounding to
// nearest is symmetric; converting a negated integer spares moving the quotient's bits.
func signed(mant, sign uint64) float64 {
	if mant == 0 {
		return math.Float64frombits(sign) // -0 stays -0
	}
	m := int64(mant)
	if sign != 0 {
		m = -m
	}
	return float64(m)
}

// tokenLong is Token for the l bytes from s, after the sign, when l is more than eight: it
// takes nine to sixteen bytes with a '.' among the first eight ("0.00160272").
func tokenLong(b []byte, s, l int, sign uint64) (v float64, short, ok bool) {
	if uint(l-9) > 7 || len(b)-s < 16 {
		return 0, false, false
	}
	x := binary.LittleEndian.Uint64(b[s:])
	y := binary.LittleEndian.Uint64(b[s+8:])
	p := bits.TrailingZeros64(nonDigits(x)) >> 3
	if p == 0 || p == 8 || byte(x>>(8*p&63)) != '.' {
		return 0, false, false
	}
	// Drop the '.': x takes y's first byte, and y holds the r digits after x's eight.
	low := uint64(1)<<(8*p&63) - 1
	x = x&low | x>>8&^low | y<<56
	y >>= 8
	r := l - 9
	if nonDigits(x) != 0 {
		return 0, false, false
	}
	mant := sum8(x - 0x3030303030303030)
	if r > 0 {
		if nonDigits(y)&keep(r) != 0 {
			return 0, false, false
		}
		mant = mant*pow10u[r] + sum8((y-0x3030303030303030)<<(8*(8-r)&63))
	}
	// At most fifteen digits and fourteen decimals: Clinger's fast path is exact.
	return signed(mant, sign) / pow10[(l-1-p)&15], mant < 1e6, true
}

// sum8 returns the number whose decimal digits are the bytes of w, the first in its low byte
// (the bytes hold 0 to 9).
func sum8(w uint64) uint64 {
	w = (w & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
	w = (w & 0x00FF00FF00FF00FF) * 6553601 >> 16
	return (w & 0x0000FFFF0000FFFF) * 42949672960001 >> 32
}

// nonDigits returns x with a nonzero byte where x has a byte that is not an ASCII digit, and
// zero bytes where it has digits up to the first of those. A byte is a digit when its high
// nibble is 3 and adding 6 keeps it 3; a carry out of x+6 comes from a non-digit, so it can
// only flag the digits after one, never hide a non-digit.
func nonDigits(x uint64) uint64 {
	return (x&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
}

// keep returns a mask of the low n bytes of a word, n in [1, 8].
func keep(n int) uint64 {
	return ^uint64(0) >> ((64 - 8*n) & 63)
}

// Spaces returns a mask of the bytes of b[:64] that are ' ': bit i for b[i]. b must hold at
// least 64 bytes.
func Spaces(b []byte) uint64 {
	b = b[:64]
	var m uint64
	for k := 0; k < 64; k += 8 {
		t := binary.LittleEndian.Uint64(b[k:]) ^ 0x2020202020202020
		// 0x80 in each byte of t that is zero, exactly (no borrows between bytes).
		z := ^((t&0x7F7F7F7F7F7F7F7F + 0x7F7F7F7F7F7F7F7F) | t | 0x7F7F7F7F7F7F7F7F)
		// Gather the eight 0x80 bits into one byte.
		m |= (z >> 7 * 0x0102040810204080 >> 56) << uint(k)
	}
	return m
}
