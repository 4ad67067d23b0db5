package webdataset_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// The command line on webdataset's shards: info, cat --json with keys as ids and bytes as
// base64, batches --dump, validate, a directory of shards as one data set, a conversion to a
// shard and back, a sparse stream refused with exit 2, and a damaged header refused with exit
// 1 and its offset.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	sample := filepath.Join("testdata", "sample.tgz")
	out, err := testutil.CLI(t, "info", "--json", sample)
	if err != nil || !strings.Contains(out, `"format": "webdataset"`) || !strings.Contains(out, `"sequences": 90`) || !strings.Contains(out, `"type": "bytes"`) {
		t.Fatalf("info: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "cat", "--json", "-n", "1", filepath.Join("testdata", "compressed.tar"))
	if err != nil || strings.TrimSpace(out) != `{"id":"compressed/0001","txt.gz":[["H4sICLQ0W18AAzAwMDEudHh0AMtIzcnJ5wIAIDA6NgYAAAA="]]}` {
		t.Fatalf("cat: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "batches", "--dump", "--mb-size", "2", "--no-randomize", "--max-samples", "2", sample)
	if err != nil || !strings.Contains(out, `"cls":[[[0]],[[6]]]`) {
		t.Fatalf("batches: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "validate", filepath.Join("testdata", "written.tar.gz")); err != nil || !strings.Contains(out, ": ok") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	// A directory of shards is one data set.
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	if out, err = testutil.CLI(t, "convert", "--shards", "3", "--to", "webdataset", sample, shards); err != nil {
		t.Fatalf("convert --shards: %v\n%s", err, out)
	}
	a, _ := testutil.CLI(t, "cat", "--json", sample)
	b, err := testutil.CLI(t, "cat", "--json", shards)
	if err != nil || a != b {
		t.Fatalf("the shards read differently: %v\n%.300s", err, b)
	}
	// Through Parquet and back, by the command line.
	pq := filepath.Join(dir, "w.parquet")
	back := filepath.Join(dir, "w.tar")
	written := filepath.Join("testdata", "written.tar")
	if out, err = testutil.CLI(t, "convert", written, pq); err != nil {
		t.Fatalf("to parquet: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "convert", "--to", "webdataset", pq, back); err != nil {
		t.Fatalf("back: %v\n%s", err, out)
	}
	a, _ = testutil.CLI(t, "cat", "--json", written)
	b, _ = testutil.CLI(t, "cat", "--json", back)
	if strings.Count(a, "\n") != 12 || a != b {
		t.Fatalf("written.tar via parquet differs:\n%.300s\n%.300s", a, b)
	}
	// A sparse stream: exit 2.
	svm := filepath.Join(dir, "x.svm")
	os.WriteFile(svm, []byte("1 3:0.5\n0 1:2\n"), 0o644)
	out, err = testutil.CLI(t, "convert", svm, filepath.Join(dir, "x.tar"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "sparse") {
		t.Fatalf("sparse to webdataset: %v\n%s", err, out)
	}
	// A flipped byte in the second header: exit 1, its offset.
	data, _ := os.ReadFile(filepath.Join("testdata", "mpdata-20.tar"))
	data[1024+3] ^= 1
	bad := filepath.Join(dir, "bad.tar")
	os.WriteFile(bad, data, 0o644)
	out, err = testutil.CLI(t, "cat", "--json", bad)
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, "byte offset 1024 (tar header)") {
		t.Fatalf("damaged header: %v\n%s", err, out)
	}
}
