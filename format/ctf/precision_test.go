package ctf

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

func TestFits32(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		want bool
	}{
		{"0.1", true}, {"-0.5", true}, {"1", true}, {"123456", true}, {"0.00834684", true},
		{"-7.50127e-006", true}, {"1.5e+07", true}, {"3.4028235e38", true},
		{"16777216", true}, {"16777217", false}, {"0.1234567", true},
		{"8.589973e9", false}, {"0.123456789", false}, {"0.1000000001", false},
		{"0.30000001192092896", true}, {"1e-300", false}, {"1e-50", false},
		{"1e39", false}, {"1e999", true}, {"-1e999", true}, {"1e-40", true},
		{"0.10000000000000000000001", false}, {"1.00000000000000000001", true},
		{"0.30000001192092895507", true},
	} {
		v, err := strconv.ParseFloat(tc.tok, 64)
		if err != nil && !strings.Contains(tc.tok, "999") {
			t.Fatal(err)
		}
		if got := fits32([]byte(tc.tok), v); got != tc.want {
			t.Errorf("fits32(%s) = %v, want %v", tc.tok, got, tc.want)
		}
		if _, _, _, short := fastfloat.ScanShort([]byte(tc.tok + " ")); short && !tc.want {
			t.Errorf("ScanShort(%s) says short, but it does not fit float32", tc.tok)
		}
		line := []byte("|x 3:" + tc.tok + "\n")
		if _, got := inferScan(line, 0, int64(len(line)), true); got == tc.want {
			t.Errorf("the inference scan of 3:%s says it needs float64: %v, want %v", tc.tok, got, !tc.want)
		}
	}
}

// TestFewDigits checks fewDigits against its definition (no exponent, at most six significant
// digits by sigDigits) on every token of up to five bytes over digits, signs, points and
// exponent marks, and on random longer ones.
func TestFewDigits(t *testing.T) {
	const alphabet = "0123456789.-+eE"
	check := func(tok []byte) {
		want := !bytes.ContainsAny(tok, "eE") && sigDigits(tok) <= 6
		if got := fewDigits(tok); got != want {
			t.Fatalf("fewDigits(%q) = %v, want %v", tok, got, want)
		}
	}
	var gen func(tok []byte, n int)
	gen = func(tok []byte, n int) {
		check(tok)
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			gen(append(tok, alphabet[i]), n-1)
		}
	}
	gen(nil, 5)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		tok := make([]byte, 6+rng.IntN(12))
		for i := range tok {
			if rng.IntN(8) == 0 {
				tok[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				tok[i] = "00000123456789"[rng.IntN(14)]
			}
		}
		check(tok)
	}
}

// TestFits32Exhaustive checks fits32 against its definition on the shortest and longer
// spellings of float32 values and their neighbours: the text fits when the float32 it rounds
// to, printed with as many significant digits, is the same decimal.
// fits32Def is fits32's definition, computed the slow way.
func fits32Def(tok string, v float64) bool {
	nd := sigDigits([]byte(tok))
	g := float32(v)
	if float64(g) == v {
		return true
	}
	if nd > 17 || math.IsInf(float64(g), 0) || g == 0 {
		return false
	}
	back, _ := strconv.ParseFloat(strconv.FormatFloat(float64(g), 'e', nd-1, 32), 64)
	return back == v
}

// FuzzFits32 checks fits32 and ScanShort against the definition on arbitrary numbers.
func FuzzFits32(f *testing.F) {
	for _, s := range []string{"0.1", "16777217", "1e-300", "0.30000001192092896", "-7.50127e-006", "1e999", "123456", "0.1234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		v, ok := fastfloat.Parse([]byte(tok))
		if !ok {
			return
		}
		want := fits32Def(tok, v)
		if got := fits32([]byte(tok), v); got != want {
			t.Fatalf("fits32(%s) = %v, want %v", tok, got, want)
		}
		if _, _, _, short := fastfloat.ScanShort([]byte(tok + " ")); short && !want {
			t.Fatalf("ScanShort(%s) says short, but it does not fit float32", tok)
		}
	})
}

func TestFits32Exhaustive(t *testing.T) {
	for i := 0; i < 20000; i++ {
		f := math.Float32frombits(uint32(i) * 214749)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		for _, tok := range []string{
			strconv.FormatFloat(float64(f), 'g', -1, 32),
			strconv.FormatFloat(float64(f), 'g', -1, 64),
			strconv.FormatFloat(float64(f), 'e', 8, 64),
			strconv.FormatFloat(float64(f)*(1+1e-9), 'e', 10, 64),
		} {
			v, _ := strconv.ParseFloat(tok, 64)
			nd := sigDigits([]byte(tok))
			g := float32(v)
			want := false
			if nd <= 17 && !math.IsInf(float64(g), 0) && (g != 0 || v == 0) {
				back, _ := strconv.ParseFloat(strconv.FormatFloat(float64(g), 'e', nd-1, 32), 64)
				want = back == v
			}
			if float64(g) == v {
				want = true
			}
			if got := fits32([]byte(tok), v); got != want {
				t.Fatalf("fits32(%s) = %v, want %v", tok, got, want)
			}
			if _, _, _, short := fastfloat.ScanShort([]byte(tok + " ")); short && !want {
				t.Fatalf("ScanShort(%s) says short, but it does not fit float32", tok)
			}
		}
	}
}

func TestPrecision(t *testing.T) {
	text := "|x 0.1 2.5\n|x 0.123456789 1\n"
	decl := []mlfeed.Stream{dense("x", 2)}
	// Declared streams, precision unset: the value float32 cannot hold is an error naming
	// its place and the option.
	_, _, err := readAll(t, text, &ReaderOptions{Inputs: decl})
	if !errors.Is(err, ErrPrecision) || !errors.Is(err, mlfeed.ErrRange) {
		t.Fatalf("err = %v, want ErrPrecision", err)
	}
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != 4 || !strings.Contains(err.Error(), "precision=double") {
		t.Fatalf("err = %v, want line 2 column 4 and the option", err)
	}
	// Chosen float32: rounded, as CNTK does.
	r, chunks, err := readAll(t, text, &ReaderOptions{Inputs: decl, Precision: mlfeed.Float32})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); !strings.Contains(got, ftoa(float64(float32(0.123456789)))) {
		t.Fatalf("float32 read %s", got)
	}
	// Double: every value as stated.
	r, chunks, err = readAll(t, text, &ReaderOptions{Inputs: decl, Precision: mlfeed.Float64})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); !strings.Contains(got, "0.123456789") || r.Schema().Streams[0].Type != mlfeed.Float64 {
		t.Fatalf("float64 read %s", got)
	}
	// Inferred streams, precision unset: the scan infers float64 too.
	r, chunks, err = readAll(t, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema().Streams[0].Type != mlfeed.Float64 || !strings.Contains(flat(r, chunks), "0.123456789") {
		t.Fatalf("inferred %v: %s", r.Schema().Streams[0].Type, flat(r, chunks))
	}
	if d := r.Details()["precision"]; !strings.Contains(d.(string), "inferred") {
		t.Fatalf("details precision %v", d)
	}
	// Short values stay float32.
	r, _, err = readAll(t, "|x 0.1 2.5 |y 3:1.25\n", nil)
	if err != nil || r.Schema().Streams[0].Type != mlfeed.Float32 {
		t.Fatalf("short values: %v, %v", err, r.Schema())
	}
	// Sparse values and values the slow path reads are checked too.
	for _, text := range []string{"|y 3:1e-50\n", "|y 1234567890:1e-50\n", "|x 1 1e40"} {
		_, _, err = readAll(t, text, &ReaderOptions{Inputs: []mlfeed.Stream{dense("x", 2), sparse("y", 1<<31-1)}})
		if !errors.Is(err, ErrPrecision) {
			t.Errorf("%q: err = %v, want ErrPrecision", text, err)
		}
	}
}

func TestValidatePrecisionWarning(t *testing.T) {
	name := writeTemp(t, "p.ctf", "|x 0.1 2.5\n|x 1e-300 1\n")
	var problems []error
	err := Validate(name, &ReaderOptions{Inputs: []mlfeed.Stream{dense("x", 2)}, Precision: mlfeed.Float32}, func(e error) bool {
		problems = append(problems, e)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !format.IsWarning(problems[0]) || !errors.Is(problems[0], ErrPrecision) ||
		!strings.Contains(problems[0].Error(), ":2:4:") {
		t.Fatalf("problems %v, want one warning at 2:4", problems)
	}
}

func TestRegistryType(t *testing.T) {
	o, err := fromFormat(&format.Options{Type: mlfeed.Float64})
	if err != nil || o.Precision != mlfeed.Float64 {
		t.Fatalf("Type float64: %v, %v", o, err)
	}
	o, err = fromFormat(&format.Options{Type: mlfeed.Float64, Params: map[string]string{"precision": "float"}})
	if err != nil || o.Precision != mlfeed.Float32 {
		t.Fatalf("Type float64 with precision=float: %v, %v", o, err)
	}
}

// TestUnderflow: a nonzero value below float64's range is an error unless the precision is
// chosen; zeros in any spelling are not.
func TestUnderflow(t *testing.T) {
	for _, text := range []string{"|x 1e-400 1\n", "|x 1 -2.5e-999\n", "|y 3:1e-400\n"} {
		_, _, err := readAll(t, text, nil)
		if !errors.Is(err, ErrPrecision) || !strings.Contains(err.Error(), "below float64's range") {
			t.Errorf("%q: err = %v, want ErrPrecision", text, err)
		}
		if _, _, err := readAll(t, text, &ReaderOptions{Precision: mlfeed.Float64}); err != nil {
			t.Errorf("%q with precision=double: %v", text, err)
		}
	}
	for _, text := range []string{"|x 0 -0\n", "|x 0.000 0e5\n", "|x 0.0000000000 -0.0e-400\n", "|y 3:0.00000000\n"} {
		if _, _, err := readAll(t, text, nil); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// TestRegistrySequential: a caller that reads the chunks once, in order, gets
// SequentialChunkSize unless it states a chunk size.
func TestRegistrySequential(t *testing.T) {
	for _, c := range []struct {
		fo   format.Options
		want int64
	}{
		{format.Options{}, 0},
		{format.Options{Sequential: true}, SequentialChunkSize},
		{format.Options{Sequential: true, Params: map[string]string{"chunk_size": "100"}}, 100},
		{format.Options{Sequential: true, Params: map[string]string{"chunkSizeInBytes": "33554432"}}, DefaultChunkSize},
	} {
		o, err := fromFormat(&c.fo)
		if err != nil || o.ChunkSize != c.want || o.Sequential != c.fo.Sequential {
			t.Errorf("%+v: chunk size %d (%v), want %d", c.fo, o.ChunkSize, err, c.want)
		}
	}
}
