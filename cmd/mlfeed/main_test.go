package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

var bin string

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
	if _, stderr, code := run(t, "convert", images, labels, filepath.Join(dir, "both.idx")); code != 1 || !strings.Contains(stderr, "--streams") {
		t.Errorf("two streams into IDX: exit %d, %s", code, stderr)
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
