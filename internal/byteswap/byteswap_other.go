//go:build !amd64

package byteswap

// vector does nothing where no vector code is written: Into swaps word by word.
func vector(dst, src []byte, sz int) int { return 0 }
