package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCTFPythonFloats: CTF written by Python (repr: up to 17 significant digits) with declared
// streams reads at float32 as CNTK reads it; convert, batches and validate succeed and print
// one warning per stream (count, first place, the option), precision=double keeps the values
// without a warning, precision=exact refuses the first at its place, and what float32 would
// lose is an error saying so.
func TestCTFPythonFloats(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for range 200 {
		b.WriteString("|features")
		for range 4 {
			b.WriteString(" " + strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64)) // Python's repr digits
		}
		fmt.Fprintf(&b, " |labels %d:1\n", rng.IntN(3))
	}
	data := filepath.Join(dir, "py.ctf")
	os.WriteFile(data, []byte(b.String()), 0o644)
	in := []string{"--input", "features:dense:4", "--input", "labels:sparse:3"}
	want := data + ":1:11: ctf: precision: 800 values of input \"features\" rounded to float32, the first here ("
	for _, args := range [][]string{
		{"convert", data, filepath.Join(dir, "out.cbf")},
		{"batches", "--mb-size", "16", data},
		{"validate", data},
		{"convert", data, filepath.Join(dir, "out.idx"), "--streams", "features"},
	} {
		out, stderr, code := run(t, append(args, in...)...)
		if code != 0 || strings.Count(stderr, want) != 1 || !strings.Contains(stderr, "--opt precision=double keeps them") ||
			strings.Contains(stderr, "labels\" rounded") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("mlfeed %v: exit %d\n%s%s", args, code, out, stderr)
		}
		if args[0] == "validate" && !strings.Contains(out, "ok") {
			t.Errorf("validate: %s", out)
		}
	}
	// precision=double: every value as written, no warning.
	out, stderr, code := run(t, append([]string{"cat", "-n", "1", "--opt", "precision=double", data}, in...)...)
	first := strings.Fields(strings.Split(b.String(), "\n")[0])[1]
	if code != 0 || stderr != "" || !strings.Contains(out, first) {
		t.Errorf("precision=double: exit %d, %q\n%s", code, stderr, out)
	}
	// precision=exact: today's refusal, saying what happened.
	_, stderr, code = run(t, append([]string{"convert", "--opt", "precision=exact", data, filepath.Join(dir, "x.cbf")}, in...)...)
	if code != 1 || !strings.Contains(stderr, data+":1:11: ctf: precision: "+first+" would be rounded to") {
		t.Errorf("precision=exact: exit %d, %s", code, stderr)
	}
	// A value float32 cannot hold at all is an error in every float32 mode.
	big := filepath.Join(dir, "big.ctf")
	os.WriteFile(big, []byte("|features 1 2 3 4 |labels 0:1\n|features 1 2 3.5e38 4 |labels 0:1\n"), 0o644)
	for _, prec := range []string{"", "precision=float", "precision=exact"} {
		args := append([]string{"convert", big, filepath.Join(dir, "big.cbf")}, in...)
		if prec != "" {
			args = append(args, "--opt", prec)
		}
		_, stderr, code := run(t, args...)
		if code != 1 || !strings.Contains(stderr, big+":2:15: ctf: range: 3.5e38 is beyond float32's range") || strings.Contains(stderr, "out of range") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// TestCTFRepeatedSparseIndex: a sparse index twice in one sample is refused at its line and
// column by validate, cat and convert (--densify included: no value is kept in place of the
// other), with streams declared or inferred.
func TestCTFRepeatedSparseIndex(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "dup.ctf")
	os.WriteFile(data, []byte("|x 1:1 2:1\n|x 3:1 3:2\n"), 0o644)
	want := data + ":2:8: ctf: invalid data: sparse index 3 appears twice in the sample (first at column 4)"
	for _, args := range [][]string{
		{"validate", data},
		{"validate", "--input", "x:sparse:5", data},
		{"cat", data},
		{"convert", "--densify", data, filepath.Join(dir, "d.npy")},
		{"convert", "--densify", "--input", "x:sparse:5", data, filepath.Join(dir, "d.idx")},
	} {
		out, stderr, code := run(t, args...)
		if code != 1 || !strings.Contains(out+stderr, want) {
			t.Errorf("mlfeed %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "d.*")); len(m) != 0 {
		t.Errorf("a failed conversion left %v", m)
	}
}
