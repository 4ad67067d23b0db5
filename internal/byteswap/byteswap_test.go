package byteswap

import (
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"
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

// at32 returns n bytes whose address is at bytes past a multiple of 32.
func at32(n, at int) []byte {
	b := make([]byte, n+64)
	k := (at - int(uintptr(unsafe.Pointer(&b[0]))%32) + 32) % 32
	return b[k : k+n]
}

// TestInto checks the byte swap against encoding/binary for every element size, lengths around
// the four-word and vector blocks, misaligned sources, and destinations at every alignment a
// vector store may meet, into another buffer and in place.
func TestInto(t *testing.T) {
	src := make([]byte, 800)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for _, sz := range []int{2, 4, 8} {
		for off := range 3 {
			for n := 0; n*sz+off <= 700; n++ {
				s := src[off : off+n*sz]
				// dst at every alignment to 32 bytes a vector store may meet: off by bytes,
				// and off by whole elements (vector aligns its stores then).
				for _, at := range []int{0, 1, sz, 2 * sz, 16, 24} {
					got := at32(len(s), at)
					Into(got, s, sz)
					inPlace := at32(len(s), at)
					copy(inPlace, s)
					Into(inPlace, inPlace, sz)
					for k := 0; k < len(s); k += sz {
						want, have := word(binary.BigEndian, s[k:], sz), word(binary.LittleEndian, got[k:], sz)
						if have != want {
							t.Fatalf("size %d, offset %d, dst at %d, %d elements: element %d is %#x, want %#x", sz, off, at, n, k/sz, have, want)
						}
						if have := word(binary.LittleEndian, inPlace[k:], sz); have != want {
							t.Fatalf("size %d, offset %d, dst at %d, %d elements, in place: element %d is %#x, want %#x", sz, off, at, n, k/sz, have, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkInto swaps 4-byte elements of an MNIST float32 image (3,136 bytes) into a buffer
// on a 32-byte boundary and 16 bytes off it, as malloc's alignment leaves numpy buffers.
func BenchmarkInto(b *testing.B) {
	src := make([]byte, 3136)
	for _, at := range []int{0, 16} {
		b.Run(fmt.Sprintf("dst%d", at), func(b *testing.B) {
			dst := at32(len(src), at)
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Into(dst, src, 4)
			}
		})
	}
}
