package byteswap

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

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

// vector swaps a prefix of src into dst with AVX2 and returns its length (0 without AVX2): a
// multiple of 128 bytes, after as many elements one by one as bring dst to a 32-byte boundary
// when its misalignment is whole elements (a 32-byte store across two cache lines costs about
// two: swapping a shuffled minibatch into buffers 16 bytes off the boundary took twice as long).
func vector(dst, src []byte, sz int) int {
	if !hasAVX2 || len(src) < 128 {
		return 0
	}
	h := int(-uintptr(unsafe.Pointer(&dst[0])) & 31)
	if h%sz != 0 || len(src)-h < 128 {
		h = 0
	}
	elems(dst[:h], src[:h], sz)
	n := (len(src) - h) &^ 127
	m := &masks[0]
	switch sz {
	case 4:
		m = &masks[1]
	case 8:
		m = &masks[2]
	}
	swapAVX2(&dst[h], &src[h], n, &m[0])
	return h + n
}

// swapAVX2 shuffles n bytes (a multiple of 128) from src to dst with mask.
//
//go:noescape
func swapAVX2(dst, src *byte, n int, mask *byte)
