//go:build unix

package main

import (
	"os/signal"
	"syscall"
)

// ignoreFileSizeSignal makes a write beyond the file size limit (RLIMIT_FSIZE, ulimit -f)
// fail with EFBIG, reported like any write error, instead of killing mlfeed with SIGXFSZ
// and leaving its temporary file behind.
func ignoreFileSizeSignal() { signal.Ignore(syscall.SIGXFSZ) }
