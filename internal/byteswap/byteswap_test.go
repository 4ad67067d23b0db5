package byteswap

import (
	"encoding/binary"
	"testing"
)

// word reads an sz-byte unsigned integer from b in byte order o.
func word(o binary.ByteOrder, b []byte, sz int) uint64 {
	switch sz {
	case 2:
		return uint64(o.Uint16(b))
	case 4:
		return uint64(o.Uint32(b))
	}
	return o.Uint64(b)
}

// TestInto checks the word-at-a-time byte swap against encoding/binary for every element
// size, lengths around the four-word blocks, and misaligned buffers, into another buffer and
// in place.
func TestInto(t *testing.T) {
	src := make([]byte, 800)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for _, sz := range []int{2, 4, 8} {
		for off := range 3 {
			for n := 0; n*sz+off <= 700; n++ {
				s := src[off : off+n*sz]
				got := make([]byte, len(s)+1)[1:]
				Into(got, s, sz)
				inPlace := append(make([]byte, 0, len(s)+1), 0) // misaligned as got is
				inPlace = append(inPlace, s...)[1:]
				Into(inPlace, inPlace, sz)
				for k := 0; k < len(s); k += sz {
					want, have := word(binary.BigEndian, s[k:], sz), word(binary.LittleEndian, got[k:], sz)
					if have != want {
						t.Fatalf("size %d, offset %d, %d elements: element %d is %#x, want %#x", sz, off, n, k/sz, have, want)
					}
					if have := word(binary.LittleEndian, inPlace[k:], sz); have != want {
						t.Fatalf("size %d, offset %d, %d elements, in place: element %d is %#x, want %#x", sz, off, n, k/sz, have, want)
					}
				}
			}
		}
	}
}
