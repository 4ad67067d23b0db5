package stats_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/npy"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/stats"
)

// makeNumpyData has numpy write, from a fixed seed, arrays that exercise every figure: float32
// features with NaN, infinities and zeros over a wide range; float64 values of both signs over
// many magnitudes; int64 labels; int32 values over a range too wide to count by value; the
// float32 features as float64, some blocks not float32's; int16 values whose range moves;
// int32 labels below zero; uint64 values small, then moving, then above math.MaxInt64;
// uint8 values in runs of 97.
const makeNumpyData = `
import sys, numpy as np
d = sys.argv[1]
r = np.random.default_rng(32)
n = 20000
f = (r.normal(3, 10, (n, 7))).astype(np.float32)
f[r.random((n, 7)) < 0.01] = np.nan
f[r.random((n, 7)) < 0.005] = np.inf
f[r.random((n, 7)) < 0.005] = -np.inf
f[r.random((n, 7)) < 0.05] = 0
f[:, 3] = np.round(f[:, 3])
np.save(d + "/f.npy", f)
np.save(d + "/g.npy", r.choice([-1, 1], n) * np.exp(r.uniform(-30, 30, n)) + 1e6)
np.save(d + "/l.npy", r.integers(0, 10, n).astype(np.int64))
np.save(d + "/b.npy", r.integers(-128, 128, (n, 3)).astype(np.int8))
np.save(d + "/w.npy", r.integers(-2**31, 2**31 - 1, n).astype(np.int32))
h = f.astype(np.float64)
h[5000:5300, 0] += 1e-9
h[7] = -0.0
np.save(d + "/h.npy", h)
q = n // 4
np.save(d + "/s.npy", np.concatenate([r.integers(-300, -100, (q, 2)), r.integers(0, 256, (q, 2)),
    r.integers(1000, 1100, (q, 2)), r.integers(-32768, 32767, (n - 3 * q, 2))]).astype(np.int16))
np.save(d + "/i.npy", r.integers(-50, 50, n).astype(np.int32))
u = np.concatenate([r.integers(0, 200, (n - 2000, 2)), r.integers(5000, 5100, (1000, 2)),
    r.integers(2**63, 2**64 - 1, (1000, 2), dtype=np.uint64)])
np.save(d + "/u.npy", u.astype(np.uint64))
np.save(d + "/p.npy", np.repeat(r.integers(0, 256, 3 * n // 97 + 1), 97)[:3 * n].reshape(n, 3).astype(np.uint8))
`

// TestNumpy checks every figure against numpy's on the same data: counts, minimum and maximum
// exactly, the mean against the correctly rounded sum, the deviation, the histograms'
// counts for the edges reported, the classes.
func TestNumpy(t *testing.T) {
	py := testutil.Python(t, "numpy")
	dir := t.TempDir()
	if out, err := exec.Command(py, "-c", makeNumpyData, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	var files []string
	for _, f := range []string{"f.npy", "g.npy", "l.npy", "b.npy", "w.npy", "h.npy", "s.npy", "i.npy", "u.npy", "p.npy"} {
		files = append(files, filepath.Join(dir, f))
	}
	checkNumpy(t, py, files, &stats.Options{Bins: 37})
}

// TestNumpyMNIST checks the figures of the MNIST test set (uint8 pixels, uint8 labels).
func TestNumpyMNIST(t *testing.T) {
	py := testutil.Python(t, "numpy")
	images := testutil.Testdata(t, "mnist", "t10k-images-idx3-ubyte.gz")
	labels := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte.gz")
	checkNumpy(t, py, []string{images, labels}, nil)
}

func checkNumpy(t *testing.T, py string, files []string, opts *stats.Options) {
	t.Helper()
	src, err := dataset.OpenFiles(files, "", &format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	res, err := stats.Compute(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "stats.json")
	if err := os.WriteFile(out, js, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join("testdata", "check_numpy.py"), out}
	for i, f := range files {
		args = append(args, res.Streams[i].Name+"="+f)
	}
	if msg, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		t.Fatalf("numpy disagrees: %v\n%s", err, msg)
	}
}
