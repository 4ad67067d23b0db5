package npy_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// convertFile converts in to out through the registry.
func convertFile(t *testing.T, in, out string, opts *convert.Options) {
	t.Helper()
	src, err := dataset.OpenFiles([]string{in}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := convert.File(context.Background(), src, out, opts); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrips converts arrays numpy wrote to IDX, CBF, IDV and Binsparse and back: the
// .npy that comes back must be numpy's file byte for byte.
func TestRoundTrips(t *testing.T) {
	d, _ := numpyDir(t)
	cases := map[string][]string{
		"f4_2x3x4": {".idx", ".idv"}, // CBF keeps the dimension, not the shape
		"f4_3x4":   {".idx", ".cbf", ".idv"},
		"f8_3x4":   {".idx", ".cbf", ".idv", ".bsp.npz"},
		"u1_3x4":   {".idx", ".idv"},
		"i2_5":     {".idx", ".idv"},
		"i4_3x1":   {".idx", ".idv"},
		"f4_4x0":   {".idx"},
	}
	for name, exts := range cases {
		in := filepath.Join(d, name+".npy")
		want, _ := os.ReadFile(in)
		for _, ext := range exts {
			mid := filepath.Join(t.TempDir(), "mid"+ext)
			convertFile(t, in, mid, nil)
			back := filepath.Join(t.TempDir(), "back.npy")
			convertFile(t, mid, back, nil)
			if got, _ := os.ReadFile(back); !bytes.Equal(got, want) {
				t.Errorf("%s via %s: differs from numpy's file at byte %d", name, ext, testutil.FirstDiff(got, want))
			}
		}
	}
}

// TestCLI runs info, cat, convert, validate and batches on numpy's files.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	d, _ := numpyDir(t)
	npyFile := filepath.Join(d, "be_f8.npy")
	out, err := testutil.CLI(t, "info", "--json", npyFile)
	if err != nil || !strings.Contains(out, `"format": "npy"`) || !strings.Contains(out, `"sequences": 3`) || !strings.Contains(out, `">f8"`) && !strings.Contains(out, `\u003ef8`) {
		t.Fatalf("info: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "cat", "--json", "-n", "1", npyFile)
	if err != nil || strings.TrimSpace(out) != `{"features":[[-7,-4,-1,2]]}` {
		t.Fatalf("cat: %v\n%s", err, out)
	}
	npz := filepath.Join(d, "stored.npz")
	if out, err = testutil.CLI(t, "info", npz); err != nil || !strings.Contains(out, "npz") || !strings.Contains(out, "m dense bool 2x2") {
		t.Fatalf("info npz: %v\n%s", err, out)
	}
	for _, f := range []string{npyFile, npz, filepath.Join(d, "deflated.npz"), filepath.Join(d, "fortran_i2_2x3x4.npy")} {
		if out, err = testutil.CLI(t, "validate", f); err != nil || !strings.Contains(out, ": ok") {
			t.Fatalf("validate %s: %v\n%s", f, err, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.npy")
	data, _ := os.ReadFile(npyFile)
	os.WriteFile(bad, data[:len(data)-3], 0o644)
	if out, err = testutil.CLI(t, "validate", bad); err == nil || !strings.Contains(out, "byte offset") {
		t.Fatalf("validate truncated: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "batches", "--dump", "--mb-size", "2", "--no-randomize", npz); err != nil || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"s":[[["a"]],[["bb"]]]`) {
		t.Fatalf("batches: %v\n%s", err, out)
	}
	// A Fortran-order array through IDX and back comes out as numpy writes it in C order.
	idx := filepath.Join(t.TempDir(), "x.idx")
	if out, err = testutil.CLI(t, "convert", filepath.Join(d, "fortran_f4_3x4.npy"), idx); err != nil {
		t.Fatalf("convert to idx: %v\n%s", err, out)
	}
	back := filepath.Join(t.TempDir(), "x.npy")
	if out, err = testutil.CLI(t, "convert", idx, back); err != nil {
		t.Fatalf("convert back: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(filepath.Join(d, "fortran_f4_3x4.ref.npy"))
	if got, _ := os.ReadFile(back); !bytes.Equal(got, want) {
		t.Errorf("Fortran array via IDX: differs from numpy's C-order file at byte %d", testutil.FirstDiff(got, want))
	}
}
