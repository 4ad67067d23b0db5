//go:build cgo

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxLibrarySize bounds libmlfeed.so as the wheel holds it (scripts/release.sh, python/setup.py:
// -buildmode=c-shared -trimpath -ldflags "-s -w"): 29.4 MB when this was written (58 MB
// unstripped before Parquet left arrow-go's pqarrow and compute); the goal is 35 MB.
const maxLibrarySize = 33e6

// The Python package's library as a release builds it stays small, and reaches no reflective
// method call (which makes the linker keep every exported method it links).
func TestLibrarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shared library (-short)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	if out, _ := exec.Command(gobin, "env", "CGO_ENABLED").Output(); string(bytes.TrimSpace(out)) != "1" {
		t.Skip("cgo is off (no C compiler): -buildmode=c-shared needs it")
	}
	lib := filepath.Join(t.TempDir(), "libmlfeed.so")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", lib, "-ldflags", "-s -w -dumpdep", ".")
	var deps bytes.Buffer
	cmd.Stderr = &deps
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -buildmode=c-shared ./capi: %v\n%.2000s", err, deps.String())
	}
	if i := bytes.Index(deps.Bytes(), []byte("<ReflectMethod>")); i >= 0 {
		line := deps.Bytes()[bytes.LastIndexByte(deps.Bytes()[:i], '\n')+1:]
		line, _, _ = bytes.Cut(line, []byte("\n"))
		t.Errorf("the library reaches a reflective method call, so unused methods are linked: %s", line)
	}
	st, err := os.Stat(lib)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxLibrarySize {
		t.Errorf("libmlfeed.so is %.1f MB, more than %.0f MB", float64(st.Size())/1e6, maxLibrarySize/1e6)
	}
	t.Logf("libmlfeed.so: %.1f MB", float64(st.Size())/1e6)
}
