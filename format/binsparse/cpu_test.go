package binsparse

import (
	"testing"

	"github.com/mlfeed/mlfeed/internal/cputime"
)

// ReportCPU is reportCPU, for the benchmarks of package binsparse_test.
var ReportCPU = reportCPU

// reportCPU runs fn and reports the CPU time per iteration (all threads) as "cpu-s/op": on a
// busy machine wall-clock times swing, CPU times much less.
func reportCPU(b *testing.B, fn func()) {
	t := cputime.Used()
	fn()
	b.ReportMetric((cputime.Used()-t).Seconds()/float64(b.N), "cpu-s/op")
}
