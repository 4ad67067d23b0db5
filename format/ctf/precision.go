package ctf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

// This file decides what happens to a CTF decimal value that float32 does not hold as its text
// states it. By default (no precision option, ReaderOptions.Precision Invalid) streams are
// float32, as in CNTK: such a value is rounded to the nearest float32, counted per stream, and
// the Reader reports one warning per stream (how many, and the first at its line and column)
// to ReaderOptions.Log; Validate reports the same as a format.Warning. What rounding would
// lose is an error in every float32 mode: a finite value beyond float32's range (it would read
// as ±Inf) and a nonzero value below it (it would read as 0). precision=exact
// (ReaderOptions.Exact) refuses rounding too; precision=float rounds without a word.

var (
	// ErrPrecision is wrapped by every error for a value that reading would change: ErrRounded
	// and ErrOutOfRange wrap it, as does mlfeed.ErrRange.
	ErrPrecision = errors.New("ctf: a value the element type would change")
	// ErrRounded is wrapped by the error for a value float32 holds only rounded, with
	// precision=exact (ReaderOptions.Exact), and by Validate's rounding warnings.
	ErrRounded = errors.New("ctf: precision: value rounded")
	// ErrOutOfRange is wrapped by the error for a value outside float32's range (or, at any
	// precision, a nonzero value below float64's), which would read as ±Inf or 0.
	ErrOutOfRange = errors.New("ctf: range: value out of range")
)

// valueError is a value reading would change: its text says what happened, and it wraps kind,
// ErrPrecision and mlfeed.ErrRange.
type valueError struct {
	msg  string
	kind error
}

func (e *valueError) Error() string   { return e.msg }
func (e *valueError) Unwrap() []error { return []error{e.kind, ErrPrecision, mlfeed.ErrRange} }

// precMode is how a Reader treats values float32 does not hold as written.
type precMode uint8

const (
	precRound  precMode = iota // default: round to float32, count, warn once per stream
	precExact                  // precision=exact: refuse rounding
	precFloat                  // precision=float: round without a word
	precDouble                 // precision=double: read float64
)

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
	// If tok fits, it is f rounded to nd digits, within half a unit of its nd-th digit of f,
	// which is less than |v|*10^(1-nd)/2: a v farther from f does not fit. This decides
	// most values of many digits (Python's 17-digit floats) without printing f.
	if math.Abs(v-float64(f)) > math.Abs(v)*digitUnit[nd] {
		return false
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], float64(f), 'e', nd-1, 32)
	w, ok := fastfloat.Parse(s)
	return ok && w == v
}

// digitUnit[n] is 10^(1-n): the unit of the n-th significant digit of a number in [1, 10).
var digitUnit = func() (t [18]float64) {
	for n := range t {
		t[n] = math.Pow(10, float64(1-n))
	}
	return t
}()

// sigDigits counts the significant digits of a CTF number: the mantissa's digits without
// leading and trailing zeros (at least 1). It takes no branch per byte (see fewDigits): it
// runs for every value float32 does not hold exactly.
func sigDigits(tok []byte) int {
	var n, zeros, started, exp uint
	for _, c := range tok {
		k := uint(digitKind[c])
		exp |= k >> 2
		live := 1 - exp // 0 from the exponent letter on
		nonzero, zero := k&1&live, k>>1&1&live
		started |= nonzero
		n += started & (nonzero | zero)
		zeros = (zeros + zero&started) & (nonzero - 1) // a nonzero digit clears them
	}
	return max(int(n-zeros), 1)
}

// checkValue is called for a value that T does not hold exactly (or that reads as 0), tok its
// text at offset off: a value reading would lose is an error; a value float32 rounds is counted
// (precRound), refused (precExact) or let through (precFloat).
func (p *parser[T]) checkValue(tok []byte, v float64, off int) {
	if v == 0 {
		if !nonzeroDigit(tok) {
			return // a zero
		}
		p.lost(off, fmt.Sprintf("ctf: range: %s is below float64's range and would read as 0", tok), ErrOutOfRange)
		return
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		return
	}
	f := float32(v)
	switch {
	case math.IsInf(float64(f), 0):
		if math.IsInf(v, 0) {
			return // the spelling of infinity the Writer uses, 1e999
		}
		p.lost(off, fmt.Sprintf("ctf: range: %s is beyond float32's range (largest %s) and would read as %v; read at double precision (option precision=double)", tok, fmt32(math.MaxFloat32), f), ErrOutOfRange)
	case f == 0:
		p.lost(off, fmt.Sprintf("ctf: range: %s is below float32's range (smallest %s) and would read as 0; read at double precision (option precision=double)", tok, fmt32(math.SmallestNonzeroFloat32)), ErrOutOfRange)
	case p.sp.prec == precFloat || fits32(tok, v):
	case p.sp.prec == precExact:
		p.lost(off, fmt.Sprintf("ctf: precision: %s would be rounded to %s in float32 (option precision=exact); read at double precision (option precision=double)", tok, fmt32(f)), ErrRounded)
	default:
		p.round(tok, off)
	}
}

// fmt32 is the shortest text that reads back as f.
func fmt32(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

// lost reports a value that reading would change, at offset off: with Validate an error passed
// on, else the error that ends the parse (a quiet piece gives up, for the chunk's sequential
// parse to name the place).
func (p *parser[T]) lost(off int, msg string, kind error) {
	if p.quiet {
		panic(abort{errSequential})
	}
	line, col := p.lineCol(int64(off))
	err := mlfeed.LineError(p.sp.path, line, col, &valueError{msg: msg, kind: kind})
	if p.strict != nil {
		if !p.strict(err) {
			panic(abort{nil})
		}
		return
	}
	panic(abort{err})
}

// roundStat counts the values of one stream that float32 rounded, with the first one.
type roundStat struct {
	n   int64  // values rounded
	off int64  // the first one's offset
	tok string // and its text
	// line and col are the first one's place, set when the Reader takes the counts in.
	line, col int
}

// round counts a value of the current stream that float32 rounds.
func (p *parser[T]) round(tok []byte, off int) {
	if p.rounded == nil {
		p.rounded = make([]roundStat, len(p.acc))
	}
	s := &p.rounded[p.cur]
	if s.n == 0 {
		s.off, s.tok = int64(off), string(tok)
	}
	s.n++
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
