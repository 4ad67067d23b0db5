package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goTool returns the go command, or skips the test when there is none.
func goTool(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	return gobin
}

// `go install github.com/mlfeed/mlfeed/cmd/mlfeed@latest` refuses a module whose go.mod has
// replace or exclude directives, and needs the module path to be the one users type.
func TestGoModAllowsGoInstall(t *testing.T) {
	out, err := exec.Command(goTool(t), "mod", "edit", "-json", "../../go.mod").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Replace []json.RawMessage
		Exclude []json.RawMessage
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if mod.Module.Path != "github.com/mlfeed/mlfeed" {
		t.Errorf("go.mod names module %q, want github.com/mlfeed/mlfeed (the path of go install and the docs)", mod.Module.Path)
	}
	if len(mod.Replace) > 0 {
		t.Errorf("go.mod has %d replace directives: go install ...@latest refuses such a module", len(mod.Replace))
	}
	if len(mod.Exclude) > 0 {
		t.Errorf("go.mod has %d exclude directives: go install ...@latest refuses such a module", len(mod.Exclude))
	}
}

// The CLI builds without cgo (the release binaries and go install on a machine without a C
// compiler), and a version and commit stamped at link time, as scripts/release.sh stamps them,
// are what `mlfeed version` prints.
func TestBuildsWithoutCgoAndStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI (-short)")
	}
	exe := filepath.Join(t.TempDir(), "mlfeed")
	cmd := exec.Command(goTool(t), "build", "-trimpath", "-o", exe, "-ldflags",
		"-X main.version=9.8.7 -X main.commit=0123456789abcdef -X main.commitTime=2026-01-02T03:04:05Z -X main.modified=true", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/mlfeed: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "version", "--json").Output()
	if err != nil {
		t.Fatalf("mlfeed version --json: %v", err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("mlfeed version --json: %v\n%s", err, out)
	}
	if b.Version != "9.8.7" || b.Commit != "0123456789abcdef" || b.Time != "2026-01-02T03:04:05Z" || !b.Modified {
		t.Errorf("mlfeed version --json = %+v, want the stamped version 9.8.7, commit, time and modified", b)
	}
	out, err = exec.Command(exe, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "mlfeed 9.8.7\ncommit:   0123456789abcdef (2026-01-02T03:04:05Z) with uncommitted changes\n") {
		t.Errorf("mlfeed --version = %q, %v", out, err)
	}
}
