package ctf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// TestRepeatedSparseIndex: an index twice in one sparse sample (CNTK keeps both values, and
// packed dense the later wins) is refused at its line and column, naming the first, by
// reading, in pieces as whole, and by Validate; with maxErrors the sample is dropped, counted
// and logged as the other bad samples are.
func TestRepeatedSparseIndex(t *testing.T) {
	long := make([]string, 40)
	for k := range long {
		long[k] = fmt.Sprintf("%d:1", 39-k) // decreasing: the sorted check
	}
	long = append(long, "7:2")
	in := []mlfeed.Stream{dense("a", 1), sparse("x", 100)}
	for _, tc := range []struct{ line, want string }{
		{"|a 1 |x 3:1 3:2", ":2:13: ctf: invalid data: sparse index 3 appears twice in the sample (first at column 9)"},
		{"|a 1 |x 5:1 2:1 5:0.25", ":2:17: ctf: invalid data: sparse index 5 appears twice in the sample (first at column 9)"},
		{"|a 1 |x  12:1\t4:1  12:1e-3", ":2:20: ctf: invalid data: sparse index 12 appears twice in the sample (first at column 10)"},
		{"|a 1 |x " + strings.Join(long, " "), fmt.Sprintf(":2:%d: ctf: invalid data: sparse index 7 appears twice", len("|a 1 |x "+strings.Join(long[:40], " "))+2)},
	} {
		text := "|a 0 |x 1:1 2:1\n" + tc.line + "\n|a 2 |x 0:1\n"
		_, _, err := readAll(t, text, &ReaderOptions{Inputs: in})
		var pe *mlfeed.PosError
		if !errors.Is(err, mlfeed.ErrFormat) || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.line, err, tc.want)
		}
		var problems []string
		if err := Validate(writeTemp(t, "v.ctf", text), &ReaderOptions{Inputs: in}, func(e error) bool {
			problems = append(problems, e.Error())
			return true
		}); err != nil || len(problems) == 0 || !strings.Contains(problems[0], tc.want) {
			t.Errorf("%q: validate %v %q", tc.line, err, problems)
		}
		// Tolerated, the sample is dropped and CNTK-style warnings are logged.
		var log bytes.Buffer
		r, chunks, err := readAll(t, "0 |a 0 |x 1:1\n0 "+tc.line+"\n1 |a 2 |x 0:1\n", &ReaderOptions{Inputs: in, MaxErrors: 5, TraceLevel: 1, Log: &log})
		if err != nil {
			t.Fatalf("%q with maxErrors: %v", tc.line, err)
		}
		if got := flat(r, chunks); got != "0: a=[0][1] x=[1:1]\n1: a=[2] x=[0:1]\n" || !strings.Contains(log.String(), "repeats an index of the same sample") {
			t.Errorf("%q tolerated: %q\n%s", tc.line, got, log.String())
		}
	}
	// Repeated indices in different samples, or once each, are fine.
	if _, _, err := readAll(t, "|a 0 |x 3:1 4:2\n|a 0 |x 3:1 4:2\n", &ReaderOptions{Inputs: in}); err != nil {
		t.Fatal(err)
	}
}

// TestRepeatedSparseIndexPieces: a chunk parsed in pieces gives the error a whole parse gives.
func TestRepeatedSparseIndexPieces(t *testing.T) {
	var b strings.Builder
	for q := range 30000 {
		if q == 20000 {
			b.WriteString("|x 3:1 3:2\n")
			continue
		}
		fmt.Fprintf(&b, "|x %d:1 %d:0.5\n", q%7, q%7+1)
	}
	r, err := newReader("p.ctf", []byte(b.String()), nil, &ReaderOptions{Inputs: []mlfeed.Stream{sparse("x", 9)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 4} {
		_, _, _, err := parsePieces[float32](sched.WithContext(context.Background(), sched.New(4, 0)), r, 0, n, 0, nil)
		if err == nil || !strings.Contains(err.Error(), "p.ctf:20001:8: ctf: invalid data: sparse index 3 appears twice") {
			t.Errorf("%d pieces: %v", n, err)
		}
	}
}

// TestWriteRepeatedSparseIndex: the writer refuses a sample with an index twice, which no
// reader would read back as written; NaN, which CTF cannot spell, is refused whatever its
// payload.
func TestWriteRepeatedSparseIndex(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 9}}}
	c := &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, SampleStart: []int64{0, 2, 4},
		Indices: []int32{1, 2, 3, 3}, Values: toBuffer([]float64{1, 2, 3, 4}, mlfeed.Float32)}}}
	var out bytes.Buffer
	w, err := NewWriter(&out, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(c); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "sample 1 holds a sparse index twice") {
		t.Fatalf("err = %v", err)
	}
	for _, bits := range []uint64{0x7ff8000000000001, 0x7ff0000000000abc, 0xfff8000000000000} {
		d := &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, SampleStart: []int64{0, 1},
			Indices: []int32{1}, Values: toBuffer([]float64{math.Float64frombits(bits)}, mlfeed.Float64)}}}
		sc64 := sc
		sc64.Streams = []mlfeed.Stream{{Name: "x", Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: 9}}
		w, _ := NewWriter(&out, sc64, nil)
		if err := w.WriteChunk(d); !errors.Is(err, mlfeed.ErrRange) || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("NaN %#x: err = %v", bits, err)
		}
	}
}
