package hdf5

import (
	"encoding/binary"
	"math/bits"
)

// verifyChecksums is false only in the fuzz target that explores past the metadata checksums
// (which random inputs never satisfy).
var verifyChecksums = true

// badSum reports whether the lookup3 checksum of b differs from stored.
func badSum(b []byte, stored uint32) bool { return verifyChecksums && lookup3(b) != stored }

// lookup3 is Bob Jenkins' lookup3 hashlittle with an initial value of 0: the checksum of HDF5
// metadata (superblocks 2 and 3, version 2 object headers, B-trees, heaps, chunk indexes).
func lookup3(k []byte) uint32 {
	n := len(k)
	a := 0xdeadbeef + uint32(n)
	b, c := a, a
	rot := bits.RotateLeft32
	for n > 12 {
		a += binary.LittleEndian.Uint32(k[0:])
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		n -= 12
		k = k[12:]
	}
	if n == 0 {
		return c
	}
	var t [12]byte
	copy(t[:], k[:n])
	a += binary.LittleEndian.Uint32(t[0:])
	b += binary.LittleEndian.Uint32(t[4:])
	c += binary.LittleEndian.Uint32(t[8:])
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}

// fletcher32 is HDF5's Fletcher-32 checksum (16-bit big-endian words; an odd last byte is the
// high byte of a final word).
func fletcher32(data []byte) uint32 {
	var sum1, sum2 uint32
	words := len(data) / 2
	p := 0
	for words > 0 {
		t := min(words, 360)
		words -= t
		for ; t > 0; t-- {
			sum1 += uint32(data[p])<<8 | uint32(data[p+1])
			p += 2
			sum2 += sum1
		}
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	if len(data)%2 == 1 {
		sum1 += uint32(data[p]) << 8
		sum2 += sum1
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	sum1 = (sum1 & 0xffff) + (sum1 >> 16)
	sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	return sum2<<16 | sum1
}
