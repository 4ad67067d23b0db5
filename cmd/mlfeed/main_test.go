package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

var bin string

// mnist returns a file of the whole shared MNIST set (the tests' sizes and counts are its
// own), skipping without it.
func mnist(t *testing.T, name string) string {
	return testutil.Shared(t, "mnist", name)
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mlfeed-cli-test-*")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "mlfeed")
	args := []string{"build", "-o", bin}
	if tags := os.Getenv("MLFEED_TAGS"); tags != "" {
		args = append(args, "-tags", tags)
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs mlfeed and returns stdout, stderr and the exit status.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errb.String(), "panic:") || strings.Contains(errb.String(), "goroutine ") {
		t.Fatalf("mlfeed %v panicked:\n%s", args, errb.String())
	}
	return out.String(), errb.String(), code
}

func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.xyz")
	os.WriteFile(junk, []byte("no format has these bytes"), 0o644)
	bad := filepath.Join(dir, "bad-idx1-ubyte")
	os.WriteFile(bad, []byte{0, 0, 8, 1, 0, 0, 0, 9, 1}, 0o644)
	ctfFile := filepath.Join(dir, "x.ctf")
	os.WriteFile(ctfFile, []byte("|x 1 2\n"), 0o644)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"info", "--bogus", bad}, 2, "unknown flag"},
		{[]string{"info"}, 2, "at least 1"},
		{[]string{"info", junk}, 2, "unknown format"},
		{[]string{"info", "--opt", "nosuch=1", bad}, 2, "nosuch"},
		{[]string{"info", "--input", "x:dense", bad}, 2, "--input"},
		{[]string{"info", "--input", "x:dense:1000000000", ctfFile}, 2, "limit of 268435456"},
		{[]string{"validate", bad}, 1, "bad-idx1-ubyte: byte offset 9 (payload)"},
		{[]string{"cat", "--json", filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{"convert", bad, filepath.Join(dir, "out.unknownext")}, 2, "--to"},
	}
	for _, c := range cases {
		_, stderr, code := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("mlfeed %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

func TestDemoAndRoundTrips(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := run(t, "demo", "--dir", dir, "-n", "120")
	if code != 0 {
		t.Fatalf("demo failed (%d): %s", code, stderr)
	}
	for _, want := range []string{"generated 120 digits", "read back demo-images-f32.idx.gz + labels: identical",
		"every one of the 120 digits exactly once", "demo ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	images := filepath.Join(dir, "demo-images-idx3-ubyte")
	labels := filepath.Join(dir, "demo-labels-idx1-ubyte")
	js, _, code := run(t, "info", "--json", images, labels)
	if code != 0 {
		t.Fatal("info failed")
	}
	var info struct {
		Format    string
		Sequences int
		Streams   []struct {
			Name, Storage, Type string
			Dim                 int
			Shape               []int
		}
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	if info.Format != "idx" || info.Sequences != 120 || len(info.Streams) != 2 || info.Streams[0].Dim != 784 ||
		len(info.Streams[0].Shape) != 2 || info.Streams[1].Name != "labels" {
		t.Errorf("info --json: %+v", info)
	}
	// Every line of cat --json parses, with 784 pixels and a label.
	cat, _, _ := run(t, "cat", "--json", "-n", "5", images, labels)
	lines := strings.Split(strings.TrimSpace(cat), "\n")
	if len(lines) != 5 {
		t.Fatalf("cat -n 5 printed %d lines", len(lines))
	}
	for _, l := range lines {
		var row map[string][][]float64
		if err := json.Unmarshal([]byte(l), &row); err != nil || len(row["features"][0]) != 784 || len(row["labels"][0]) != 1 {
			t.Fatalf("cat line %q: %v", l[:min(80, len(l))], err)
		}
	}
	// show draws the digits with the four characters only.
	art, _, code := run(t, "show", "-n", "1", images, labels)
	if code != 0 || !strings.HasPrefix(art, "record 0: labels ") || strings.Trim(art[strings.Index(art, "\n"):], ".oO@\n") != "" {
		t.Errorf("show output:\n%s", art)
	}
	png := filepath.Join(dir, "grid.png")
	if _, stderr, code := run(t, "show", "--png", png, images); code != 0 {
		t.Fatal(stderr)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Error("no PNG written")
	}
	// convert: both streams cannot go into one IDX file; --streams picks one.
	if _, stderr, code := run(t, "convert", images, labels, filepath.Join(dir, "both.idx")); code != 2 || !strings.Contains(stderr, "mlfeed: hint: choose the streams with --streams NAME,...") {
		t.Errorf("two streams into IDX: exit %d, %s", code, stderr)
	}
	// the library marks what would let the writer take the data; the CLI names its flags
	for _, c := range []struct{ out, hint string }{
		{"sparse.npy", "mlfeed: hint: convert with --densify"},
		{"sparse.tfrecord", "mlfeed: hint: convert with --densify"},
	} {
		sparse := filepath.Join("..", "..", "testdata", "cntk", "cbf", "10x10_sparse.bin")
		if _, stderr, code := run(t, "convert", sparse, filepath.Join(dir, c.out)); code != 2 || !strings.Contains(stderr, c.hint) || strings.Contains(stderr, "densify=True") {
			t.Errorf("%s: exit %d, %s", c.out, code, stderr)
		}
	}
	if _, stderr, code := run(t, "convert", "--type", "float64", labels, filepath.Join(dir, "f64.cbf")); code != 0 {
		t.Errorf("float64 into CBF: exit %d, %s", code, stderr)
	}
	if _, stderr, code := run(t, "convert", labels, filepath.Join(dir, "u8.cbf")); code != 2 || !strings.Contains(stderr, "mlfeed: hint: convert with --type TYPE") {
		t.Errorf("uint8 into CBF: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "both.idx")); err == nil {
		t.Error("a failed conversion left its output")
	}
	lab := filepath.Join(dir, "labels.idx.gz")
	if _, stderr, code := run(t, "convert", images, labels, "--streams", "labels", lab); code != 0 {
		t.Fatal(stderr)
	}
	a, _, _ := run(t, "cat", "--json", labels)
	b, _, _ := run(t, "cat", "--json", lab)
	if a != b || a == "" {
		t.Error("labels changed through convert --streams to gzip")
	}
}

// TestCLIContract runs the shared contract checker on the built binary.
func TestCLIContract(t *testing.T) {
	testutil.Testdata(t, "mnist")
	script := filepath.Join(testutil.SharedDir(), "tools", "check-cli-contract")
	if _, err := os.Stat(script); err != nil {
		t.Skip("skipped: ../shared/tools/check-cli-contract is absent")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("skipped: the contract checker needs python3")
	}
	out, err := exec.Command(script, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("contract check failed:\n%s", out)
	}
	t.Logf("%s", out)
}

// dumpLines runs batches --dump and returns each minibatch's sweep and sequences, each
// sequence rendered as its JSON (all streams).
func dumpLines(t *testing.T, args ...string) (sweeps []int, seqs [][]string) {
	t.Helper()
	out, stderr, code := run(t, append([]string{"batches", "--dump"}, args...)...)
	if code != 0 {
		t.Fatalf("batches --dump %v: exit %d: %s", args, code, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var mb map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &mb); err != nil {
			t.Fatalf("dump line %q: %v", l[:min(80, len(l))], err)
		}
		var sweep, n int
		json.Unmarshal(mb["sweep"], &sweep)
		json.Unmarshal(mb["sequences"], &n)
		var feats, labels []json.RawMessage
		json.Unmarshal(mb["features"], &feats)
		json.Unmarshal(mb["labels"], &labels)
		if len(feats) != n || len(labels) != n {
			t.Fatalf("dump line with %d sequences has %d features and %d labels", n, len(feats), len(labels))
		}
		var s []string
		for q := range n {
			s = append(s, string(feats[q])+string(labels[q]))
		}
		sweeps, seqs = append(sweeps, sweep), append(seqs, s)
	}
	return sweeps, seqs
}

func TestBatches(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := run(t, "demo", "--dir", dir, "-n", "150"); code != 0 {
		t.Fatalf("demo failed (%d): %s", code, stderr)
	}
	images := filepath.Join(dir, "demo-images-idx3-ubyte")
	labels := filepath.Join(dir, "demo-labels-idx1-ubyte")
	cbf := filepath.Join(dir, "digits.cbf")
	if _, stderr, code := run(t, "convert", "--type", "float32", images, labels, cbf); code != 0 {
		t.Fatal(stderr)
	}
	idx := []string{images, labels}

	// The summary: shapes, counts and sweep times.
	out, stderr, code := run(t, append([]string{"batches", "--mb-size", "32", "--sweeps", "3"}, idx...)...)
	for _, want := range []string{"features", "28x28", "15 minibatches, 450 samples, 3 sweeps", "samples/s", "sweep times: first"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("batches summary lacks %q (exit %d):\n%s%s", want, code, out, stderr)
		}
	}

	// Each sweep delivers every sequence once, in an order that changes per sweep; the packing
	// goroutines and the format change nothing.
	sweeps, seqs := dumpLines(t, append([]string{"--mb-size", "32", "--sweeps", "2", "--seed", "4"}, idx...)...)
	all := map[int][]string{}
	for k, s := range seqs {
		all[sweeps[k]] = append(all[sweeps[k]], s...)
	}
	_, fileOrder := dumpLines(t, append([]string{"--mb-size", "150", "--no-randomize"}, idx...)...)
	for s := range 2 {
		got := append([]string{}, all[s]...)
		want := append([]string{}, fileOrder[0]...)
		if slices.Equal(got, want) {
			t.Fatalf("sweep %d is in file order", s)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("sweep %d does not hold every sequence once", s)
		}
	}
	if slices.Equal(all[0], all[1]) {
		t.Fatal("both sweeps have the same order")
	}
	for _, args := range [][]string{{"--packers", "-1"}, {"--packers", "3"}, {cbf}} {
		a := append([]string{"--mb-size", "32", "--sweeps", "2", "--seed", "4"}, args...)
		if args[0] != cbf {
			a = append(a, idx...)
		}
		if _, other := dumpLines(t, a...); !slices.EqualFunc(other, seqs, slices.Equal) {
			t.Fatalf("batches %v: other minibatches", args)
		}
	}

	// Stopping after 4 minibatches and restoring continues with the 5th.
	st := filepath.Join(dir, "state.json")
	if _, stderr, code := run(t, append([]string{"batches", "--mb-size", "32", "--sweeps", "2", "--seed", "4", "--save-state", st, "--after", "4"}, cbf)...); code != 0 {
		t.Fatal(stderr)
	}
	if _, rest := dumpLines(t, "--mb-size", "32", "--sweeps", "2", "--seed", "4", "--restore", st, cbf); !slices.EqualFunc(rest, seqs[4:], slices.Equal) {
		t.Fatal("restored run differs from the rest of the uninterrupted one")
	}

	// Three workers: disjoint parts of each sweep, together all of it.
	seen := map[string]int{}
	for rank := range 3 {
		_, part := dumpLines(t, "--mb-size", "32", "--workers", "3", "--rank", fmt.Sprint(rank), cbf)
		for _, s := range part {
			for _, q := range s {
				seen[q]++
			}
		}
	}
	if len(seen) != 150 {
		t.Fatalf("3 workers saw %d distinct sequences of 150", len(seen))
	}
	for _, n := range seen {
		if n != 1 {
			t.Fatal("a sequence went to two workers")
		}
	}

	for _, args := range [][]string{{"--after", "3", cbf}, {"--rank", "1", cbf}, {"--workers", "2", "--rank", "2", cbf}, {}} {
		if _, stderr, code := run(t, append([]string{"batches"}, args...)...); code != 2 {
			t.Errorf("batches %v: exit %d (%s), want 2", args, code, strings.TrimSpace(stderr))
		}
	}
}

// Converting images to a format without sample shapes works and says, in one line on stderr,
// that the shape is stored flat; a format that keeps shapes says nothing.
func TestConvertFlattenedShapeNotice(t *testing.T) {
	dir := t.TempDir()
	images := mnist(t, "t10k-images-idx3-ubyte.gz")
	out := filepath.Join(dir, "images.cbf")
	_, stderr, code := run(t, "convert", "--type", "float32", images, out)
	want := "notice: " + out + ": cbf stores no sample shapes: stream \"features\" of shape 28x28 is stored flat, as dim 784\n"
	if code != 0 || stderr != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	stdout, _, _ := run(t, "info", "--json", out)
	if !strings.Contains(stdout, `"dim":784`) && !strings.Contains(stdout, `"dim": 784`) {
		t.Errorf("info: %s", stdout)
	}
	if _, stderr, code := run(t, "convert", images, filepath.Join(dir, "images.npy")); code != 0 || stderr != "" {
		t.Errorf("npy keeps shapes: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := run(t, "convert", "-q", "--type", "float32", images, out); code != 0 || stderr != "" {
		t.Errorf("-q: exit %d, stderr %q", code, stderr)
	}
}

// With several workers over shards, the summary says which figures are the data set's and
// which this worker's, and shows this worker's first minibatch that has samples, not an
// empty one (chunks go to workers whole, so a worker's first minibatches may be empty).
func TestBatchesWorkerSummary(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	images, labels := mnist(t, "t10k-images-idx3-ubyte.gz"), mnist(t, "t10k-labels-idx1-ubyte.gz")
	if _, stderr, code := run(t, "convert", "-q", "--to", "cbf", "--type", "float32", "--shards", "4", images, labels, shards); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code := run(t, "batches", "--workers", "2", "--rank", "1", "--no-randomize", shards)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"10000 samples per sweep over all workers; worker 1 of 2", "first minibatch: ", "empty: no sequence of this worker's), 5000 samples,"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0 rows x 0 steps") {
		t.Errorf("summary shows an empty minibatch as the first:\n%s", out)
	}
}

// --chunk-size takes sizes with units, as --memory and --shard-size do.
func TestConvertChunkSizeUnits(t *testing.T) {
	dir := t.TempDir()
	labels := mnist(t, "t10k-labels-idx1-ubyte.gz")
	out := filepath.Join(dir, "labels.cbf")
	if _, stderr, code := run(t, "convert", "-q", "--type", "float32", "--chunk-size", "8KiB", labels, out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	stdout, _, _ := run(t, "info", "--json", out)
	var info struct{ Chunks int }
	if err := json.Unmarshal([]byte(stdout), &info); err != nil || info.Chunks < 4 {
		t.Fatalf("10000 float32 labels in chunks of 8KiB: %d chunks (%v)", info.Chunks, err)
	}
	if _, stderr, code := run(t, "convert", "-q", "--chunk-size", "1P", labels, out); code != 2 || !strings.Contains(stderr, "--chunk-size") {
		t.Fatalf("--chunk-size 1P: exit %d: %s", code, stderr)
	}
}
