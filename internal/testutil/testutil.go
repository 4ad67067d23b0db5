// Package testutil finds the shared test corpus (../shared/testdata beside the repository, or
// $MLFEED_SHARED/testdata) for tests that read real files in place.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// SharedDir returns the directory of the shared corpus: $MLFEED_SHARED if set, else the
// "shared" directory beside the repository root. It returns "" when there is none.
func SharedDir() string {
	if d := os.Getenv("MLFEED_SHARED"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	root := filepath.Join(filepath.Dir(file), "..", "..") // internal/testutil -> repo root
	d := filepath.Join(root, "..", "shared")
	if st, err := os.Stat(filepath.Join(d, "testdata")); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// Testdata returns the path of a file or directory under the shared corpus's testdata,
// for example Testdata(t, "mnist", "t10k-labels-idx1-ubyte"). It skips the test with a clear
// message when the corpus or the file is absent.
func Testdata(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := SharedDir()
	if d == "" {
		tb.Skip("skipped: the shared test corpus (../shared/testdata beside the repository, or $MLFEED_SHARED) is absent")
	}
	p := filepath.Join(append([]string{d, "testdata"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("skipped: %s is absent from the shared test corpus", p)
	}
	return p
}

// Spec returns the path of a spec document under the shared corpus, skipping when absent.
func Spec(tb testing.TB, name string) string {
	tb.Helper()
	d := SharedDir()
	if d == "" {
		tb.Skip("skipped: the shared corpus (../shared) is absent")
	}
	return filepath.Join(d, "specs", name)
}

// Python returns the path of Debian's /usr/bin/python3 (where python3-numpy, python3-h5py and
// python3-scipy install; the python3 on PATH may be another build) when it can import every
// module named, for tests that use those libraries as independent checkers. It skips the test
// with a message saying what to install otherwise.
func Python(tb testing.TB, modules ...string) string {
	tb.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		tb.Skip("skipped: /usr/bin/python3 is absent (apt-get install python3 python3-numpy python3-h5py python3-scipy)")
	}
	if len(modules) > 0 {
		if out, err := exec.Command(py, "-c", "import "+strings.Join(modules, ", ")).CombinedOutput(); err != nil {
			tb.Skipf("skipped: /usr/bin/python3 cannot import %s (apt-get install python3-numpy python3-h5py python3-scipy): %s",
				strings.Join(modules, ", "), out)
		}
	}
	return py
}

// FirstDiff returns the offset of the first byte where a and b differ, or the length of the
// shorter when one is a prefix of the other.
func FirstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
