package tfrecord_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// The command line on TFX's files: info, cat --json with bytes as base64, batches --dump,
// validate, a conversion to TFRecord and back, a float64 stream refused with exit 2, and a
// damaged record refused with exit 1 and its offset.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	seq := filepath.Join("testdata", "seq_eval.tfrecord.gz")
	out, err := testutil.CLI(t, "info", "--json", seq)
	if err != nil || !strings.Contains(out, `"format": "tfrecord"`) || !strings.Contains(out, `"sequences": 4500`) || !strings.Contains(out, `"type": "bytes"`) {
		t.Fatalf("info: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "cat", "--json", "-n", "2", seq)
	if err != nil || strings.TrimSpace(out) != `{"f":[],"i":[],"s":[["MTA1MDA="],["MTA1MDE="]]}
{"f":[[10501]],"i":[[10501]],"s":[["MTA1MDE="],["MTA1MDI="]]}` {
		t.Fatalf("cat: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "batches", "--dump", "--mb-size", "4", "--no-randomize", "--max-samples", "4", seq)
	if err != nil || !strings.Contains(out, `"s":[[["MTA1MDA="],["MTA1MDE="]],[["MTA1MDE="],["MTA1MDI="]]`) {
		t.Fatalf("batches: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "validate", seq); err != nil || !strings.Contains(out, ": ok") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	dir := t.TempDir()
	penguin := filepath.Join("testdata", "penguin_train.tfrecord.gz")
	pq := filepath.Join(dir, "p.parquet")
	back := filepath.Join(dir, "p.tfrecord")
	if out, err = testutil.CLI(t, "convert", penguin, pq); err != nil {
		t.Fatalf("convert to parquet: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "convert", pq, back); err != nil {
		t.Fatalf("convert back: %v\n%s", err, out)
	}
	a, _ := testutil.CLI(t, "cat", "--json", penguin)
	b, _ := testutil.CLI(t, "cat", "--json", back)
	if a != b || strings.Count(a, "\n") != 234 {
		t.Fatalf("penguin via parquet differs")
	}
	// float64 is refused (exit 2) unless --type asks for float32.
	f64 := filepath.Join(dir, "f64.npz")
	if out, err = testutil.CLI(t, "convert", "--type", "float64", penguin, f64); err != nil {
		t.Fatalf("to float64: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "convert", f64, filepath.Join(dir, "x.tfrecord"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "float64") {
		t.Fatalf("float64 to tfrecord: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "convert", "--type", "float32", f64, filepath.Join(dir, "x.tfrecord")); err != nil {
		t.Fatalf("float64 to tfrecord with --type float32: %v\n%s", err, out)
	}
	// A flipped byte in record 1's data: exit 1, the record's offset.
	data, _ := os.ReadFile(back)
	second := 16 + int(binary.LittleEndian.Uint64(data))
	data[second+20] ^= 1
	bad := filepath.Join(dir, "bad.tfrecord")
	os.WriteFile(bad, data, 0o644)
	out, err = testutil.CLI(t, "cat", "--json", bad)
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, fmt.Sprintf("byte offset %d (record 1)", second)) || !strings.Contains(out, "CRC") {
		t.Fatalf("damaged record: %v\n%s", err, out)
	}
}
