// Package inflate decompresses raw DEFLATE (RFC 1951) data whose decompressed size is known
// in advance, straight into the caller's buffer.
//
// IDV stores each block's decompressed length, so a block can be inflated in one call into a
// buffer of exactly that size. Knowing the size lets the decoder skip the sliding window and
// the per-call buffering of a streaming decompressor: it reads the input 64 bits at a time,
// decodes Huffman codes with two-level tables, and copies matches within the output buffer.
package inflate

import (
	"encoding/binary"
	"errors"
	"sync"
)

// Errors returned by Decompress.
var (
	// ErrCorrupt means the data is not valid DEFLATE.
	ErrCorrupt = errors.New("inflate: corrupt DEFLATE data")
	// ErrShort means the data ends (or its last block ends) before dst is full.
	ErrShort = errors.New("inflate: DEFLATE data ends before the declared size")
)

// Table entries: bits 0-4 code length, 5-9 extra bits, 10-12 kind, 16-30 value; bit 31 is set
// for literals only, so that the common case is one sign test.
const (
	kindInvalid = iota
	kindLiteral
	kindLength
	kindEnd
	kindSub // value = subtable offset, extra = subtable bits
	kindDist
)

const (
	litBits  = 10 // primary table bits for literal/length codes
	distBits = 8  // primary table bits for distance codes
	clBits   = 7  // code length codes are at most 7 bits
	maxLen   = 15
)

const litFlag = 1 << 31

func entry(length, extra, kind, value int) uint32 {
	e := uint32(length) | uint32(extra)<<5 | uint32(kind)<<10 | uint32(value)<<16
	if kind == kindLiteral {
		e |= litFlag
	}
	return e
}

// table is a two-level decoding table: the primary table indexed by the next bits of the
// input, and subtables for longer codes.
type table struct {
	prim [1 << litBits]uint32
	sub  []uint32
}

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clOrder     = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// tableKind says what a table's symbols mean: literals, lengths and the end code; distances;
// or code length symbols, kept raw.
type tableKind int

const (
	tLit tableKind = iota
	tDist
	tCL
)

// symEntry returns the table entry for symbol s of a code of the given kind.
func symEntry(tk tableKind, s, length int) uint32 {
	switch tk {
	case tLit:
		switch {
		case s < 256:
			return entry(length, 0, kindLiteral, s)
		case s == 256:
			return entry(length, 0, kindEnd, 0)
		case s <= 285:
			return entry(length, int(lengthExtra[s-257]), kindLength, int(lengthBase[s-257]))
		}
		return entry(length, 0, kindInvalid, 0)
	case tDist:
		if s < 30 {
			return entry(length, int(distExtra[s]), kindDist, int(distBase[s]))
		}
		return entry(length, 0, kindInvalid, 0)
	}
	return entry(length, 0, kindLiteral, s)
}

// build fills t for the code lengths, with a primary table of 1<<bits entries. It fails on
// over-subscribed codes; codes left incomplete decode to kindInvalid entries.
func build(t *table, lens []uint8, bits int, tk tableKind) error {
	var count [maxLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	left := 1
	for l := 1; l <= maxLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return ErrCorrupt
		}
	}
	// Canonical codes: the first code of each length.
	var next [maxLen + 1]int
	code, maxL := 0, 0
	for l := 1; l <= maxLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
		if count[l] > 0 {
			maxL = l
		}
	}
	primary := 1 << bits
	clear(t.prim[:primary])
	t.sub = t.sub[:0]
	subBits := maxL - bits
	for s, l := range lens {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		rev := reverse(c, int(l))
		if int(l) <= bits {
			e := symEntry(tk, s, int(l))
			for k := rev; k < primary; k += 1 << l {
				t.prim[k] = e
			}
			continue
		}
		prefix := rev & (primary - 1)
		p := t.prim[prefix]
		if p>>10&7 != kindSub {
			off := len(t.sub)
			for i := 0; i < 1<<subBits; i++ {
				t.sub = append(t.sub, 0)
			}
			p = entry(bits, subBits, kindSub, off)
			t.prim[prefix] = p
		}
		off := int(p >> 16)
		e := symEntry(tk, s, int(l)-bits)
		for k := rev >> bits; k < 1<<subBits; k += 1 << (int(l) - bits) {
			t.sub[off+k] = e
		}
	}
	return nil
}

func reverse(c, n int) int {
	r := 0
	for i := 0; i < n; i++ {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

var fixedLit, fixedDist table

func init() {
	var lens [288]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	build(&fixedLit, lens[:], litBits, tLit)
	var dl [30]uint8
	for i := range dl {
		dl[i] = 5
	}
	build(&fixedDist, dl[:], distBits, tDist)
}

// decoder holds the input position, the bit buffer and reusable tables.
type decoder struct {
	in    []byte
	pos   int // next input byte to load into bits (may pass len(in): zeros are loaded)
	bits  uint64
	nb    uint
	lit   table
	dist  table
	cl    table
	lens  [320]uint8
	clens [19]uint8
}

var pool = sync.Pool{New: func() any { return new(decoder) }}

// refill loads input until at least 56 bits are buffered.
func (d *decoder) refill() {
	if d.pos+8 <= len(d.in) {
		d.bits |= binary.LittleEndian.Uint64(d.in[d.pos:]) << d.nb
		d.pos += int((63 - d.nb) >> 3)
		d.nb |= 56
		return
	}
	for d.nb <= 56 {
		if d.pos < len(d.in) {
			d.bits |= uint64(d.in[d.pos]) << d.nb
		}
		d.pos++
		d.nb += 8
	}
}

// overread reports whether more bits were consumed than the input holds.
func (d *decoder) overread() bool { return d.pos-int(d.nb>>3) > len(d.in) }

func (d *decoder) take(n uint) uint64 {
	v := d.bits & (1<<n - 1)
	d.bits >>= n
	d.nb -= n
	return v
}

// Decompress inflates src into dst and fills it exactly. Output beyond len(dst) is not
// produced and the rest of the stream is not examined, as ML.NET reads blocks. It returns
// ErrShort if the stream ends before dst is full and ErrCorrupt for invalid data.
func Decompress(dst, src []byte) error {
	d := pool.Get().(*decoder)
	defer pool.Put(d)
	d.in, d.pos, d.bits, d.nb = src, 0, 0, 0
	defer func() { d.in = nil }()
	op := 0
	for op < len(dst) {
		d.refill()
		if d.overread() {
			return ErrShort
		}
		final := d.take(1)
		typ := d.take(2)
		var err error
		switch typ {
		case 0:
			op, err = d.stored(dst, op)
		case 1:
			op, err = d.huffman(dst, op, &fixedLit, &fixedDist)
		case 2:
			if err = d.dynamic(); err == nil {
				op, err = d.huffman(dst, op, &d.lit, &d.dist)
			}
		default:
			err = ErrCorrupt
		}
		if err != nil {
			return err
		}
		if final == 1 && op < len(dst) {
			return ErrShort
		}
	}
	return nil
}

func (d *decoder) stored(dst []byte, op int) (int, error) {
	d.take(d.nb & 7)
	d.pos -= int(d.nb >> 3) // give back whole buffered bytes
	d.bits, d.nb = 0, 0
	if d.pos+4 > len(d.in) {
		return op, ErrShort
	}
	n := int(binary.LittleEndian.Uint16(d.in[d.pos:]))
	if uint16(n) != ^binary.LittleEndian.Uint16(d.in[d.pos+2:]) {
		return op, ErrCorrupt
	}
	d.pos += 4
	avail := len(d.in) - d.pos
	k := min(n, len(dst)-op)
	if k > avail {
		return op, ErrShort
	}
	copy(dst[op:op+k], d.in[d.pos:d.pos+k])
	d.pos += min(n, avail)
	return op + k, nil
}

func (d *decoder) dynamic() error {
	d.refill()
	nlit := int(d.take(5)) + 257
	ndist := int(d.take(5)) + 1
	ncl := int(d.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return ErrCorrupt
	}
	d.clens = [19]uint8{}
	for i := 0; i < ncl; i++ {
		if d.nb < 3 {
			d.refill()
		}
		d.clens[clOrder[i]] = uint8(d.take(3))
	}
	if err := build(&d.cl, d.clens[:], clBits, tCL); err != nil {
		return err
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		d.refill()
		if d.overread() {
			return ErrShort
		}
		e := d.cl.prim[d.bits&(1<<clBits-1)]
		l := uint(e & 31)
		if e>>10&7 == kindInvalid || l == 0 {
			return ErrCorrupt
		}
		d.take(l)
		sym := int(e >> 16 & 0x7fff)
		var rep int
		var val uint8
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return ErrCorrupt
			}
			val, rep = lens[i-1], 3+int(d.take(2))
		case sym == 17:
			rep = 3 + int(d.take(3))
		default:
			rep = 11 + int(d.take(7))
		}
		if i+rep > len(lens) {
			return ErrCorrupt
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return ErrCorrupt
	}
	if err := build(&d.lit, lens[:nlit], litBits, tLit); err != nil {
		return err
	}
	return build(&d.dist, lens[nlit:], distBits, tDist)
}

// huffman decodes one compressed block into dst from op. The bit buffer lives in local
// variables for speed and is stored back on return.
func (d *decoder) huffman(dst []byte, op int, lit, dist *table) (int, error) {
	const litMask = 1<<litBits - 1
	const distMask = 1<<distBits - 1
	in, pos, bits, nb := d.in, d.pos, d.bits, d.nb
	defer func() { d.pos, d.bits, d.nb = pos, bits, nb }()
	for {
		if pos+8 <= len(in) {
			bits |= binary.LittleEndian.Uint64(in[pos:]) << nb
			pos += int((63 - nb) >> 3)
			nb |= 56
		} else {
			for nb <= 56 {
				if pos < len(in) {
					bits |= uint64(in[pos]) << nb
				}
				pos++
				nb += 8
			}
			if pos-int(nb>>3) > len(in) {
				return op, ErrShort
			}
		}
		e := lit.prim[bits&litMask]
		if e&litFlag != 0 {
			// Literals, as many as the buffered bits surely hold (a code is at most 15 bits).
			for {
				bits >>= e & 31
				nb -= uint(e & 31)
				if uint(op) >= uint(len(dst)) {
					return op, nil
				}
				dst[op] = byte(e >> 16)
				op++
				if nb < 15 {
					break
				}
				e = lit.prim[bits&litMask]
				if e&litFlag == 0 {
					break
				}
			}
			continue
		}
		if e>>10&7 == kindSub {
			bits >>= litBits
			nb -= litBits
			e = lit.sub[int(e>>16)+int(bits&(1<<(e>>5&31)-1))]
		}
		bits >>= e & 31
		nb -= uint(e & 31)
		switch e >> 10 & 7 {
		case kindLiteral:
			if op >= len(dst) {
				return op, nil
			}
			dst[op] = byte(e >> 16)
			op++
			continue
		case kindEnd:
			return op, nil
		case kindLength:
		default:
			return op, ErrCorrupt
		}
		n := uint(e >> 5 & 31)
		length := int(e>>16) + int(bits&(1<<n-1))
		bits >>= n
		nb -= n
		e = dist.prim[bits&distMask]
		if e>>10&7 == kindSub {
			bits >>= distBits
			nb -= distBits
			e = dist.sub[int(e>>16)+int(bits&(1<<(e>>5&31)-1))]
		}
		if e>>10&7 != kindDist {
			return op, ErrCorrupt
		}
		bits >>= e & 31
		nb -= uint(e & 31)
		n = uint(e >> 5 & 31)
		dd := int(e>>16) + int(bits&(1<<n-1))
		bits >>= n
		nb -= n
		if dd > op {
			return op, ErrCorrupt
		}
		if rest := len(dst) - op; length > rest {
			length = rest
		}
		src := op - dd
		switch {
		case dd >= 8 && op+length+8 <= len(dst):
			// Eight bytes at a time; each read lies before the bytes it writes, and bytes
			// written past the match are overwritten by what follows.
			to := dst[op : op+length+8]
			from := dst[src : src+len(to)]
			for k := 0; k < length && k+8 <= len(to); k += 8 {
				binary.LittleEndian.PutUint64(to[k:k+8], binary.LittleEndian.Uint64(from[k:k+8]))
			}
		case dd >= length:
			copy(dst[op:op+length], dst[src:src+length])
		case dd == 1 && length <= 16:
			b := dst[src]
			for k := op; k < op+length; k++ {
				dst[k] = b
			}
		default:
			for done := 0; done < length; {
				done += copy(dst[op+done:op+length], dst[src:op+done])
			}
		}
		op += length
		if op == len(dst) {
			return op, nil
		}
	}
}
