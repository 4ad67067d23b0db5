//go:build unix

package testutil

import "syscall"

// CPUTime returns the process's user and system CPU time in seconds: what benchmarks report
// (as cpu-s/op) beside the wall clock, the fairer figure on a loaded machine.
func CPUTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
