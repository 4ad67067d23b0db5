package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxReleaseSize bounds the CLI as scripts/release.sh builds it (stripped, -trimpath, no cgo):
// 27.6 MB with every format and storage driver when this was written (54 MB before Parquet
// left arrow-go's pqarrow and compute, and the templates left); the goal is 35 MB.
const maxReleaseSize = 32e6

// The CLI as a release builds it stays small: at most maxReleaseSize, and no package in it
// calls methods by name through reflect (text/template, html/template do), which makes the
// linker keep every exported method of every type the binary links (10 MB more).
func TestReleaseSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI (-short)")
	}
	exe := filepath.Join(t.TempDir(), "mlfeed")
	cmd := exec.Command(goTool(t), "build", "-trimpath", "-o", exe, "-ldflags", "-s -w -dumpdep", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var deps bytes.Buffer
	cmd.Stderr = &deps
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build ./cmd/mlfeed: %v\n%.2000s", err, deps.String())
	}
	if i := bytes.Index(deps.Bytes(), []byte("<ReflectMethod>")); i >= 0 {
		line := deps.Bytes()[bytes.LastIndexByte(deps.Bytes()[:i], '\n')+1:]
		line, _, _ = bytes.Cut(line, []byte("\n"))
		t.Errorf("the CLI reaches a reflective method call, so unused methods are linked: %s", line)
	}
	st, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxReleaseSize {
		t.Errorf("the release CLI is %.1f MB, more than %.0f MB", float64(st.Size())/1e6, maxReleaseSize/1e6)
	}
	t.Logf("release CLI: %.1f MB", float64(st.Size())/1e6)
}
