// Package fsum sums float32 values fast, for the CBF benchmarks: the sum must touch every value
// without making the benchmark measure one chain of dependent additions.
package fsum

// Float32s adds v up with eight accumulators in registers (an array of accumulators would live
// in memory and be about three times slower).
func Float32s(v []float32) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for ; len(v) >= 8; v = v[8:] {
		w := v[:8:8]
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
		s4 += w[4]
		s5 += w[5]
		s6 += w[6]
		s7 += w[7]
	}
	s := float64(s0) + float64(s1) + float64(s2) + float64(s3) + float64(s4) + float64(s5) + float64(s6) + float64(s7)
	for _, x := range v {
		s += float64(x)
	}
	return s
}
