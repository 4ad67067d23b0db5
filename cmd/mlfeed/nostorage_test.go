package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/storage"
)

// A CLI built with -tags mlfeed_nostorage (scripts/demo.sh's build) leaves the object-storage
// drivers out: it says so in `mlfeed version`, and for an s3://, gs:// or azblob:// URL it says
// that this build has no drivers and how to get one that has them (exit 2), not which Go
// package to import. The default build lists its drivers.
func TestNoStorageBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI (-short)")
	}
	if strings.Contains(os.Getenv("MLFEED_TAGS"), "mlfeed_nostorage") {
		t.Skip("MLFEED_TAGS has mlfeed_nostorage: the default build is not under test")
	}
	var full buildInfo
	stdout, stderr, code := run(t, "version", "--json")
	if code != 0 || json.Unmarshal([]byte(stdout), &full) != nil {
		t.Fatalf("mlfeed version --json: exit %d\n%s%s", code, stdout, stderr)
	}
	if !slices.Equal(full.Storage, []string{"azblob", "gs", "s3"}) {
		t.Errorf("the default build's version lists storage %q, want azblob gs s3", full.Storage)
	}

	exe := filepath.Join(t.TempDir(), "mlfeed")
	if out, err := exec.Command(goTool(t), "build", "-tags", "mlfeed_nostorage", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mlfeed_nostorage: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "version", "--json").Output()
	if err != nil {
		t.Fatalf("mlfeed version --json: %v", err)
	}
	if !strings.Contains(string(out), `"storage": []`) {
		t.Errorf("mlfeed version --json of a build without drivers: want \"storage\": [], got\n%s", out)
	}
	out, err = exec.Command(exe, "version").Output()
	if err != nil || !strings.Contains(string(out), "\nstorage:  none (built with -tags mlfeed_nostorage") {
		t.Errorf("mlfeed version of a build without drivers = %q, %v", out, err)
	}
	for _, args := range [][]string{
		{"info", "s3://bucket/train.idx"},
		{"cat", "-n", "1", "gs://bucket/train/"},
		{"convert", "azblob://container/x.npy", filepath.Join(t.TempDir(), "x.cbf")},
		{"validate", "s3://bucket/train/"},
	} {
		cmd := exec.Command(exe, args...)
		var errb strings.Builder
		cmd.Stderr = &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := errb.String()
		scheme, _, _ := strings.Cut(args[len(args)-1], "://")
		if args[0] == "convert" {
			scheme, _, _ = strings.Cut(args[1], "://")
		}
		if code != 2 || !strings.Contains(msg, "no storage driver for the URL's scheme "+scheme+":// in this build of mlfeed: it was built without object-storage drivers") ||
			!strings.Contains(msg, "mlfeed: hint: a build with s3://, gs:// and azblob://: `go build -o mlfeed ./cmd/mlfeed`") ||
			strings.Contains(msg, "import _") || strings.Contains(msg, "panic") {
			t.Errorf("mlfeed %s without drivers: exit %d (want 2), stderr:\n%s", strings.Join(args, " "), code, msg)
		}
	}
}

// noDriverError puts the CLI's words in place of storage's NoDriverError (no advice to Go
// programmers), keeps what wraps it, and leaves other errors alone.
func TestNoDriverErrorInPlace(t *testing.T) {
	inner := &storage.NoDriverError{Name: "s3://b/k", Scheme: "s3", Package: "github.com/mlfeed/mlfeed/storage/s3"}
	err := noDriverError(fmt.Errorf("opening: %w: while planning", inner))
	want := "opening: s3://b/k: no storage driver for the URL's scheme s3://: while planning"
	if len(storage.Schemes()) == 0 {
		want = "opening: s3://b/k: no storage driver for the URL's scheme s3:// in this build of mlfeed: it was built without object-storage drivers (-tags mlfeed_nostorage, as scripts/demo.sh builds it): while planning"
	}
	if err.Error() != want || !errors.Is(err, storage.ErrNoDriver) {
		t.Errorf("noDriverError = %q (wraps ErrNoDriver: %v), want %q", err, errors.Is(err, storage.ErrNoDriver), want)
	}
	other := errors.New("x.idx: no such file")
	bare := fmt.Errorf("x: %w", storage.ErrNoDriver)
	if noDriverError(other) != other || noDriverError(bare) != bare || noDriverError(nil) != nil {
		t.Error("noDriverError changed an error that is not a storage.NoDriverError")
	}
}
