package ctf

import (
	"errors"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

func validate(t *testing.T, path string, opts *ReaderOptions, limit int) []string {
	t.Helper()
	var got []string
	err := Validate(path, opts, func(e error) bool {
		if !errors.Is(e, mlfeed.ErrFormat) {
			t.Errorf("%v does not wrap mlfeed.ErrFormat", e)
		}
		got = append(got, e.Error())
		return len(got) < limit
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestValidateInvalidInputs(t *testing.T) {
	in := []mlfeed.Stream{dense("A", 1), sparse("B", 10)}
	got := validate(t, testdataPath(t, "invalid_inputs.txt"), &ReaderOptions{Inputs: in}, 1000)
	if len(got) != 26 {
		t.Fatalf("%d problems:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, want := range []string{
		"invalid_inputs.txt:2:15: ctf: invalid data: sparse index 10 is not below the dimension 10",
		"invalid_inputs.txt:5:7: ctf: invalid data: bad number: expected a digit or a sign, found ','",
		"invalid_inputs.txt:26:3: ctf: invalid data: input name \"C\" is not declared",
		"invalid_inputs.txt:35:1: ctf: invalid data: sequence 123 has 2 samples but spans 3 lines",
		"invalid_inputs.txt:39:74: ctf: invalid data: dense sample has 0 values, fewer than the dimension 1",
	} {
		found := false
		for _, g := range got {
			found = found || strings.HasSuffix(g, want)
		}
		if !found {
			t.Errorf("missing %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if got := validate(t, testdataPath(t, "invalid_inputs.txt"), &ReaderOptions{Inputs: in}, 3); len(got) != 3 {
		t.Fatalf("report returning false did not stop: %d", len(got))
	}
}

func TestValidateStrict(t *testing.T) {
	in := []mlfeed.Stream{dense("a", 2)}
	text := "1 |a 1 2\n2 |a 1 2 |a 3 4\n2 |a 1\n3 |a 1 2 |z 5\n1 |a 5 5\n4 |a 1 2 \x01\n"
	got := validate(t, writeTemp(t, "v.ctf", text), &ReaderOptions{Inputs: in}, 100)
	want := []string{
		"v.ctf:2:10: ctf: invalid data: input \"a\" appears twice on the line",
		"v.ctf:3:3: ctf: invalid data: dense sample has 1 values, fewer than the dimension 2",
		"v.ctf:4:12: ctf: invalid data: input name \"z\" is not declared",
		"v.ctf:6:10: ctf: invalid data: unexpected control or non-ASCII byte 0x01 outside a comment",
		"v.ctf:5:1: ctf: invalid data: sequence id 1 was already used by the sequence at line 1; ids must not repeat (CNTK starts a new sequence with the same id)",
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Errorf("problem %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestValidateClean(t *testing.T) {
	for _, name := range []string{"Simple_dense.txt", "MNIST_dense.txt", "10x10_sparse.txt", "ref_data_with_escape_sequences.txt", "100x1_dense.txt", "missing_trailing_newline.txt"} {
		if got := validate(t, testdataPath(t, name), nil, 100); len(got) != 0 {
			t.Errorf("%s: %s", name, strings.Join(got, "\n"))
		}
	}
	got := validate(t, writeTemp(t, "e.ctf", ""), nil, 100)
	if len(got) != 1 || !strings.Contains(got[0], "empty") {
		t.Fatalf("empty file: %v", got)
	}
}
