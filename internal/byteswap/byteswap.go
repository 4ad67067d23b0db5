// Package byteswap reverses the byte order of fixed-size elements: big-endian data (IDX
// files) to the little-endian values of the data model, and back.
package byteswap

import (
	"encoding/binary"
	"math/bits"
)

// Into copies src to dst reversing the byte order of each sz-byte element (2, 4 or 8); dst
// must hold len(src) bytes and may be src itself. On amd64 with AVX2 it shuffles 128 bytes
// at a time (VPSHUFB); elsewhere, and for the rest, it works on 64-bit words, four at a
// time, whatever the alignment: the loads and stores of encoding/binary compile to single
// instructions, and reversing a word's bytes then rotating (or masking) puts each element's
// bytes back in place.
func Into(dst, src []byte, sz int) {
	dst = dst[:len(src)]
	var rev func(uint64) uint64
	switch sz {
	case 2:
		rev = swap16x4
	case 4:
		rev = swap32x2
	case 8:
		rev = bits.ReverseBytes64
	default:
		return
	}
	k := vector(dst, src, sz)
	for ; k+32 <= len(src); k += 32 {
		s, d := src[k:k+32:k+32], dst[k:k+32:k+32]
		switch sz {
		case 2:
			le.PutUint64(d[0:], swap16x4(le.Uint64(s[0:])))
			le.PutUint64(d[8:], swap16x4(le.Uint64(s[8:])))
			le.PutUint64(d[16:], swap16x4(le.Uint64(s[16:])))
			le.PutUint64(d[24:], swap16x4(le.Uint64(s[24:])))
		case 4:
			le.PutUint64(d[0:], swap32x2(le.Uint64(s[0:])))
			le.PutUint64(d[8:], swap32x2(le.Uint64(s[8:])))
			le.PutUint64(d[16:], swap32x2(le.Uint64(s[16:])))
			le.PutUint64(d[24:], swap32x2(le.Uint64(s[24:])))
		default:
			le.PutUint64(d[0:], bits.ReverseBytes64(le.Uint64(s[0:])))
			le.PutUint64(d[8:], bits.ReverseBytes64(le.Uint64(s[8:])))
			le.PutUint64(d[16:], bits.ReverseBytes64(le.Uint64(s[16:])))
			le.PutUint64(d[24:], bits.ReverseBytes64(le.Uint64(s[24:])))
		}
	}
	for ; k+8 <= len(src); k += 8 {
		le.PutUint64(dst[k:], rev(le.Uint64(src[k:])))
	}
	elems(dst[k:], src[k:], sz)
}

// elems reverses the bytes of each whole sz-byte element of src into dst, one element at a
// time; dst may be src.
func elems(dst, src []byte, sz int) {
	for k := 0; k+sz <= len(src); k += sz {
		for b := range sz / 2 { // both ends read before either is written
			lo, hi := src[k+b], src[k+sz-1-b]
			dst[k+b], dst[k+sz-1-b] = hi, lo
		}
	}
}

var le = binary.LittleEndian

// swap16x4 reverses the bytes of each of the four 16-bit elements of x.
func swap16x4(x uint64) uint64 {
	return x&0x00ff00ff00ff00ff<<8 | x>>8&0x00ff00ff00ff00ff
}

// swap32x2 reverses the bytes of each of the two 32-bit elements of x.
func swap32x2(x uint64) uint64 { return bits.RotateLeft64(bits.ReverseBytes64(x), 32) }
