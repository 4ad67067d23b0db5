//go:build unix

package atomicfile

import (
	"io/fs"
	"sync"
	"syscall"
)

var umaskOnce = sync.OnceValue(func() fs.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return fs.FileMode(m) & fs.ModePerm
})

// umask returns the process's file mode creation mask.
func umask() fs.FileMode { return umaskOnce() }

// processAlive reports whether a process with this id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
