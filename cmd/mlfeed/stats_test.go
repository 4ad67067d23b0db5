package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/stats"
)

func statsJSON(t *testing.T, args ...string) *stats.Result {
	t.Helper()
	out, errs, code := run(t, append([]string{"stats", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("mlfeed stats %v: exit %d\n%s", args, code, errs)
	}
	var r stats.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	return &r
}

func TestStats(t *testing.T) {
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte.gz")
	r := statsJSON(t, labels)
	// 10000 labels in MNIST's file, 2000 in the repository's cut: as info counts them.
	infoOut, _, _ := run(t, "info", "--json", labels)
	var info struct{ Sequences int64 }
	if err := json.Unmarshal([]byte(infoOut), &info); err != nil || info.Sequences == 0 {
		t.Fatalf("info --json: %v\n%s", err, infoOut)
	}
	if r.Sequences != info.Sequences || len(r.Streams) != 1 || r.Streams[0].Classes == nil || r.Streams[0].Classes.Distinct != 10 {
		t.Fatalf("%+v", r)
	}
	// The same figures from shards of the same data.
	dir := filepath.Join(t.TempDir(), "shards")
	if _, errs, code := run(t, "convert", "-q", "--shards", "3", "--to", "idx", labels, dir); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	if s := statsJSON(t, dir); !reflect.DeepEqual(s.Streams, r.Streams) || s.Sequences != r.Sequences {
		t.Errorf("shards: %+v\nfile: %+v", s.Streams, r.Streams)
	}
	// --limit and --sample.
	if s := statsJSON(t, "--limit", "100", labels); s.Sequences != 100 || s.Limit != 100 {
		t.Errorf("--limit 100: %d sequences", s.Sequences)
	}
	a, b := statsJSON(t, "--sample", "500", "--seed", "9", labels), statsJSON(t, "--sample", "500", "--seed", "9", labels)
	if a.Sequences != 500 || !reflect.DeepEqual(a, b) {
		t.Errorf("--sample 500 twice: %+v, %+v", a, b)
	}
	// The text output names every stream and the classes.
	out, _, code := run(t, "stats", labels)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("stream labels: dense uint8 1, %d samples", info.Sequences)) || !strings.Contains(out, "classes (integer): 10 distinct") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestStatsKinds(t *testing.T) {
	// A sparse CBF file and an IDV file of every scalar type: every stream described.
	for _, f := range []string{"cntk/cbf/10x10_sparse.bin", "idv/datatypes.idv"} {
		r := statsJSON(t, testutil.Testdata(t, strings.Split(f, "/")...))
		for _, s := range r.Streams {
			if s.Samples != r.Sequences && s.Storage == "dense" && r.Samples == r.Sequences {
				t.Errorf("%s: stream %s has %d samples, %d sequences", f, s.Name, s.Samples, r.Sequences)
			}
			if s.Numeric == nil && s.Text == nil && s.Bytes == nil && !strings.Contains("complex64 complex128 duration datetime datetimeoffset rowid", s.Type) {
				t.Errorf("%s: stream %s (%s) has no figures", f, s.Name, s.Type)
			}
			if s.Storage == "sparse" && s.Sparse == nil {
				t.Errorf("%s: sparse stream %s without sparse figures", f, s.Name)
			}
		}
	}
}

func TestStatsExitStatuses(t *testing.T) {
	dir := t.TempDir()
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte.gz")
	bad := filepath.Join(dir, "bad-idx1-ubyte")
	os.WriteFile(bad, []byte{0, 0, 8, 1, 0, 0, 0, 9, 1}, 0o644)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"stats"}, 2},
		{[]string{"stats", "--limit", "-1", labels}, 2},
		{[]string{"stats", "--bins", "0", labels}, 2},
		{[]string{"stats", "--top", "5000", labels}, 2},
		{[]string{"stats", filepath.Join(dir, "absent")}, 1},
		{[]string{"stats", bad}, 1},
	} {
		if _, errs, code := run(t, c.args...); code != c.code {
			t.Errorf("mlfeed %v: exit %d, want %d\n%s", c.args, code, c.code, errs)
		}
	}
}
