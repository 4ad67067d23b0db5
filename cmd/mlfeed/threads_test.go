package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThreadsAndMemory checks that --threads and --memory change nothing in what cat,
// convert and batches produce, and that bad values are usage errors.
func TestThreadsAndMemory(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := run(t, "demo", "--dir", dir, "-n", "300"); code != 0 {
		t.Fatalf("demo failed (%d): %s", code, stderr)
	}
	images := filepath.Join(dir, "demo-images-idx3-ubyte")
	labels := filepath.Join(dir, "demo-labels-idx1-ubyte")
	for _, cmd := range [][]string{
		{"cat", "--json", images, labels},
		{"batches", "--dump", "--mb-size", "32", "--sweeps", "2", "--seed", "4", images, labels},
	} {
		want, stderr, code := run(t, cmd...)
		if code != 0 {
			t.Fatalf("%v: %d %s", cmd, code, stderr)
		}
		for _, flags := range [][]string{{"--threads", "1"}, {"--threads", "3", "--memory", "1K"}, {"--memory", "64M"}} {
			got, stderr, code := run(t, append(append([]string{cmd[0]}, flags...), cmd[1:]...)...)
			if code != 0 || got != want {
				t.Fatalf("%v with %v: exit %d, output differs: %s", cmd, flags, code, stderr)
			}
		}
	}
	for _, threads := range []string{"1", "4"} {
		out := filepath.Join(dir, "t"+threads+".cbf")
		if _, stderr, code := run(t, "convert", "--threads", threads, "--memory", "100K", "--type", "float32", images, labels, out); code != 0 {
			t.Fatalf("convert --threads %s: %d %s", threads, code, stderr)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "t1.cbf"))
	b, _ := os.ReadFile(filepath.Join(dir, "t4.cbf"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatal("convert wrote different files with 1 and 4 threads")
	}
	for _, bad := range [][]string{{"--threads", "-2"}, {"--memory", "lots"}, {"--memory", "0"}} {
		_, stderr, code := run(t, append([]string{"info"}, append(bad, images)...)...)
		if code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Fatalf("info %v: exit %d, %s", bad, code, stderr)
		}
	}
}
