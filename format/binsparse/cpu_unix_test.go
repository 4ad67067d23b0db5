//go:build unix

package binsparse

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// ReportCPU is reportCPU, for the benchmarks of package binsparse_test.
var ReportCPU = reportCPU

// reportCPU runs fn and reports the CPU time per iteration (all threads) as "cpu-s/op": on a
// busy machine wall-clock times swing, CPU times much less.
func reportCPU(b *testing.B, fn func()) {
	t := cpuTime()
	fn()
	b.ReportMetric((cpuTime()-t).Seconds()/float64(b.N), "cpu-s/op")
}
