package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestTasksAsProcesses converts a data set as N independent processes, each told its task
// the way a job runner tells it (Kubernetes Indexed Job, Slurm array), merges their manifests,
// and checks that the sharded data set reads exactly as the single file does, in order and
// through the randomizer with workers.
func TestTasksAsProcesses(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.cbf")
	if _, stderr, code := run(t, "demo", "-n", "900", "--dir", dir); code != 0 {
		t.Fatal(stderr)
	}
	ins := []string{filepath.Join(dir, "demo-images-idx3-ubyte"), filepath.Join(dir, "demo-labels-idx1-ubyte")}
	if _, stderr, code := run(t, append(append([]string{"convert", "--type", "float32"}, ins...), one)...); code != 0 {
		t.Fatal(stderr)
	}
	out := filepath.Join(dir, "shards")
	envs := [][]string{
		{"JOB_COMPLETION_INDEX=0"}, {"JOB_COMPLETION_INDEX=1"}, {"JOB_COMPLETION_INDEX=2"},
	}
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	for _, env := range envs {
		cmd := exec.Command(bin, "convert", "--task-count", "3", "--shards", "6", "--to", "cbf", one, out)
		cmd.Env = append(os.Environ(), env...)
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, errs = append(procs, cmd), append(errs, &e)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("task %d: %v: %s", i, err, errs[i])
		}
	}
	if _, stderr, code := run(t, "info", out); code == 0 {
		t.Fatal("a data set whose tasks are not merged reads as complete")
	} else if !strings.Contains(stderr, "merge") {
		t.Fatalf("unmerged data set: %s", stderr)
	}
	if o, stderr, code := run(t, "merge", out); code != 0 || !strings.Contains(o, "6 shards, 900 sequences") {
		t.Fatalf("merge: %s %s", o, stderr)
	}
	if o, stderr, code := run(t, "validate", out); code != 0 || strings.Count(o, ": ok") != 6 {
		t.Fatalf("validate: %s %s", o, stderr)
	}
	a, _, _ := run(t, "batches", "--sweeps", "1", "--dump", "--no-randomize", "--mb-size", "64", one)
	b, stderr, code := run(t, "batches", "--sweeps", "1", "--dump", "--no-randomize", "--mb-size", "64", filepath.Join(out, "*.cbf"))
	if code != 0 || a != b {
		t.Fatalf("sharded data set reads differently from the file, in order: %s", stderr)
	}
	// Randomized over shards by two workers: together, every sequence exactly once.
	seen := map[string]int{}
	for rank := range 2 {
		_, seqs := dumpLines(t, "--sweeps", "1", "--mb-size", "64", "--window", "2", "--seed", "3",
			"--workers", "2", "--rank", fmt.Sprint(rank), out)
		for _, mb := range seqs {
			for _, q := range mb {
				seen[q]++
			}
		}
	}
	_, all := dumpLines(t, "--sweeps", "1", "--mb-size", "900", "--no-randomize", one)
	for _, q := range all[0] {
		seen[q]--
	}
	for q, n := range seen {
		if n != 0 {
			t.Fatalf("sequence %.40s... delivered %+d times too often", q, n)
		}
	}
	// A task out of range and a shard size with tasks are usage errors.
	for _, args := range [][]string{
		{"convert", "--task", "3/3", "--to", "cbf", one, out},
		{"convert", "--task", "0/2", "--shard-size", "1MiB", "--to", "cbf", one, out},
		{"convert", "--shard-size", "lots", "--to", "cbf", one, out},
		{"merge"},
	} {
		if _, stderr, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	// Shards that disagree on their streams: the error names the first that does not match.
	mixed := filepath.Join(dir, "mixed")
	os.Mkdir(mixed, 0o755)
	for i, args := range [][]string{{"--streams", "features"}, {"--streams", "labels"}} {
		dst := filepath.Join(mixed, fmt.Sprintf("p%d.cbf", i))
		if _, stderr, code := run(t, append(append([]string{"convert"}, args...), one, dst)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	_, stderr, code = run(t, "info", mixed)
	if code != 1 || !strings.Contains(stderr, "p1.cbf") {
		t.Fatalf("mixed shards: exit %d: %s", code, stderr)
	}
}

// TestObjectStorageCLI runs the CLI against an S3-compatible server on loopback: converting
// to an object, then reading it, and a prefix of shards, exactly as the local files read.
func TestObjectStorageCLI(t *testing.T) {
	bucket, _ := testutil.S3Server(t)
	dir := t.TempDir()
	if _, stderr, code := run(t, "demo", "-n", "600", "--dir", dir); code != 0 {
		t.Fatal(stderr)
	}
	ins := []string{filepath.Join(dir, "demo-images-idx3-ubyte"), filepath.Join(dir, "demo-labels-idx1-ubyte")}
	one := filepath.Join(dir, "one.cbf")
	if _, stderr, code := run(t, append(append([]string{"convert", "--type", "float32", "--chunk-size", "100000"}, ins...), one)...); code != 0 {
		t.Fatal(stderr)
	}
	obj := bucket + "/data/one.cbf"
	if _, stderr, code := run(t, "convert", "--chunk-size", "100000", one, obj); code != 0 {
		t.Fatal(stderr)
	}
	for _, args := range [][]string{
		{"batches", "--dump", "--sweeps", "2", "--mb-size", "50", "--seed", "4"},
		{"batches", "--dump", "--sweeps", "1", "--mb-size", "64", "--workers", "2", "--rank", "1"},
		{"cat", "--json", "-n", "5"},
	} {
		a, _, _ := run(t, append(args, one)...)
		b, stderr, code := run(t, append(args, obj)...)
		if code != 0 || a != b || a == "" {
			t.Fatalf("%v over s3 differs from the local file (exit %d): %s", args, code, stderr)
		}
	}
	out, stderr, code := run(t, "info", "--json", obj)
	if code != 0 || !strings.Contains(out, `"fetched_bytes"`) {
		t.Fatalf("info of an object: %s %s", out, stderr)
	}
	if _, stderr, code := run(t, "info", bucket+"/data/missing.cbf"); code != 1 || !strings.Contains(stderr, "missing.cbf") {
		t.Fatalf("missing object: exit %d: %s", code, stderr)
	}
	// Shards straight to object storage: as one conversion, and as tasks then merge.
	want, _, _ := run(t, "batches", "--dump", "--no-randomize", "--sweeps", "1", "--mb-size", "64", one)
	if _, stderr, code := run(t, "convert", "--to", "cbf", "--shards", "3", one, bucket+"/sh1/"); code != 0 {
		t.Fatal(stderr)
	}
	for task := range 2 {
		if _, stderr, code := run(t, "convert", "--to", "cbf", "--shards", "4", "--task", fmt.Sprintf("%d/2", task), one, bucket+"/sh2/"); code != 0 {
			t.Fatal(stderr)
		}
	}
	if _, stderr, code := run(t, "info", bucket+"/sh2/"); code == 0 || !strings.Contains(stderr, "merge") {
		t.Fatalf("unmerged tasks on s3: exit %d: %s", code, stderr)
	}
	if o, stderr, code := run(t, "merge", bucket+"/sh2/"); code != 0 || !strings.Contains(o, "4 shards, 600 sequences") {
		t.Fatalf("merge on s3: %s %s", o, stderr)
	}
	for _, prefix := range []string{"/sh1/", "/sh2/"} {
		got, stderr, code := run(t, "batches", "--dump", "--no-randomize", "--sweeps", "1", "--mb-size", "64", bucket+prefix)
		if code != 0 || got != want {
			t.Fatalf("shards at %s read differently (exit %d): %s", prefix, code, stderr)
		}
	}
}

// Shards are written only when asked, or into a directory that is empty or holds an mlfeed
// data set: a directory of the user's own files is no output (exit 2, nothing written), and
// a failed conversion leaves no directory it made.
func TestDirectoryOutput(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join("..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte")
	mine := filepath.Join(dir, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "convert", labels, mine)
	entries, _ := os.ReadDir(mine)
	if code != 2 || len(entries) != 1 || !strings.Contains(stderr, "holds other files") {
		t.Fatalf("convert into a directory of other files: exit %d, %d entries: %s", code, len(entries), stderr)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "convert", "--to", "idx", labels, empty); code != 0 {
		t.Fatalf("convert into an empty directory: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "mlfeed.json")); err != nil {
		t.Fatalf("no manifest in the empty directory: %v", err)
	}
	bad := filepath.Join(dir, "bad.ctf")
	if err := os.WriteFile(bad, []byte("|x 1 2\n|x 3 zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	if _, stderr, code := run(t, "convert", "--shards", "2", "--to", "cbf", "--input", "x:dense:2", bad, fresh); code != 1 {
		t.Fatalf("a failing sharded conversion: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("a failed conversion left the directory it made: %v", err)
	}
}

// validate of a sharded data set rejects what every reader rejects: a chunk table the shard
// does not have, a format this build does not know, no shards, a shard that links outside
// the data set's directory or is a FIFO (refused without opening it: no hang).
func TestValidateManifest(t *testing.T) {
	labels := filepath.Join("..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte")
	fresh := func(t *testing.T) (string, map[string]any) {
		dir := filepath.Join(t.TempDir(), "ds")
		if _, stderr, code := run(t, "convert", "--shards", "2", "--to", "idx", labels, dir); code != 0 {
			t.Fatalf("convert: %s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "mlfeed.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	write := func(t *testing.T, dir string, m map[string]any) {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, "mlfeed.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, dir, want string) {
		t.Helper()
		_, stderr, code := run(t, "validate", dir)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Fatalf("validate: exit %d, want 1 saying %q: %s", code, want, stderr)
		}
		// The summary counts what failed: the data set, not "1 of 0 file(s)".
		if !strings.Contains(stderr, "1 of 1 argument(s)") || strings.Contains(stderr, "of 0 file(s)") {
			t.Fatalf("validate's summary: %s", stderr)
		}
	}
	t.Run("chunk table", func(t *testing.T) {
		dir, m := fresh(t)
		e := m["shards"].([]any)[0].(map[string]any)
		n := e["sequences"].(float64)
		e["chunks"] = 2
		e["chunk_table"] = [][2]float64{{n - 1, n - 1}, {1, 1}}
		write(t, dir, m)
		check(t, dir, "the manifest says")
	})
	t.Run("format", func(t *testing.T) {
		dir, m := fresh(t)
		m["format"] = "../../x"
		write(t, dir, m)
		check(t, dir, "unknown format")
		// a reader says so too, as invalid data (exit 1), not wrong usage
		if _, stderr, code := run(t, "cat", "-n", "1", dir); code != 1 || !strings.Contains(stderr, "the manifest's format") {
			t.Fatalf("cat of a data set whose manifest names an unknown format: exit %d: %s", code, stderr)
		}
	})
	t.Run("no shards", func(t *testing.T) {
		dir, m := fresh(t)
		m["shards"] = []any{}
		m["sequences"], m["samples"] = 0, 0
		write(t, dir, m)
		check(t, dir, "lists no shards")
	})
	t.Run("link outside", func(t *testing.T) {
		dir, _ := fresh(t)
		outside := filepath.Join(t.TempDir(), "elsewhere")
		b, _ := os.ReadFile(filepath.Join(dir, "part-00000.idx"))
		os.WriteFile(outside, b, 0o644)
		os.Remove(filepath.Join(dir, "part-00000.idx"))
		if err := os.Symlink(outside, filepath.Join(dir, "part-00000.idx")); err != nil {
			t.Fatal(err)
		}
		check(t, dir, "outside")
		if _, stderr, code := run(t, "cat", "-n", "1", dir); code != 1 || !strings.Contains(stderr, "outside") {
			t.Fatalf("cat of a data set with a shard linked outside: exit %d: %s", code, stderr)
		}
		// --outside-shards allows it, explicitly.
		if out, stderr, code := run(t, "validate", "--outside-shards", dir); code != 0 || strings.Count(out, ": ok") != 2 {
			t.Fatalf("validate --outside-shards: exit %d: %s %s", code, out, stderr)
		}
		if _, stderr, code := run(t, "cat", "--outside-shards", "-n", "1", dir); code != 0 {
			t.Fatalf("cat --outside-shards: exit %d: %s", code, stderr)
		}
		if out, stderr, code := run(t, "info", "--outside-shards", dir); code != 0 || !strings.Contains(out, "format:    idx") {
			t.Fatalf("info --outside-shards: exit %d: %s %s", code, out, stderr)
		}
		// but not a manifest path out of the directory, nor a FIFO
		os.Remove(filepath.Join(dir, "part-00000.idx"))
		if err := mkfifo(filepath.Join(dir, "part-00000.idx")); err == nil {
			if _, stderr, code := run(t, "validate", "--outside-shards", dir); code != 1 || !strings.Contains(stderr, "FIFO") {
				t.Fatalf("validate --outside-shards of a FIFO: exit %d: %s", code, stderr)
			}
		}
	})
	t.Run("FIFO", func(t *testing.T) {
		dir, _ := fresh(t)
		p := filepath.Join(dir, "part-00001.idx")
		os.Remove(p)
		if err := mkfifo(p); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		check(t, dir, "FIFO")
	})
}
