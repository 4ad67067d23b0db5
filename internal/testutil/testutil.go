// Package testutil finds real test files: in the shared corpus (../shared/testdata beside the
// repository, or $MLFEED_SHARED/testdata), the larger collection, or else in the repository's
// own testdata/ (a small copy of some of its files, laid out the same way), so that `go test
// ./...` on a bare clone still reads real data.
package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// SharedDir returns the directory of the shared corpus: $MLFEED_SHARED if set, else the
// "shared" directory beside the repository root. It returns "" when there is none.
func SharedDir() string {
	d := filepath.Join(repoRoot(), "..", "shared")
	if e := os.Getenv("MLFEED_SHARED"); e != "" {
		d = e // a directory without testdata/ means none: a bare clone's tests
	}
	if st, err := os.Stat(filepath.Join(d, "testdata")); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// Testdata returns the path of a file or directory under the shared corpus's testdata,
// for example Testdata(t, "mnist", "t10k-labels-idx1-ubyte"). Without the shared corpus, a file
// (not a directory: tests that walk one expect all of it) comes from the repository's
// testdata/ when it is there. It skips the test with a clear message otherwise.
func Testdata(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := SharedDir()
	if d == "" {
		if p := filepath.Join(append([]string{repoRoot(), "testdata"}, elem...)...); isFile(p) {
			return p
		}
		tb.Skip("skipped: the shared test corpus (../shared/testdata beside the repository, or $MLFEED_SHARED) is absent")
	}
	p := filepath.Join(append([]string{d, "testdata"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		if q := filepath.Join(append([]string{repoRoot(), "testdata"}, elem...)...); isFile(q) {
			return q
		}
		tb.Skipf("skipped: %s is absent from the shared test corpus", p)
	}
	return p
}

// Shared returns the path of a file of the shared corpus, with no fallback to the
// repository's cut-down copies: for tests whose figures (sizes, counts, checksums) are those of
// the whole file. It skips the test when the corpus or the file is absent.
func Shared(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := SharedDir()
	if d == "" {
		tb.Skip("skipped: the shared test corpus (../shared/testdata beside the repository, or $MLFEED_SHARED) is absent")
	}
	p := filepath.Join(append([]string{d, "testdata"}, elem...)...)
	if !isFile(p) {
		tb.Skipf("skipped: %s is absent from the shared test corpus", p)
	}
	return p
}

// Dir returns a directory of test files: the shared corpus's, or without it the repository's
// copy, for tests that are content with the files the copy holds. It skips the test when
// neither is there.
func Dir(tb testing.TB, elem ...string) string {
	tb.Helper()
	if d := SharedDir(); d != "" {
		if p := filepath.Join(append([]string{d, "testdata"}, elem...)...); isDir(p) {
			return p
		}
	}
	if p := filepath.Join(append([]string{repoRoot(), "testdata"}, elem...)...); isDir(p) {
		return p
	}
	tb.Skipf("skipped: testdata/%s is absent from the shared corpus and the repository", filepath.Join(elem...))
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Local returns the path of a file in the repository's testdata/ (the small corpus that goes
// with the source), failing the test when it is absent.
func Local(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{repoRoot(), "testdata"}, elem...)...)
	if !isFile(p) {
		tb.Fatalf("%s is missing from the repository", p)
	}
	return p
}

// repoRoot returns the repository's root directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..") // internal/testutil -> repo root
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
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

// Seed adds the contents of every file matching pattern to f's seed corpus.
func Seed(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// WriteAll writes every chunk of src to w and closes w, failing tb on any error.
func WriteAll(tb testing.TB, src mlfeed.Source, w mlfeed.Sink) {
	tb.Helper()
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			tb.Fatal(err)
		}
		if err := w.WriteChunk(c); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

var cli struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// CLI builds the mlfeed command once per test binary and runs it with args. It returns
// stdout, or stdout and stderr together with the error where the command fails.
func CLI(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "mlfeed-cli-*")
		if err != nil {
			cli.err = err
			return
		}
		cli.bin = filepath.Join(dir, "mlfeed")
		if runtime.GOOS == "windows" {
			cli.bin += ".exe"
		}
		cli.out, cli.err = exec.Command("go", "build", "-o", cli.bin, filepath.Join(repoRoot(), "cmd", "mlfeed")).CombinedOutput()
	})
	if cli.err != nil {
		tb.Fatalf("building mlfeed: %v\n%s", cli.err, cli.out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cli.bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}
