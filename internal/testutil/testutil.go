// Package testutil finds the shared test corpus (../shared/testdata beside the repository, or
// $MLFEED_SHARED/testdata) for tests that read real files in place.
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
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
