package npy

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil/tmpfs"
)

// The temporary files data waits in (an .npz member, a .npy of unknown length) say so when
// they fail: a missing TempDir, and a full disk (a 64 KiB tmpfs, where the process may mount
// one) while the data is held and while a member is deflated.
func TestSpoolErrors(t *testing.T) {
	sc, c := benchChunk(1000)
	_, err := NewWriter(io.Discard, sc, &WriterOptions{TempDir: filepath.Join(t.TempDir(), "missing")})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("a missing TempDir: %v, want an error about the temporary file", err)
	}
	dir, err := tmpfs.Mount(t, "64k")
	if err != nil {
		t.Skip(err)
	}
	for _, opts := range []WriterOptions{{TempDir: dir}, {TempDir: dir, Archive: true, Compress: true}} {
		w, err := NewWriter(io.Discard, sc, &opts)
		if err != nil {
			t.Fatal(err)
		}
		if err = w.WriteChunk(c); err == nil {
			err = w.Close()
		}
		w.Close()
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "temporary file") {
			t.Errorf("%+v on a full disk: %v, want ENOSPC about the temporary file", opts, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("left behind: %v", ents)
		}
	}
}
