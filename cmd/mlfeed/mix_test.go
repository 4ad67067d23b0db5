package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mixDump runs batches --dump over a mixture and returns each minibatch's values of stream x
// (one per sequence), and stderr.
func mixDump(t *testing.T, args ...string) [][]int {
	t.Helper()
	out, stderr, code := run(t, append([]string{"batches", "--dump"}, args...)...)
	if code != 0 {
		t.Fatalf("batches --dump %v: exit %d: %s", args, code, stderr)
	}
	var mbs [][]int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var mb struct {
			X [][][]float64 `json:"x"`
		}
		if err := json.Unmarshal([]byte(l), &mb); err != nil {
			t.Fatal(err)
		}
		var vs []int
		for _, seq := range mb.X {
			vs = append(vs, int(seq[0][0]))
		}
		mbs = append(mbs, vs)
	}
	return mbs
}

// TestBatchesMix runs a mixture of two CTF files end to end: shares within 4 sigma of the
// weights over 1,000 minibatches, the summary, a state saved and restored with 1 and 2
// workers, a mixture file with a schedule, and the errors.
func TestBatchesMix(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, base, n, dim int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "|x %d%s\n", base+i, strings.Repeat(" 0", dim-1))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.ctf", 0, 3000, 1), write("b.ctf", 100000, 1000, 1)
	args := []string{"--mix", "0.7=" + a, "--mix", "0.3=" + b, "--mb-size", "64", "--stop", "never", "--max-samples", "64000", "--seed", "3"}
	full := mixDump(t, args...)
	if len(full) != 1000 {
		t.Fatalf("%d minibatches, want 1000", len(full))
	}
	var fromB, n float64
	for _, mb := range full {
		for _, v := range mb {
			n++
			if v >= 100000 {
				fromB++
			}
		}
	}
	sigma := math.Sqrt(n * 0.3 * 0.7)
	t.Logf("b.ctf gave %.0f of %.0f sequences (%.4f), weight 0.3: expected %.0f, 4 sigma %.0f", fromB, n, fromB/n, 0.3*n, 4*sigma)
	if math.Abs(fromB-0.3*n) > 4*sigma {
		t.Fatalf("b.ctf gave %.0f of %.0f, expected %.0f within %.0f", fromB, n, 0.3*n, 4*sigma)
	}
	out, stderr, code := run(t, append([]string{"batches"}, args...)...)
	if code != 0 || !strings.Contains(out, "mixture of 2 data sets, stop never: "+a) || !strings.Contains(out, "weight 30.0%") {
		t.Fatalf("summary (exit %d): %s%s", code, out, stderr)
	}
	// Save after 300 minibatches; restore with one worker and with two.
	st := filepath.Join(dir, "st.json")
	if _, stderr, code := run(t, append([]string{"batches", "--save-state", st, "--after", "300"}, args...)...); code != 0 {
		t.Fatal(stderr)
	}
	if rest := mixDump(t, append([]string{"--restore", st}, args...)...); !slices.EqualFunc(rest, full[300:], slices.Equal) {
		t.Fatal("the restored run's minibatches differ from the uninterrupted run's")
	}
	union := make([][]int, 700)
	for rank := range 2 {
		part := mixDump(t, append([]string{"--restore", st, "--workers", "2", "--rank", fmt.Sprint(rank)}, args...)...)
		if len(part) != 700 {
			t.Fatalf("rank %d: %d minibatches after the restore, want 700", rank, len(part))
		}
		for k := range part {
			union[k] = append(union[k], part[k]...)
		}
	}
	for k := range union {
		want := slices.Clone(full[300+k])
		slices.Sort(want)
		slices.Sort(union[k])
		if !slices.Equal(union[k], want) {
			t.Fatalf("minibatch %d after the restore: two workers hold %v, one %v", 300+k, union[k], want)
		}
	}
	// A mixture file: paths relative to it, a schedule, every sequence once at least.
	mf := filepath.Join(dir, "mix.json")
	os.WriteFile(mf, []byte(`{"sources": [{"weight": 1, "path": "a.ctf"}, {"weight": 1, "path": "b.ctf", "name": "code"}],
		"stop": "all_exhausted", "schedule": [{"at": 1000, "weights": [1, 3]}]}`), 0o644)
	seen := map[int]bool{}
	for _, mb := range mixDump(t, "--mix-file", mf, "--mb-size", "50") {
		for _, v := range mb {
			seen[v] = true
		}
	}
	if len(seen) != 4000 {
		t.Fatalf("all_exhausted read %d distinct sequences of 4000", len(seen))
	}
	// Errors: streams that differ, flags that do not go together.
	c := write("c.ctf", 0, 10, 2)
	for _, bad := range [][]string{
		{"--mix", "1=" + a, "--mix", "1=" + c},
		{"--stop", "never", a},
		{"--mix", "1=" + a, a},
		{"--mix", "1=" + a, "--mix-file", mf},
		{"--mix", "1=" + a, "--stop", "never"},
		{"--mix", "1=" + a, "--stop", "sometimes"},
		{"--mix", "one=" + a},
		{"--mix-file", filepath.Join(dir, "none.json")},
	} {
		_, stderr, code := run(t, append([]string{"batches"}, bad...)...)
		if code != 2 {
			t.Errorf("batches %v: exit %d, want 2: %s", bad, code, stderr)
		}
		if bad[1] == "1="+c && !strings.Contains(stderr, "c.ctf") {
			t.Errorf("the stream mismatch does not name c.ctf: %s", stderr)
		}
	}
}
