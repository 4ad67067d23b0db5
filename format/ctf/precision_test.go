package ctf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
	"github.com/mlfeed/mlfeed/internal/sched"
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

// sigDigitsRef is sigDigits written plainly.
func sigDigitsRef(tok []byte) int {
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

// TestFewDigits checks fewDigits against its definition (no exponent, at most six significant
// digits by sigDigits) on every token of up to five bytes over digits, signs, points and
// exponent marks, and on random longer ones.
func TestFewDigits(t *testing.T) {
	const alphabet = "0123456789.-+eE"
	check := func(tok []byte) {
		want := !bytes.ContainsAny(tok, "eE") && sigDigitsRef(tok) <= 6
		if got := fewDigits(tok); got != want {
			t.Fatalf("fewDigits(%q) = %v, want %v", tok, got, want)
		}
		if got, want := sigDigits(tok), sigDigitsRef(tok); got != want {
			t.Fatalf("sigDigits(%q) = %d, want %d", tok, got, want)
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
	// Declared streams, precision unset: float32 as in CNTK, the value rounded, and one
	// warning for the stream in the log when the reader is closed.
	var log bytes.Buffer
	r, chunks, err := readAll(t, text, &ReaderOptions{Inputs: decl, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); !strings.Contains(got, ftoa(float64(float32(0.123456789)))) || r.Schema().Streams[0].Type != mlfeed.Float32 {
		t.Fatalf("default read %s", got)
	}
	r.Close()
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "WARNING: ") || !strings.Contains(got, "data.ctf:2:4: ctf: precision: 1 value of input \"x\" rounded to float32") ||
		!strings.Contains(got, "0.123456789 reads as 0.12345679") || !strings.Contains(got, "--opt precision=double") {
		t.Fatalf("log %q", got)
	}
	// precision=exact: the value is an error at its place saying it would be rounded.
	_, _, err = readAll(t, text, &ReaderOptions{Inputs: decl, Exact: true})
	if !errors.Is(err, ErrRounded) || !errors.Is(err, ErrPrecision) || !errors.Is(err, mlfeed.ErrRange) {
		t.Fatalf("err = %v, want ErrRounded", err)
	}
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != 4 || !strings.Contains(err.Error(), "precision=double") ||
		!strings.Contains(err.Error(), "ctf: precision: 0.123456789 would be rounded to 0.12345679") || strings.Contains(err.Error(), "out of range") {
		t.Fatalf("err = %v, want line 2 column 4, what happened and the option", err)
	}
	// Chosen float32: rounded without a word.
	log.Reset()
	r, chunks, err = readAll(t, text, &ReaderOptions{Inputs: decl, Precision: mlfeed.Float32, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); !strings.Contains(got, ftoa(float64(float32(0.123456789)))) {
		t.Fatalf("float32 read %s", got)
	}
	if r.Close(); log.Len() != 0 || r.Rounded() != nil {
		t.Fatalf("precision=float logged %q", log.String())
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
}

// TestPrecisionRange: what float32 would lose (a finite value that becomes ±Inf, a nonzero one
// that becomes 0) is an error in every float32 mode, saying so; sparse values and values the
// slow path reads are checked too.
func TestPrecisionRange(t *testing.T) {
	in := []mlfeed.Stream{dense("x", 2), sparse("y", 1<<31-1)}
	for _, tc := range []struct{ text, what string }{
		{"|x 1 2 |y 3:1e-50\n", "1e-50 is below float32's range (smallest 1e-45) and would read as 0"},
		{"|x 1 2 |y 1234567890:1e-50\n", "below float32's range"},
		{"|y 1:1 |x 1 1e40", "1e40 is beyond float32's range (largest 3.4028235e+38) and would read as +Inf"},
		{"|x 1 -3.5e38 |y 0:0\n", "would read as -Inf"},
	} {
		for _, o := range []ReaderOptions{{Inputs: in}, {Inputs: in, Exact: true}, {Inputs: in, Precision: mlfeed.Float32}} {
			_, _, err := readAll(t, tc.text, &o)
			if !errors.Is(err, ErrOutOfRange) || !errors.Is(err, ErrPrecision) || !strings.Contains(err.Error(), "ctf: range: ") || !strings.Contains(err.Error(), tc.what) {
				t.Errorf("%q (exact %v, precision %v): err = %v, want %q", tc.text, o.Exact, o.Precision, err, tc.what)
			}
		}
		o := ReaderOptions{Inputs: in, Precision: mlfeed.Float64}
		if _, _, err := readAll(t, tc.text, &o); err != nil {
			t.Errorf("%q at double precision: %v", tc.text, err)
		}
	}
	// The writer's spelling of infinity reads as infinity in every mode.
	for _, o := range []ReaderOptions{{Inputs: in}, {Inputs: in, Exact: true}, {Inputs: in, Precision: mlfeed.Float32}} {
		if _, _, err := readAll(t, "|x 1e999 -1e999 |y 2:-1e999\n", &o); err != nil {
			t.Errorf("1e999: %v", err)
		}
	}
}

// pythonFloats returns n lines of dense values of dim and sparse values as Python writes
// floats (repr: the shortest text that reads back, up to 17 significant digits), with the
// values and how many of them float32 rounds.
func pythonFloats(n, dim int, seed uint64) (text string, vals []float64, rounded int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for range n {
		b.WriteString("|x")
		for range dim {
			v := rng.NormFloat64()
			tok := strconv.FormatFloat(v, 'g', -1, 64) // Python's repr(v) spells the same digits
			vals = append(vals, v)
			if !fits32([]byte(tok), v) {
				rounded++
			}
			b.WriteString(" " + tok)
		}
		b.WriteString(" |y 3:0.07670275135766862\n")
	}
	return b.String(), vals, rounded
}

// TestPythonFloats: a file of values as Python writes them (17 significant digits) reads with
// declared streams as CNTK reads it, at float32, with one warning per stream naming the count
// and the first value's place, the same whether the chunks are parsed whole or in pieces and
// however often they are read.
func TestPythonFloats(t *testing.T) {
	text, vals, rounded := pythonFloats(20000, 8, 7)
	if rounded < len(vals)/2 {
		t.Fatalf("only %d of %d values need rounding", rounded, len(vals))
	}
	in := []mlfeed.Stream{dense("x", 8), sparse("y", 5)}
	for _, threads := range []int{1, 4} {
		var log bytes.Buffer
		ctx := sched.WithContext(context.Background(), sched.New(threads, 0))
		r, err := Open(writeTemp(t, "py.ctf", text), &ReaderOptions{Inputs: in, Log: &log, ChunkSize: 2 << 20, Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for epoch := 0; epoch < 2; epoch++ {
			k = 0
			err = r.ReadChunks(ctx, func(_ int, c *mlfeed.Chunk) error {
				for _, v := range c.Streams[0].Values.Float32s() {
					if v != float32(vals[k]) {
						t.Fatalf("value %d: %v, want float32(%v)", k, v, vals[k])
					}
					k++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if k != len(vals) {
			t.Fatalf("%d values, want %d", k, len(vals))
		}
		// Every chunk read: the counts are final and already logged, once.
		if got := log.String(); strings.Count(got, "WARNING: ") != 2 {
			t.Errorf("%d threads: before Close, log %q", threads, got)
		}
		ws := r.Rounded()
		r.Close()
		if len(ws) != 2 {
			t.Fatalf("%d threads: warnings %v", threads, ws)
		}
		want := fmt.Sprintf("py.ctf:1:4: ctf: precision: %d values of input \"x\" rounded to float32", rounded)
		if !strings.Contains(ws[0].Error(), want) || !format.IsWarning(ws[0]) || !errors.Is(ws[0], ErrRounded) {
			t.Errorf("%d threads: %v, want %q", threads, ws[0], want)
		}
		if !strings.Contains(ws[1].Error(), ":1:") || !strings.Contains(ws[1].Error(), "20000 values of input \"y\"") {
			t.Errorf("%d threads: %v", threads, ws[1])
		}
		if got := log.String(); strings.Count(got, "WARNING: ") != 2 || !strings.Contains(got, want) {
			t.Errorf("%d threads: log %q", threads, got)
		}
	}
	// Pieces of a chunk count the values they round rather than give up.
	r2, err := newReader("py.ctf", []byte(text), nil, &ReaderOptions{Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	pts := r2.splits(0, 4)
	if len(pts) < 4 {
		t.Fatalf("splits %v", pts)
	}
	for k := 0; k+1 < len(pts); k++ {
		first := int64(bytes.Count(r2.data[:pts[k]], []byte{'\n'}))
		if pc := parsePiece[float32](r2, 0, pts[k], pts[k+1], first); pc.err != nil || pc.p.rounded == nil || pc.p.rounded[0].n == 0 {
			t.Fatalf("piece %d: %v", k, pc.err)
		}
	}
	// precision=exact refuses the first, at its place.
	_, _, err = readAll(t, text, &ReaderOptions{Inputs: in, Exact: true})
	var pe *mlfeed.PosError
	if !errors.Is(err, ErrRounded) || !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("exact: %v", err)
	}
	// Inferred, they are float64, every value as written.
	r, chunks, err := readAll(t, text, nil)
	if err != nil || r.Schema().Streams[0].Type != mlfeed.Float64 {
		t.Fatalf("inferred: %v %v", err, r.Schema())
	}
	if got := chunks[0].Streams[0].Values.Float64s()[:3]; got[0] != vals[0] || got[2] != vals[2] {
		t.Fatalf("inferred values %v, want %v", got, vals[:3])
	}
}

func TestValidatePrecisionWarning(t *testing.T) {
	name := writeTemp(t, "p.ctf", "|x 0.1 2.5\n|x 0.123456789 1\n|x 0.987654321 1\n|x 1e-300 1\n")
	for _, tc := range []struct {
		o    ReaderOptions
		want []string
	}{
		{ReaderOptions{}, []string{"p.ctf:4:4: ctf: range: 1e-300 is below float32's range", "warning: " + name + ":2:4: ctf: precision: 2 values of input \"x\" rounded"}},
		{ReaderOptions{Exact: true}, []string{":2:4: ctf: precision: 0.123456789 would be rounded", ":3:4: ctf: precision:", ":4:4: ctf: range:"}},
		{ReaderOptions{Precision: mlfeed.Float32}, []string{":4:4: ctf: range:"}},
		{ReaderOptions{Precision: mlfeed.Float64}, nil},
	} {
		var problems []string
		o := tc.o
		o.Inputs = []mlfeed.Stream{dense("x", 2)}
		err := Validate(name, &o, func(e error) bool {
			if format.IsWarning(e) != strings.HasPrefix(e.Error(), "warning: ") || format.IsWarning(e) && !errors.Is(e, ErrRounded) {
				t.Errorf("%v: not a warning of ErrRounded", e)
			}
			problems = append(problems, e.Error())
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != len(tc.want) {
			t.Fatalf("%+v: problems %q, want %q", tc.o, problems, tc.want)
		}
		for k, w := range tc.want {
			if !strings.Contains(problems[k], w) {
				t.Errorf("%+v: problem %d %q, want %q", tc.o, k, problems[k], w)
			}
		}
	}
}

func TestParsePrecisionParam(t *testing.T) {
	for v, want := range map[string]ReaderOptions{
		"float": {Precision: mlfeed.Float32}, "double": {Precision: mlfeed.Float64}, "exact": {Exact: true},
	} {
		var o ReaderOptions
		if err := ParseParams(&o, map[string]string{"precision": v}); err != nil || o.Precision != want.Precision || o.Exact != want.Exact {
			t.Errorf("precision=%s: %+v, %v", v, o, err)
		}
	}
	var o ReaderOptions
	if err := ParseParams(&o, map[string]string{"precision": "half"}); !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), "float, double or exact") {
		t.Errorf("precision=half: %v", err)
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

// TestFits32Digits checks fits32's shortcut (a value farther from its float32 than a unit of
// its last digit does not fit) against the definition near the boundary: float32 values and
// neighbours a few float64 ulps to a few digit units away, printed with 7 to 17 digits.
func TestFits32Digits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		f := math.Float32frombits(rng.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) || f == 0 {
			continue
		}
		nd := 7 + rng.IntN(11)
		x := float64(f)
		switch rng.IntN(3) {
		case 0:
			x = math.Nextafter(x, math.Inf(int(rng.IntN(2)*2-1)))
		case 1:
			x += x * digitUnit[nd] * (rng.Float64() - 0.5) * 3
		}
		tok := strconv.FormatFloat(x, 'e', nd-1, 64)
		v, _ := strconv.ParseFloat(tok, 64)
		if got, want := fits32([]byte(tok), v), fits32Def(tok, v); got != want {
			t.Fatalf("fits32(%s) = %v, want %v", tok, got, want)
		}
	}
}
