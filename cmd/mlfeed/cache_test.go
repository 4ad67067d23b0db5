package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestNodeCacheCLI: --cache over an S3-compatible server on loopback. The minibatches are the
// local data set's; the first sweep fetches the data set into the cache, the second fetches
// nothing (--cache-stats says so), also for cat, info and convert, and with MLFEED_CACHE in
// place of the flag; a bad specification is exit 2.
func TestNodeCacheCLI(t *testing.T) {
	bucket, s3dir := testutil.S3Server(t)
	dir := t.TempDir()
	if _, stderr, code := run(t, "demo", "-n", "600", "--dir", dir); code != 0 {
		t.Fatal(stderr)
	}
	ins := []string{filepath.Join(dir, "demo-images-idx3-ubyte"), filepath.Join(dir, "demo-labels-idx1-ubyte")}
	local := filepath.Join(dir, "local")
	for _, out := range []string{local + "/", bucket + "/ds/"} {
		args := append(append([]string{"convert", "--to", "cbf", "--shards", "3", "--type", "float32"}, ins...), out)
		if _, stderr, code := run(t, args...); code != 0 {
			t.Fatal(stderr)
		}
	}
	cache := filepath.Join(dir, "cache") + ":1GB"
	stats := regexp.MustCompile(`cache: fetched (\d+) bytes \((\d+) objects\), hit (\d+) objects`)
	batches := []string{"batches", "--dump", "--sweeps", "1", "--mb-size", "64", "--seed", "3"}
	want, _, _ := run(t, append(batches, local)...)
	for i, wantFetched := range []bool{true, false} {
		got, stderr, code := run(t, append(batches, "--cache", cache, "--cache-stats", bucket+"/ds/")...)
		if code != 0 || got != want {
			t.Fatalf("sweep %d through the cache differs from the local data set (exit %d): %s", i, code, stderr)
		}
		m := stats.FindStringSubmatch(stderr)
		if m == nil || (m[1] != "0") != wantFetched || !wantFetched && m[3] != "4" {
			t.Fatalf("sweep %d: %q", i, stderr)
		}
	}
	for _, args := range [][]string{
		{"cat", "--json", "-n", "5"},
		{"info", "--json"},
		{"convert", "--to", "ctf"},
	} {
		if args[0] == "convert" {
			args = append(args, bucket+"/ds/", filepath.Join(dir, "out.ctf"))
		} else {
			args = append(args, bucket+"/ds/")
		}
		_, stderr, code := run(t, append([]string{args[0], "--cache", cache, "--cache-stats"}, args[1:]...)...)
		if m := stats.FindStringSubmatch(stderr); code != 0 || m == nil || m[1] != "0" {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	// validate checks each shard of a prefix from its copy in the cache; a shard changed on
	// the server after its manifest was written fails its check, and is named.
	out, stderr, code := run(t, "validate", "--cache", cache, bucket+"/ds/")
	if code != 0 || strings.Count(out, ": ok\n") != 3 || !strings.Contains(out, bucket+"/ds/part-00001.cbf: ok") {
		t.Errorf("validate: exit %d: %s%s", code, out, stderr)
	}
	p := filepath.Join(s3dir, "ds", "part-00002.cbf")
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	for _, c := range []string{filepath.Join(dir, "cache2"), "off"} {
		out, stderr, code = run(t, "validate", "--cache", c, bucket+"/ds/")
		if code != 1 || !strings.Contains(out, bucket+"/ds/part-00002.cbf: not checked") || !strings.Contains(stderr, "SHA-256") {
			t.Errorf("validate --cache %s of a changed shard: exit %d: %s%s", c, code, out, stderr)
		}
	}
	// A command that reads only part of the changed shard (cat -n 401: the first row of the
	// third shard of 200) may have printed it before the shard's check ends (or stop on the
	// check's failure in a read ahead); the failure is its exit status in any case, naming
	// the shard.
	out, stderr, code = run(t, "cat", "-n", "401", "--cache", filepath.Join(dir, "cache3"), bucket+"/ds/")
	if code != 1 || !strings.Contains(stderr, bucket+"/ds/part-00002.cbf") || !strings.Contains(stderr, "does not match its manifest") {
		t.Errorf("cat -n 401 --cache of a data set with a changed shard: exit %d: %s", code, stderr)
	}
	t.Setenv("MLFEED_CACHE", cache)
	if _, stderr, _ := run(t, append(batches, "--cache-stats", bucket+"/ds/")...); !strings.Contains(stderr, "cache: fetched 0 bytes") {
		t.Errorf("with MLFEED_CACHE: %s", stderr)
	}
	if _, stderr, _ := run(t, append(batches, "--cache", "off", "--cache-stats", bucket+"/ds/")...); strings.Contains(stderr, "cache:") {
		t.Errorf("--cache off: %s", stderr)
	}
	if _, stderr, code := run(t, append(batches, "--cache", dir+":0", bucket+"/ds/")...); code != 2 || !strings.Contains(stderr, "--cache") {
		t.Errorf("--cache DIR:0: exit %d: %s", code, stderr)
	}
}
