package mmap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	os.WriteFile(name, []byte("hello, mapped world"), 0o644)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Map(f, 19)
	if err == ErrUnsupported {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Bytes()) != "hello, mapped world" {
		t.Fatalf("%q", r.Bytes())
	}
	if err := r.Close(); err != nil || r.Close() != nil {
		t.Fatal("Close twice")
	}
	empty, err := Map(f, 0)
	if err != nil || len(empty.Bytes()) != 0 {
		t.Fatal("empty map")
	}
}
