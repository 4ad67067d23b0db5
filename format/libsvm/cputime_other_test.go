//go:build !unix

package libsvm

// cpuSeconds returns 0: CPU time is measured on Unix only.
func cpuSeconds() float64 { return 0 }
