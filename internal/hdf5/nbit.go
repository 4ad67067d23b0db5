package hdf5

import (
	"encoding/binary"
	"fmt"
	"io"
)

// HDF5's built-in n-bit (5) and scale-offset (6) filters.
const (
	filterNbit        = 5
	filterScaleOffset = 6
)

// paramError says why a filter's parameters (cd_values) are refused: a case this package does
// not decode (unsupported), or parameters no HDF5 library writes.
type paramError struct {
	unsupported bool
	msg         string
}

func (e *paramError) Error() string { return e.msg }

func badParams(format string, a ...any) error {
	return &paramError{msg: fmt.Sprintf(format, a...)}
}

// The n-bit filter's classes of a datatype in its parameters.
const (
	nbitAtomic   = 1 // an integer or floating-point number: its precision bits are kept
	nbitArray    = 2
	nbitCompound = 3
	nbitNoop     = 4 // any other type: its bytes are kept whole
)

// nbitParams is the n-bit filter's parameters, checked: how one element of a chunk is packed.
type nbitParams struct {
	stored bool   // the datatype fills its bytes: chunks are stored as they are
	elems  uint64 // elements in a chunk
	size   int    // bytes per element
	elem   nbitNode
}

// nbitNode is one part of an element: a number (nbitAtomic), bytes kept whole (nbitNoop), n
// copies of sub[0] one after another (nbitArray), or members (nbitCompound).
type nbitNode struct {
	kind      byte
	at        int // byte offset in the parent (a member's offset; 0 otherwise)
	size      int // bytes
	be        bool
	prec, off int // nbitAtomic: the number's bits, from bit off of its size bytes
	n         int // nbitArray: copies of sub[0]
	sub       []nbitNode
}

// parseNbit checks the n-bit filter's parameters, as HDF5 fills them in when it creates a
// dataset: their count (slot 0, which must be the number of parameters), whether the datatype
// fills its bytes (slot 1: then nothing is packed), the chunk's elements (2), then the
// datatype (class, size, and per class: byte order, precision and bit offset of a number;
// base type of an array; member count, then each member's byte offset and type of a
// compound; nothing more for a type kept whole). Every part must lie within its parent: the
// members of a compound take at most its size, without overlapping its end, as HDF5 checks.
func parseNbit(p []uint32) (*nbitParams, error) {
	if len(p) < 3 || p[0] != uint32(len(p)) {
		return nil, badParams("%d parameters (the first says %d)", len(p), firstOr0(p))
	}
	if p[1] != 0 {
		return &nbitParams{stored: true}, nil
	}
	if len(p) < 5 {
		return nil, badParams("%d parameters", len(p))
	}
	np := &nbitParams{elems: uint64(p[2]), size: int(p[4])}
	if p[4] == 0 || p[4] > 1<<30 {
		return nil, badParams("element of %d bytes", p[4])
	}
	w := nbitWalk{p: p, i: 3}
	class := w.next()
	var err error
	switch class {
	case nbitAtomic:
		np.elem, err = w.atomic(0)
	case nbitArray:
		np.elem, err = w.array(0, 0)
	case nbitCompound:
		np.elem, err = w.compound(0, 0)
	default:
		return nil, badParams("datatype class %d", class)
	}
	if err != nil {
		return nil, err
	}
	return np, nil
}

func firstOr0(p []uint32) uint32 {
	if len(p) == 0 {
		return 0
	}
	return p[0]
}

// nbitWalk reads the n-bit filter's description of a datatype: p, from slot i.
type nbitWalk struct {
	p []uint32
	i int
}

// need checks that n more parameters follow.
func (w *nbitWalk) need(n int) error {
	if len(w.p)-w.i < n {
		return badParams("%d parameters end inside the datatype they describe", len(w.p))
	}
	return nil
}

func (w *nbitWalk) next() uint32 {
	if w.i >= len(w.p) {
		return 0
	}
	w.i++
	return w.p[w.i-1]
}

// atomic reads a number's size, byte order, precision and bit offset (the size already read
// when given: a compound member's size is its type's).
func (w *nbitWalk) atomic(size uint32) (nbitNode, error) {
	n := 4
	if size != 0 {
		n = 3
	}
	if err := w.need(n); err != nil {
		return nbitNode{}, err
	}
	if size == 0 {
		size = w.next()
	}
	order, prec, off := w.next(), w.next(), w.next()
	if size == 0 || size > 1<<30 || order > 1 || prec == 0 || uint64(prec)+uint64(off) > 8*uint64(size) {
		return nbitNode{}, badParams("number of %d bytes, byte order %d, %d bits at bit offset %d", size, order, prec, off)
	}
	return nbitNode{kind: nbitAtomic, size: int(size), be: order == 1, prec: int(prec), off: int(off)}, nil
}

// array reads an array type: its size, its base type's class, then the base type; the array
// holds as many base elements as fit.
func (w *nbitWalk) array(at int, depth int) (nbitNode, error) {
	if depth > maxTypeDepth {
		return nbitNode{}, &paramError{unsupported: true, msg: fmt.Sprintf("datatypes nested more than %d deep", maxTypeDepth)}
	}
	if err := w.need(2); err != nil {
		return nbitNode{}, err
	}
	total, class := w.next(), w.next()
	if total == 0 || total > 1<<30 {
		return nbitNode{}, badParams("array of %d bytes", total)
	}
	node := nbitNode{kind: nbitArray, at: at, size: int(total)}
	var base nbitNode
	var err error
	switch class {
	case nbitAtomic:
		base, err = w.atomic(0)
	case nbitArray, nbitCompound:
		if err = w.need(1); err != nil {
			break
		}
		if class == nbitArray {
			base, err = w.array(0, depth+1)
		} else {
			base, err = w.compound(0, depth+1)
		}
	case nbitNoop: // the array's bytes are kept whole
		if err = w.need(1); err != nil {
			return nbitNode{}, err
		}
		w.next()
		return nbitNode{kind: nbitNoop, at: at, size: int(total)}, nil
	default:
		return nbitNode{}, badParams("array of datatype class %d", class)
	}
	if err != nil {
		return nbitNode{}, err
	}
	node.n = int(total) / base.size
	if node.n == 0 {
		return nbitNode{}, badParams("array of %d bytes of %d-byte elements", total, base.size)
	}
	node.sub = []nbitNode{base}
	return node, nil
}

// compound reads a compound type: its size, its member count, then each member's byte offset,
// class and type.
func (w *nbitWalk) compound(at int, depth int) (nbitNode, error) {
	if depth > maxTypeDepth {
		return nbitNode{}, &paramError{unsupported: true, msg: fmt.Sprintf("datatypes nested more than %d deep", maxTypeDepth)}
	}
	if err := w.need(2); err != nil {
		return nbitNode{}, err
	}
	size, members := w.next(), w.next()
	if size == 0 || size > 1<<30 {
		return nbitNode{}, badParams("compound of %d bytes", size)
	}
	node := nbitNode{kind: nbitCompound, at: at, size: int(size)}
	used := uint64(0)
	for m := uint32(0); m < members; m++ {
		if err := w.need(3); err != nil {
			return nbitNode{}, err
		}
		off, class, msize := w.next(), w.next(), w.p[w.i]
		used += uint64(msize)
		if msize == 0 || used > uint64(size) || uint64(off)+uint64(msize) > uint64(size) {
			return nbitNode{}, badParams("member of %d bytes at byte %d of a %d-byte compound (members %d bytes so far)", msize, off, size, used)
		}
		var sub nbitNode
		var err error
		switch class {
		case nbitAtomic:
			w.next()
			sub, err = w.atomic(msize)
		case nbitArray:
			sub, err = w.array(int(off), depth+1)
		case nbitCompound:
			sub, err = w.compound(int(off), depth+1)
		case nbitNoop:
			w.next()
			sub = nbitNode{kind: nbitNoop, size: int(msize)}
		default:
			return nbitNode{}, badParams("member of datatype class %d", class)
		}
		if err != nil {
			return nbitNode{}, err
		}
		if sub.size != int(msize) {
			return nbitNode{}, badParams("member of %d bytes whose type has %d", msize, sub.size)
		}
		sub.at = int(off)
		node.sub = append(node.sub, sub)
	}
	return node, nil
}

// nbitDecode undoes the n-bit filter into dst and returns the bytes written (p.elems
// elements of p.size bytes). The chunk is one stream of bits, most significant first, that
// holds for each element, in order, each number's precision bits (most significant first)
// and the bytes of parts kept whole, whatever their alignment; the bits around a number
// (padding) are 0 in dst, as HDF5 leaves them. Bytes after the last element are ignored.
func nbitDecode(dst, src []byte, p *nbitParams) (int, error) {
	if p.stored {
		return copyStored(dst, src)
	}
	total := p.elems * uint64(p.size)
	if total > uint64(len(dst)) {
		return 0, fmt.Errorf("n-bit parameters say %d elements of %d bytes: %w", p.elems, p.size, errOverrun)
	}
	out := dst[:total]
	r := bitReader{src: src}
	e := &p.elem
	if e.kind == nbitAtomic && e.prec%8 == 0 && e.off%8 == 0 {
		if err := wholeBytes(out, src, e.size, e.prec/8, e.off/8, e.be); err != nil {
			return 0, err
		}
		return int(total), nil
	}
	if e.kind == nbitAtomic && e.size <= 8 {
		if err := r.numbers(out, e.size, e.prec, e.off, e.be); err != nil {
			return 0, err
		}
		return int(total), nil
	}
	clear(out)
	for at := 0; at < len(out); at += p.size {
		if err := r.node(out[at:at+p.size], e); err != nil {
			return 0, err
		}
	}
	return int(total), nil
}

// wholeBytes unpacks numbers whose bits are whole bytes (n bytes from byte lo, counted from
// the least significant): each takes n bytes of src, most significant first, and the
// element's other bytes are 0.
func wholeBytes(out, src []byte, size, n, lo int, be bool) error {
	elems := len(out) / size
	if len(src)/n < elems {
		return io.ErrUnexpectedEOF
	}
	clear(out)
	if be { // the bytes in the stream's order
		for i, at := 0, size-lo-n; i < elems; i, at = i+1, at+size {
			copy(out[at:at+n], src[i*n:])
		}
		return nil
	}
	if n == 1 {
		for i, at := 0, lo; i < elems; i, at = i+1, at+size {
			out[at] = src[i]
		}
		return nil
	}
	for i, at := 0, lo+n-1; i < elems; i, at = i+1, at+size {
		for j, b := range src[i*n : i*n+n] {
			out[at-j] = b
		}
	}
	return nil
}

// bitReader reads a stream of bits, most significant first.
type bitReader struct {
	src []byte
	p   int    // next byte of src
	acc uint64 // n bits, at the top
	n   uint
}

// read returns the next k bits (1 to 57), or false at the end of the stream.
func (r *bitReader) read(k uint) (uint64, bool) {
	if r.n < k {
		if r.p+8 <= len(r.src) {
			// the whole bytes that fit; the bits of the next byte that land below them
			// are the stream's own, ORed again when that byte is taken
			take := (64 - r.n) >> 3
			r.acc |= binary.BigEndian.Uint64(r.src[r.p:]) >> r.n
			r.p += int(take)
			r.n += take << 3
		} else {
			for r.n <= 56 && r.p < len(r.src) {
				r.acc |= uint64(r.src[r.p]) << (56 - r.n)
				r.p++
				r.n += 8
			}
			if r.n < k {
				return 0, false
			}
		}
	}
	v := r.acc >> (64 - k)
	r.acc <<= k
	r.n -= k
	return v, true
}

// read64 returns the next k bits (1 to 64).
func (r *bitReader) read64(k uint) (uint64, bool) {
	if k <= 32 {
		return r.read(k)
	}
	hi, ok := r.read(k - 32)
	lo, ok2 := r.read(32)
	return hi<<32 | lo, ok && ok2
}

// numbers reads len(dst)/size numbers of prec bits into dst, each at bit off of its size
// bytes (at most 8), in the byte order be says, the other bits 0.
func (r *bitReader) numbers(dst []byte, size, prec, off int, be bool) error {
	k, sh := uint(prec), uint(off)
	lay := layoutOf(size, be)
	for at := 0; at+size <= len(dst); at += size {
		var v uint64
		var ok bool
		if k <= 57 {
			v, ok = r.read(k)
		} else {
			v, ok = r.read64(k)
		}
		if !ok {
			return io.ErrUnexpectedEOF
		}
		v <<= sh
		switch lay {
		case layLE4:
			binary.LittleEndian.PutUint32(dst[at:], uint32(v))
		case layLE2:
			binary.LittleEndian.PutUint16(dst[at:], uint16(v))
		case layLE8:
			binary.LittleEndian.PutUint64(dst[at:], v)
		case lay1:
			dst[at] = byte(v)
		case layBE4:
			binary.BigEndian.PutUint32(dst[at:], uint32(v))
		case layBE2:
			binary.BigEndian.PutUint16(dst[at:], uint16(v))
		case layBE8:
			binary.BigEndian.PutUint64(dst[at:], v)
		default:
			putUint(dst[at:at+size], v, be)
		}
	}
	return nil
}

// How numbers of a size and byte order are stored, for the loops that store them.
const (
	layOther = iota // 3, 5, 6 or 7 bytes
	lay1
	layLE2
	layLE4
	layLE8
	layBE2
	layBE4
	layBE8
)

func layoutOf(size int, be bool) int {
	switch {
	case size == 1:
		return lay1
	case size == 2 && !be:
		return layLE2
	case size == 4 && !be:
		return layLE4
	case size == 8 && !be:
		return layLE8
	case size == 2:
		return layBE2
	case size == 4:
		return layBE4
	case size == 8:
		return layBE8
	}
	return layOther
}

// putUint stores v in the len(b) bytes of b (at most 8), little- or big-endian, byte by byte.
func putUint(b []byte, v uint64, be bool) {
	for i := range b {
		if be {
			b[len(b)-1-i] = byte(v)
		} else {
			b[i] = byte(v)
		}
		v >>= 8
	}
}

// node reads one part of an element into b (its size bytes, zeroed).
func (r *bitReader) node(b []byte, e *nbitNode) error {
	switch e.kind {
	case nbitAtomic:
		if e.size <= 8 {
			return r.numbers(b[:e.size], e.size, e.prec, e.off, e.be)
		}
		return r.wideNumber(b[:e.size], e.prec, e.off, e.be)
	case nbitNoop:
		for i := range b[:e.size] {
			v, ok := r.read(8)
			if !ok {
				return io.ErrUnexpectedEOF
			}
			b[i] = byte(v)
		}
	case nbitArray:
		s := &e.sub[0]
		for i := 0; i < e.n; i++ {
			if err := r.node(b[i*s.size:(i+1)*s.size], s); err != nil {
				return err
			}
		}
	case nbitCompound:
		for i := range e.sub {
			s := &e.sub[i]
			if err := r.node(b[s.at:s.at+s.size], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// wideNumber reads a number of more than 8 bytes: its prec bits from bit off, byte by byte
// from the most significant.
func (r *bitReader) wideNumber(b []byte, prec, off int, be bool) error {
	for bit := off + prec; bit > off; {
		lo := max(off, (bit-1)&^7) // the lowest bit of this byte that the number holds
		v, ok := r.read(uint(bit - lo))
		if !ok {
			return io.ErrUnexpectedEOF
		}
		i := lo / 8
		if be {
			i = len(b) - 1 - i
		}
		b[i] |= byte(v << uint(lo%8))
		bit = lo
	}
	return nil
}
