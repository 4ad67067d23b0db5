package mds_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// pick keeps the streams named (comma-separated) of cat --json's lines, in name order.
func pick(out, streams string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) != nil {
			return "not JSON: " + line
		}
		keep := map[string]json.RawMessage{}
		for _, s := range strings.Split(streams, ",") {
			keep[s] = m[s]
		}
		j, _ := json.Marshal(keep)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The command line on MDSWriter's data sets: info, cat, batches, validate, the exit codes of
// refused data, and round trips through IDX, TFRecord, Parquet and npz.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	scalars, arrays := filepath.Join("testdata", "scalars"), filepath.Join("testdata", "arrays")
	for _, in := range []string{scalars, filepath.Join(scalars, "index.json")} {
		out, err := testutil.CLI(t, "info", "--json", in)
		if err != nil || !strings.Contains(out, `"format": "mds"`) || !strings.Contains(out, `"sequences": 40`) {
			t.Fatalf("info %s: %v\n%s", in, err, out)
		}
	}
	var out string
	var err error
	out, err = testutil.CLI(t, "cat", "--json", "-n", "2", scalars)
	if out = pick(out, "b,f16,si,sf"); err != nil || strings.TrimSpace(out) != `{"b":[[""]],"f16":[[-2]],"sf":[[0]],"si":[[-100000000000000000]]}
{"b":[["AA=="]],"f16":[[-1.875]],"sf":[[-1e+16]],"si":[[-99999999999999999]]}` {
		t.Fatalf("cat: %v\n%s", err, out)
	}
	out, err = testutil.CLI(t, "batches", "--dump", "--mb-size", "3", "--no-randomize", "--max-samples", "3", arrays)
	if err != nil || !strings.Contains(out, `"dyn.shape":[[[1,2]]]`) || !strings.Contains(out, `"lpil":[[["AQAAAAEAAAABAAAATAA="],["AQAAAAEAAAABAAAATAE="]]]`) {
		t.Fatalf("batches: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "validate", scalars, arrays); err != nil || !strings.Contains(out, "2 ok") {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "formats"); err != nil || !strings.Contains(out, "mds") {
		t.Fatalf("formats: %v\n%s", err, out)
	}
	// pkl: exit 2; a shard beyond the memory budget: exit 1, naming the option.
	if out, err = testutil.CLI(t, "cat", filepath.Join("testdata", "pickled")); exitCode(err) != 2 || !strings.Contains(out, "pkl") {
		t.Fatalf("pkl: %v\n%s", err, out)
	}
	if out, err = testutil.CLI(t, "cat", "--opt", "max_memory=1000", arrays); exitCode(err) != 1 || !strings.Contains(out, "max_memory") || !strings.Contains(out, "shard.00000.mds.zstd") {
		t.Fatalf("max_memory: %v\n%s", err, out)
	}

	dir := t.TempDir()
	same := func(what, a, b string, streams ...string) {
		t.Helper()
		x, err1 := testutil.CLI(t, "cat", "--json", a)
		y, err2 := testutil.CLI(t, "cat", "--json", b)
		if len(streams) > 0 {
			x, y = pick(x, streams[0]), pick(y, streams[0])
		}
		if err1 != nil || err2 != nil || x != y || x == "" {
			t.Fatalf("%s: %s and %s differ (%v, %v)\n%s\n%s", what, a, b, err1, err2, x, y)
		}
	}
	conv := func(args ...string) {
		t.Helper()
		if out, err := testutil.CLI(t, append([]string{"convert", "-q"}, args...)...); err != nil {
			t.Fatalf("convert %q: %v\n%s", args, err, out)
		}
	}
	// MDS -> Parquet -> MDS, every column.
	pq, back := filepath.Join(dir, "s.parquet"), filepath.Join(dir, "back")
	conv(scalars, pq)
	conv("--to", "mds", pq, back)
	same("parquet", scalars, back)
	if b, _ := os.ReadFile(filepath.Join(back, "index.json")); !strings.Contains(string(b), `"column_names": ["b", "f16", "f32"`) {
		t.Fatalf("index.json: %s", b)
	}
	// MDS -> npz -> MDS, the numbers.
	nums := "f32,f64,i16,i32,i64,i8,u16,u32,u64,u8,si,sf"
	npz, back2 := filepath.Join(dir, "s.npz"), filepath.Join(dir, "back2")
	conv("--streams", nums, scalars, npz)
	conv("--to", "mds", npz, back2)
	same("npz", scalars, back2, nums)
	// MDS -> TFRecord -> MDS, what TFRecord holds.
	tf, back3 := filepath.Join(dir, "s.tfrecord"), filepath.Join(dir, "back3")
	conv("--streams", "b,f32,i64,si", scalars, tf)
	conv("--to", "mds", tf, back3)
	same("tfrecord", scalars, back3, "b,f32,i64,si")
	// TFX's penguins -> MDS -> TFRecord.
	penguin := filepath.Join("..", "tfrecord", "testdata", "penguin_train.tfrecord.gz")
	pm, pt := filepath.Join(dir, "penguin"), filepath.Join(dir, "penguin.tfrecord")
	conv("--to", "mds", "--write-opt", "compression=zstd", penguin, pm)
	conv(pm, pt)
	same("penguin", penguin, pt)
	// MDS ndarray 4x3 -> IDX -> MDS.
	idx, back4 := filepath.Join(dir, "fixed.idx"), filepath.Join(dir, "back4")
	conv("--streams", "fixed", arrays, idx)
	conv("--to", "mds", idx, back4)
	if out, err := testutil.CLI(t, "info", back4); err != nil || !strings.Contains(out, "uint8 4x3") {
		t.Fatalf("idx back: %v\n%s", err, out)
	}
	x, _ := testutil.CLI(t, "cat", "--json", arrays)
	y, _ := testutil.CLI(t, "cat", "--json", back4)
	if x = strings.ReplaceAll(pick(x, "fixed"), `"fixed"`, `"features"`); x != y || y == "" { // IDX names its stream
		t.Fatalf("idx: %s\n%s", x, y)
	}
	// An output directory that holds files is refused (exit 2), and nothing is written.
	if out, err := testutil.CLI(t, "convert", "-q", "--to", "mds", scalars, back); exitCode(err) != 2 {
		t.Fatalf("non-empty output: %v\n%s", err, out)
	}
}
