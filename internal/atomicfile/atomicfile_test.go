package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("target visible before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // a no-op after Commit
	if b, _ := os.ReadFile(target); string(b) != "partial" {
		t.Fatalf("target holds %q", b)
	}
	g, _ := Create(target)
	g.WriteString("replacement that fails")
	g.Abort()
	if b, _ := os.ReadFile(target); string(b) != "partial" {
		t.Fatal("Abort touched the target")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}
