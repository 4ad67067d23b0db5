// Package tmpfs gives tests a small file system of their own, to fill up: a tmpfs mounted on
// a temporary directory, where the process may mount one (as root on Linux).
//
// It imports nothing of mlfeed's, so that any package's in-package tests may use it.
package tmpfs

import (
	"fmt"
	"os/exec"
	"testing"
)

// Mount mounts a tmpfs of the given size (mount(8)'s syntax: "64k", "1m") on a new temporary
// directory of t's and returns the directory; the test's cleanup unmounts it. The error says
// why it could not be mounted; callers skip the case that needs it.
func Mount(t testing.TB, size string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot mount a tmpfs here (needs root): %v: %s", err, out)
	}
	// Cleanups run last first: this unmounts before TempDir's cleanup removes the directory.
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir, nil
}
