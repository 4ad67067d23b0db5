package fastfloat

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// grammar is CNTK's number syntax, anchored at the start; the longest match is the token.
// A '.' without fraction digits ends the number: "1.e5" is the number "1." and then "e5".
var grammar = regexp.MustCompile(`^[+-]?[0-9]+(\.([0-9]+([eE][+-]?[0-9]+)?)?|[eE][+-]?[0-9]+)?`)

// check compares Scan with the reference: the regexp for the token's extent and
// strconv.ParseFloat for its value, bit for bit.
func check(t *testing.T, s string) {
	t.Helper()
	// With bytes after the input, the eight-byte digit path runs too; the result must agree.
	for _, pad := range []string{" |x 12345678", "0123456789abcdef"[:len(s)%9], ""} {
		ps := s + pad
		v1, n1, st1 := Scan([]byte(ps))
		v2, n2, st2 := Scan([]byte(s))
		if n2 < len(s) && (n1 != n2 || st1 != st2 || math.Float64bits(v1) != math.Float64bits(v2)) && !(pad != "" && pad[0] >= '0' && pad[0] <= '9') {
			t.Fatalf("Scan(%q) = %v, %d, %v but Scan(%q) = %v, %d, %v", ps, v1, n1, st1, s, v2, n2, st2)
		}
		if pad != "" && pad[0] == ' ' {
			checkOne(t, ps)
		}
	}
	checkOne(t, s)
}

func checkOne(t *testing.T, s string) {
	t.Helper()
	v, n, st := Scan([]byte(s))
	tok := grammar.FindString(s)
	if tok == "" || st != OK {
		// No number, or a broken exponent: the reference grammar may still match a prefix
		// ("1e" matches "1"), but CNTK rejects the whole number then.
		if st == OK {
			t.Fatalf("Scan(%q) = OK, grammar finds no number", s)
		}
		if tok != "" {
			rest := s[len(tok):]
			if len(tok) > 0 && len(rest) > 0 && (rest[0] == 'e' || rest[0] == 'E') && tok[len(tok)-1] != '.' {
				return // "1e", "1e+", "1ex": rejected by CNTK, as Scan does
			}
			t.Fatalf("Scan(%q) = %v at %d, grammar accepts %q", s, st, n, tok)
		}
		return
	}
	if n != len(tok) {
		t.Fatalf("Scan(%q) consumed %d bytes, want %d (%q)", s, n, len(tok), tok)
	}
	want, err := strconv.ParseFloat(tok, 64)
	if err != nil && !isRange(err) {
		t.Fatalf("ParseFloat(%q): %v", tok, err)
	}
	if math.Float64bits(v) != math.Float64bits(want) {
		t.Fatalf("Scan(%q) = %v (%#x), strconv gives %v (%#x)", s, v, math.Float64bits(v), want, math.Float64bits(want))
	}
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

var cases = []string{
	"5", "+5", "-5", "05", "5.", "5.25", "1e5", "1E+05", "-1.5e-3", "6.4265e+020", "-1.15459e-009",
	"0", "-0", "+0.0", "0.1", "0.3", "123456789012345678", "12345678901234567890123",
	"9007199254740993", "9007199254740992", "1e22", "1e23", "1e-22", "1e-23", "4.9e-324", "2e-324",
	"1.7976931348623157e308", "1.8e308", "1e999999999999", "1e-999999999999",
	"0.000000000000000000000000000001", "00000000000000000000000000001.5",
	"3.14159265358979323846264338327950288", "1.e5", ".5", "-.5", "inf", "nan", "2,0", "2:0", "2#0",
	"2.0f", "1e", "1e+", "+", "-", "e5", "1ex", "1e+x", "1.5 ", "7|", "-0.0e-0",
	"0.2500000000000000000000000000000000001", "179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
}

func TestScan(t *testing.T) {
	for _, s := range cases {
		check(t, s)
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		s  string
		n  int
		st Status
	}{
		{"x", 0, BadStart}, {".5", 0, BadStart}, {"-x", 1, BadAfterSign}, {"-", 1, BadEnd},
		{"1ex", 2, BadAfterE}, {"1e+x", 3, BadAfterExpSign}, {"1e", 2, BadEnd}, {"1e-", 3, BadEnd},
		{"1.e5", 2, OK}, {"12 ", 2, OK}, {"12", 2, OK}, {"2:0", 1, OK},
	} {
		_, n, st := Scan([]byte(tc.s))
		if n != tc.n || st != tc.st {
			t.Errorf("Scan(%q) = %d, %v; want %d, %v", tc.s, n, st, tc.n, tc.st)
		}
	}
}

func TestParse(t *testing.T) {
	if v, ok := Parse([]byte("2.5")); !ok || v != 2.5 {
		t.Fatalf("Parse(2.5) = %v, %v", v, ok)
	}
	if _, ok := Parse([]byte("2.5x")); ok {
		t.Fatal("Parse(2.5x) accepted")
	}
}

// FuzzScan proves the fast path bit-identical to strconv.ParseFloat on every token it accepts,
// and its token extent equal to CNTK's grammar.
func FuzzScan(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, s)
	})
}

// FuzzDigits builds numbers from random mantissas and exponents, which random strings rarely
// reach, and checks them against strconv.
func FuzzDigits(f *testing.F) {
	f.Add(uint64(123456), int8(-3), uint8(2), false)
	f.Add(uint64(9007199254740993), int8(5), uint8(0), true)
	f.Add(uint64(1<<63), int8(-30), uint8(19), false)
	f.Fuzz(func(t *testing.T, mant uint64, exp int8, frac uint8, neg bool) {
		s := strconv.FormatUint(mant, 10)
		if k := int(frac % 25); k > 0 && k < len(s) {
			s = s[:len(s)-k] + "." + s[len(s)-k:]
		}
		if neg {
			s = "-" + s
		}
		s += "e" + strconv.Itoa(int(exp))
		check(t, s)
	})
}

// TestRandom checks 200000 random decimals of every length and exponent in and around the fast
// paths against strconv, bit for bit.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := 0; i < n; i++ {
		digits := 1 + rng.IntN(21)
		b := make([]byte, 0, 32)
		if rng.IntN(2) == 0 {
			b = append(b, '-')
		}
		for k := 0; k < digits; k++ {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if f := rng.IntN(digits + 1); f < digits && rng.IntN(3) > 0 {
			b = append(b[:len(b)-f], append([]byte{'.'}, b[len(b)-f:]...)...)
		}
		if rng.IntN(2) == 0 {
			b = append(b, 'e')
			b = strconv.AppendInt(b, int64(rng.IntN(90)-45), 10)
		}
		check(t, string(b))
	}
}

// TestDigits8 checks Digits8 against a byte loop for every digit count, every byte that can
// end the digits and random bytes after it (bytes from 0xFA carry out of the digit test).
func TestDigits8(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for n := 0; n <= 8; n++ {
		for end := 0; end < 256; end++ {
			if n < 8 && end >= '0' && end <= '9' {
				continue
			}
			b := make([]byte, 8)
			var want uint64
			for k := range b {
				switch {
				case k < n:
					b[k] = byte('0' + rng.IntN(10))
					want = want*10 + uint64(b[k]-'0')
				case k == n:
					b[k] = byte(end)
				default:
					b[k] = byte(rng.IntN(256))
				}
			}
			if v, m := Digits8(b); m != n || v != want {
				t.Fatalf("Digits8(%q) = %d, %d; want %d, %d", b, v, m, want, n)
			}
		}
	}
}

// shortForm is the form Token must accept: a sign, then at most eight bytes of digits with at
// most one '.' after the first digit, or up to sixteen with the '.' among the first eight.
var shortForm = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]*)?$`)

// checkToken compares Token on tok, followed by end and then by the bytes of junk, with
// ScanShort on the same bytes (which strconv backs, see check): the same value to the bit, the
// same short flag and the token's whole extent; and that Token accepts every short-form token.
func checkToken(t *testing.T, tok string, end byte, junk string) {
	t.Helper()
	b := append(append([]byte(tok), end), junk...)
	for len(b) < 9 {
		b = append(b, junk...)
		if junk == "" {
			b = append(b, end)
		}
	}
	v, short, ok := Token(b, 0, len(tok))
	body := strings.TrimLeft(tok, "+-")
	dot := strings.IndexByte(body, '.')
	want := shortForm.MatchString(tok) && len(tok)-len(body) <= 1 &&
		(len(body) <= 8 || len(body) <= 16 && dot >= 1 && dot < 8 && len(b) >= len(tok)-len(body)+16)
	if ok != want {
		t.Fatalf("Token(%q) ok = %v, want %v", b, ok, want)
	}
	if !ok {
		return
	}
	v2, n2, st2, short2 := ScanShort(b)
	if st2 != OK || n2 != len(tok) || math.Float64bits(v) != math.Float64bits(v2) || short != short2 {
		t.Fatalf("Token(%q, 0, %d) = %v (%#x), %v; ScanShort = %v (%#x), %d, %v, %v", b, len(tok), v, math.Float64bits(v), short, v2, math.Float64bits(v2), n2, st2, short2)
	}
	checkOne(t, tok)
}

// tokenEnds are bytes that cannot continue a number.
const tokenEnds = " \t\n\r|:x,\x00\xff"

func TestToken(t *testing.T) {
	for _, s := range append(cases, "1", "-1", "+1", "12345678", "-12345678", "123456789", "1.", "-1.",
		"0.00160272", "-0.00160272", "1234567.12345678", "12345678.1234567", "1.234567890123456", "1.2345678901234567",
		"0.788744", "-0.788744", "0.0758944", "1.234567", "9.9999999", "99999999", "00000000", "-0.00000",
		"1..2", "1.2.3", ".1", "-", "+-1", "--1", "1-2", "1e5", "1.5e", "1 2", "") {
		for _, end := range []byte(tokenEnds) {
			checkToken(t, s, end, "")
			checkToken(t, s, end, "9.99e99\xfa\xff")
		}
	}
	// Every short form over a few digits.
	rng := rand.New(rand.NewPCG(3, 9))
	for i := 0; i < 100000; i++ {
		n := 1 + rng.IntN(17)
		b := make([]byte, 0, 12)
		switch rng.IntN(3) {
		case 0:
			b = append(b, '-')
		case 1:
			b = append(b, '+')
		}
		for k := 0; k < n; k++ {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if d := rng.IntN(n + 1); d > 0 {
			b = append(b[:len(b)-n+d], append([]byte{'.'}, b[len(b)-n+d:]...)...)
		}
		checkToken(t, string(b), tokenEnds[rng.IntN(len(tokenEnds))], string([]byte{byte(rng.IntN(256)), byte(rng.IntN(256))}))
	}
	// Bounds: too little room after s.
	if _, _, ok := Token([]byte("1 345678"), 0, 1); ok {
		t.Fatal("Token accepted a buffer of fewer than nine bytes")
	}
}

// FuzzToken checks Token against ScanShort (and that against strconv) on any token, any end
// byte and any bytes after it.
func FuzzToken(f *testing.F) {
	for _, s := range cases {
		f.Add(s, byte(' '), "")
	}
	f.Add("-0.788744", byte('|'), "\xff\xfa")
	f.Fuzz(func(t *testing.T, tok string, end byte, junk string) {
		if strings.IndexByte("0123456789.eE", end) >= 0 {
			end = ' '
		}
		checkToken(t, tok, end, junk)
	})
}

func TestSpaces(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 10000; i++ {
		b := make([]byte, 64+rng.IntN(8))
		for k := range b {
			switch rng.IntN(4) {
			case 0:
				b[k] = ' '
			case 1:
				b[k] = byte(rng.IntN(256))
			default:
				b[k] = " !\x1f\xa0\x20\x00"[rng.IntN(6)]
			}
		}
		var want uint64
		for k := 0; k < 64; k++ {
			if b[k] == ' ' {
				want |= 1 << k
			}
		}
		if got := Spaces(b); got != want {
			t.Fatalf("Spaces(%q) = %#x, want %#x", b, got, want)
		}
	}
}
