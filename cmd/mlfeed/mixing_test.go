package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// batches --stats prints a line per sweep with the mixing figures: in file order the rank
// correlation is 1, shuffled it is near 0; the labels are found without being named.
func TestBatchesStats(t *testing.T) {
	labels := filepath.Join("..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte")
	_, stderr, code := run(t, "batches", "--stats", "--no-randomize", labels)
	if code != 0 || !strings.Contains(stderr, "sweep 0:") || !strings.Contains(stderr, "rank correlation 1.000") || !strings.Contains(stderr, `labels "labels": 10 classes`) {
		t.Fatalf("file order: exit %d: %s", code, stderr)
	}
	_, stderr, code = run(t, "batches", "--stats", "--sweeps", "2", labels)
	if code != 0 || !strings.Contains(stderr, "sweep 1:") || strings.Contains(stderr, "rank correlation 1.000") {
		t.Fatalf("shuffled: exit %d: %s", code, stderr)
	}
	if _, stderr, code = run(t, "batches", "--stats", "--stats-label", "nosuch", labels); code != 2 || !strings.Contains(stderr, `"nosuch"`) {
		t.Fatalf("a label stream that is not there: exit %d: %s", code, stderr)
	}
}
