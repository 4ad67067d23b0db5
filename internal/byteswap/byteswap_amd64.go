package byteswap

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// masks are VPSHUFB's shuffles that reverse 2-, 4- and 8-byte elements, for each 16-byte lane.
var masks = func() (m [3][32]byte) {
	for k, sz := range []int{2, 4, 8} {
		for i := range 32 {
			m[k][i] = byte(i - i%sz + sz - 1 - i%sz)
		}
	}
	return m
}()

// vector swaps the longest prefix of src a multiple of 128 bytes long into dst with AVX2 and
// returns its length (0 without AVX2).
func vector(dst, src []byte, sz int) int {
	n := len(src) &^ 127
	if !hasAVX2 || n == 0 {
		return 0
	}
	m := &masks[0]
	switch sz {
	case 4:
		m = &masks[1]
	case 8:
		m = &masks[2]
	}
	swapAVX2(&dst[0], &src[0], n, &m[0])
	return n
}

// swapAVX2 shuffles n bytes (a multiple of 128) from src to dst with mask.
//
//go:noescape
func swapAVX2(dst, src *byte, n int, mask *byte)
