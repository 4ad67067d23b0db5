package tmpfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The mounted file system holds what its size allows and no more.
func TestMount(t *testing.T) {
	dir, err := Mount(t, "64k")
	if err != nil {
		t.Skip(err)
	}
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Write(make([]byte, 1<<20))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing 1 MiB to a 64 KiB tmpfs: %v, want ENOSPC", err)
	}
}
