//go:build !unix

package binsparse

import "testing"

// ReportCPU is reportCPU, for the benchmarks of package binsparse_test.
var ReportCPU = reportCPU

// reportCPU runs fn (CPU time is measured on Unix only).
func reportCPU(b *testing.B, fn func()) { fn() }
