package libsvm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// sample is a small LIBSVM file as mlfeed writes it: one-based, with a label on every line.
const sample = `1 1:0.5 3:-2 7:1e-300
-1 2:3.25 5:0.1
0.5 1:1 2:2 3:3 4:4 5:5 6:6 7:7
2 7:-0.30000000000000004
`

// convertFile converts in to out through the registry, with reader parameters.
func convertFile(t *testing.T, in, out string, params map[string]string, streams ...string) {
	t.Helper()
	src, err := dataset.OpenFiles([]string{in}, "", &format.Options{Params: params})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := convert.File(context.Background(), src, out, &convert.Options{Streams: streams}); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrips converts a LIBSVM file to CBF, CTF and Matrix Market and back; the text that
// comes back must be the text that went in.
func TestRoundTrips(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.svm")
	os.WriteFile(in, []byte(sample), 0o644)
	for _, ext := range []string{".cbf", ".ctf"} {
		mid := filepath.Join(d, "mid"+ext)
		convertFile(t, in, mid, nil)
		back := filepath.Join(d, "back"+ext+".svm")
		var params map[string]string
		src, err := dataset.OpenFiles([]string{mid}, "", &format.Options{Params: params, Inputs: []mlfeed.Stream{
			{Name: "labels", Storage: mlfeed.Dense, Dim: 1, Type: mlfeed.Float64},
			{Name: "features", Storage: mlfeed.Sparse, Dim: 7, Type: mlfeed.Float64},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := convert.File(context.Background(), src, back, nil); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if got, _ := os.ReadFile(back); string(got) != sample {
			t.Errorf("%s round trip:\n%s\nwant\n%s", ext, got, sample)
		}
	}
	// Matrix Market holds the features only.
	mtx := filepath.Join(d, "mid.mtx")
	convertFile(t, in, mtx, nil, "features")
	back := filepath.Join(d, "back.mtx.svm")
	convertFile(t, mtx, back, map[string]string{"name": "features"})
	var want strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(sample), "\n") {
		want.WriteString(l[strings.IndexByte(l, ' ')+1:] + "\n")
	}
	if got, _ := os.ReadFile(back); string(got) != want.String() {
		t.Errorf("mtx round trip:\n%s\nwant\n%s", got, want.String())
	}
}

// TestCLI runs info, cat, convert, validate and batches on a LIBSVM file.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	d := t.TempDir()
	in := filepath.Join(d, "in.svm")
	os.WriteFile(in, []byte(sample), 0o644)
	out, err := testutil.CLI(t, "info", "--json", in)
	if err != nil || !strings.Contains(out, `"format": "libsvm"`) || !strings.Contains(out, `"sequences": 4`) || !strings.Contains(out, `"dim": 7`) {
		t.Fatalf("info: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "cat", "--json", "-n", "1", in)
	if err != nil || strings.TrimSpace(out) != `{"labels":[[1]],"features":[{"indices":[0,2,6],"values":[0.5,-2,1e-300]}]}` {
		t.Fatalf("cat: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "cat", "--json", "-n", "1", "--opt", "zero_based=true", "--opt", "dim=20", in)
	if err != nil || !strings.Contains(out, `"indices":[1,3,7]`) {
		t.Fatalf("cat zero_based: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "validate", in); err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	bad := filepath.Join(d, "bad.svm")
	os.WriteFile(bad, []byte("1 1:2\n1 1:zz\n"), 0o644)
	if out, err = testutil.CLI(t, "validate", bad); err == nil || !strings.Contains(out, "bad.svm:2:5") {
		t.Fatalf("validate bad: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "batches", "--dump", "--mb-size", "2", "--no-randomize", in); err != nil || strings.Count(out, "\n") != 2 ||
		!strings.Contains(out, `"labels":[[[1]],[[-1]]],"features":[[{"indices":[0,2,6],"values":[0.5,-2,1e-300]}],[{"indices":[1,4]`) {
		t.Fatalf("batches: %v\n%s", err, out)
	}
	npz := filepath.Join(d, "out.npz")
	if out, err = testutil.CLI(t, "convert", in, npz); err == nil {
		t.Fatalf("sparse features into .npz without --densify succeeded:\n%s", out)
	}
	if out, err = testutil.CLI(t, "convert", "--densify", in, npz); err != nil {
		t.Fatalf("convert --densify: %v\n%s", err, out)
	}
	back := filepath.Join(d, "back.svm")
	if out, err = testutil.CLI(t, "convert", npz, back); err == nil || !strings.Contains(out, "dense_features=true") {
		t.Fatalf("dense features into LIBSVM without dense_features: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "convert", "--write-opt", "dense_features=true", npz, back); err != nil {
		t.Fatalf("convert back: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(back); string(got) != sample {
		t.Errorf("libsvm -> npz -> libsvm:\n%s\nwant\n%s", got, sample)
	}
}
