package ctf

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

// This file keeps CTF's decimal values whole when they are read as float32: a value whose
// text states more than float32 can hold (more significant digits than its float32 keeps, or a
// magnitude outside float32's range) is an error at its line and column naming the option that
// reads it whole (precision=double), unless the caller chose float32 explicitly.

// ErrPrecision is wrapped by the error for a value that float32 cannot hold as the text states
// it, or that is below float64's range (it would read as 0), when the precision was not chosen
// (ReaderOptions.Precision is Invalid). Validate reports
// such values as warnings (format.Warning) whatever the precision.
var ErrPrecision = fmt.Errorf("ctf: a value the element type cannot hold as written (%w)", mlfeed.ErrRange)

// minNormal32 is the smallest positive normal float32.
const minNormal32 = 0x1p-126

// fits32 reports whether tok, a CTF number whose correctly rounded float64 value is v, reads as
// a float32 that keeps every significant digit tok states: the float32 rounded to that many
// digits gives tok's value back. Numbers of up to six significant digits in float32's normal
// range always do (FLT_DIG); the spelling of infinity (1e999, as the Writer writes it) reads
// back as infinity. Numbers of more than 17 significant digits fit when float32 holds v exactly,
// as float64 keeps no more.
func fits32(tok []byte, v float64) bool {
	f := float32(v)
	if float64(f) == v {
		return true
	}
	if math.IsInf(float64(f), 0) || f == 0 {
		return false
	}
	nd := sigDigits(tok)
	if nd <= 6 && math.Abs(float64(f)) >= minNormal32 {
		return true
	}
	if nd > 17 {
		return false
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], float64(f), 'e', nd-1, 32)
	w, ok := fastfloat.Parse(s)
	return ok && w == v
}

// sigDigits counts the significant digits of a CTF number: the mantissa's digits without
// leading and trailing zeros (at least 1).
func sigDigits(tok []byte) int {
	n, zeros := 0, 0
	for _, c := range tok {
		switch {
		case c == 'e' || c == 'E':
			return max(n-zeros, 1)
		case c == '0':
			if n > 0 {
				n++
				zeros++
			}
		case c >= '1' && c <= '9':
			n++
			zeros = 0
		}
	}
	return max(n-zeros, 1)
}

// checkValue is called for a value that float32 does not hold exactly, tok its text at
// offset off: it fails (or, validating, warns) when tok does not fit float32.
func (p *parser[T]) checkValue(tok []byte, v float64, off int) {
	if v == 0 {
		if !nonzeroDigit(tok) {
			return // a zero
		}
		if p.quiet {
			panic(abort{errSequential})
		}
		line, col := p.lineCol(int64(off))
		p.lost(mlfeed.LineError(p.sp.path, line, col, fmt.Errorf("%w: %s is below float64's range and would read as 0", ErrPrecision, tok)))
		return
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 || fits32(tok, v) {
		return
	}
	if p.quiet {
		panic(abort{errSequential})
	}
	line, col := p.lineCol(int64(off))
	p.lost(mlfeed.LineError(p.sp.path, line, col, fmt.Errorf("%w: %s would become %v; read at double precision (option precision=double, ReaderOptions.Precision = mlfeed.Float64)", ErrPrecision, tok, float32(v))))
}

// lost reports a value that reading would change: a warning when validating, else the error
// that ends the parse.
func (p *parser[T]) lost(err error) {
	if p.strict != nil {
		if !p.strict(format.Warning(err)) {
			panic(abort{nil})
		}
		return
	}
	panic(abort{err})
}

// nonzeroDigit reports whether the mantissa of a CTF number has a digit other than 0.
func nonzeroDigit(tok []byte) bool {
	for _, c := range tok {
		if c == 'e' || c == 'E' {
			return false
		}
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

// needs64 reports whether a number of an inference scan token (the token, or what follows a
// sparse index's colon) does not fit float32. A short token of at most six significant digits
// and no exponent is decided without converting it; malformed tokens are left to the parser.
func needs64(tok []byte) bool {
	if len(tok) <= 12 && fewDigits(tok) {
		return false
	}
	v, ok := fastfloat.Parse(tok)
	return ok && !fits32(tok, v)
}

// fewDigits reports whether a number has no exponent and at most six significant digits
// (sigDigits), in one pass without a branch per byte: the inference scan asks it of every
// value, whose digits and zeros come in no order a branch predictor learns.
func fewDigits(tok []byte) bool {
	// n counts digits from the first nonzero one on, zeros the zeros that end them.
	var n, zeros, started, exp uint
	for _, c := range tok {
		k := uint(digitKind[c])
		nonzero, zero := k&1, k>>1&1
		exp |= k >> 2
		started |= nonzero
		n += started & (nonzero | zero)
		zeros = (zeros + zero&started) & (nonzero - 1) // a nonzero digit clears them
	}
	return exp == 0 && n-zeros <= 6
}

// digitKind classifies a number's bytes for fewDigits: 1 for the digits 1-9, 2 for 0, 4 for
// an exponent's e or E, 0 for the rest.
var digitKind = func() (t [256]uint8) {
	for c := '1'; c <= '9'; c++ {
		t[c] = 1
	}
	t['0'], t['e'], t['E'] = 2, 4, 4
	return t
}()
