// Package nantext writes NaNs as text and reads them back bit for bit, for the text formats
// (LIBSVM, Matrix Market).
//
// The forms are C's (strtod's n-char-sequence):
//
//	nan            0x7ff8000000000000, the quiet NaN C's NAN, numpy's np.nan and strtod give
//	-nan           0xfff8000000000000
//	nan(0xM)       the NaN whose 52-bit mantissa is M (nonzero), sign bit clear
//	-nan(0xM)      the same with the sign bit set
//
// Letters may be of either case and a "+" may lead. glibc's strtod reads nan(0xM) to the same
// bits when the NaN is quiet (it sets the quiet bit of a signalling one); Python's float()
// reads nan and -nan but refuses the parenthesised form.
package nantext

import (
	"math"
	"strconv"
)

const (
	expBits  = 0x7ff0000000000000
	mantBits = 1<<52 - 1
	signBit  = 1 << 63
	quiet    = 0x7ff8000000000000 // the canonical quiet NaN
)

// Append appends the text of the NaN v (whose bits are kept by the form chosen); v must be a
// NaN.
func Append(dst []byte, v float64) []byte {
	b := math.Float64bits(v)
	if b&signBit != 0 {
		dst = append(dst, '-')
	}
	dst = append(dst, "nan"...)
	if b&^signBit == quiet {
		return dst
	}
	dst = append(dst, "(0x"...)
	dst = strconv.AppendUint(dst, b&mantBits, 16)
	return append(dst, ')')
}

// Widen32 returns the float64 NaN that the float32 NaN of bits b becomes with its payload
// kept and its quiet bit as it is (a conversion in hardware sets the quiet bit).
func Widen32(b uint32) float64 {
	return math.Float64frombits(uint64(b>>31)<<63 | expBits | uint64(b&(1<<23-1))<<29)
}

// Parse reads a whole token as a NaN in one of the package's forms. ok is false when tok is
// not one (it may still be another number).
func Parse(tok []byte) (v float64, ok bool) {
	var b uint64
	i := 0
	if len(tok) > 0 && (tok[0] == '-' || tok[0] == '+') {
		if tok[0] == '-' {
			b = signBit
		}
		i = 1
	}
	if len(tok)-i < 3 || lower(tok[i]) != 'n' || lower(tok[i+1]) != 'a' || lower(tok[i+2]) != 'n' {
		return 0, false
	}
	i += 3
	if i == len(tok) {
		return math.Float64frombits(b | quiet), true
	}
	// "(0x" hex ")"
	if len(tok)-i < 5 || tok[i] != '(' || tok[i+1] != '0' || lower(tok[i+2]) != 'x' || tok[len(tok)-1] != ')' {
		return 0, false
	}
	hex := tok[i+3 : len(tok)-1]
	if len(hex) == 0 || len(hex) > 16 {
		return 0, false
	}
	var m uint64
	for _, c := range hex {
		switch {
		case c >= '0' && c <= '9':
			m = m<<4 | uint64(c-'0')
		case lower(c) >= 'a' && lower(c) <= 'f':
			m = m<<4 | uint64(lower(c)-'a'+10)
		default:
			return 0, false
		}
	}
	if m == 0 || m > mantBits {
		return 0, false
	}
	return math.Float64frombits(b | expBits | m), true
}

func lower(c byte) byte { return c | 0x20 }
