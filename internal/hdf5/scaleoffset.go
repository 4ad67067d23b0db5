package hdf5

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
)

// soHeader is the size of the header of a scale-offset chunk: the minimum bits (4 bytes,
// little-endian), the size of the minimum (1 byte, 8), the minimum (8 bytes, little-endian),
// then 8 bytes HDF5 leaves 0.
const soHeader = 21

// soParams is the scale-offset filter's parameters, checked.
type soParams struct {
	stored bool   // integers of full minimum bits: chunks are stored as they are
	elems  uint64 // elements in a chunk
	size   int    // bytes per element: 1, 2, 4 or 8 (integers), 4 or 8 (floats)
	float  bool
	be     bool
	fill   bool   // a fill value is defined: the largest packed value stands for it
	fillv  uint64 // its bits (as a little-endian integer of size bytes)
	d      int    // floats: the decimal scale factor
}

// parseScaleOffset checks the scale-offset filter's 20 parameters, as HDF5 fills them in
// when it creates a dataset: the scale type (slot 0: 0 for floats scaled by decimal digits,
// 1 for the fixed-bits float method HDF5 never implemented, 2 for integers), the scale factor
// (the digits for floats; for integers the minimum bits, 0 or less to let each chunk find
// them), the chunk's elements, the datatype's class (0 integer, 1 float), size, sign
// (integers: 0 unsigned, 1 two's complement), byte order (0 little-endian, 1 big), whether a
// fill value is defined (1), and the fill value (slots 8 and 9: its bytes as a little-endian
// machine holds them, four to a slot). Slots HDF5 does not read (the sign of floats, the fill
// value's unused slots) are not checked: old libraries left them uninitialised.
func parseScaleOffset(p []uint32) (*soParams, error) {
	if len(p) != 20 {
		return nil, badParams("%d parameters (HDF5 writes 20)", len(p))
	}
	sp := &soParams{elems: uint64(p[2]), size: int(p[4]), be: p[6] == 1, fill: p[7] == 1}
	scaleType, factor, class := p[0], int32(p[1]), p[3]
	if p[6] > 1 {
		return nil, badParams("byte order %d", p[6])
	}
	switch class {
	case 0:
		if scaleType != 2 {
			return nil, badParams("scale type %d for integers", scaleType)
		}
		if p[5] > 1 {
			return nil, badParams("integer sign %d", p[5])
		}
		if p[4] != 1 && p[4] != 2 && p[4] != 4 && p[4] != 8 {
			return nil, &paramError{unsupported: true, msg: fmt.Sprintf("%d-byte integers", p[4])}
		}
		factor = max(factor, 0)
		if int(factor) > 8*sp.size {
			return nil, badParams("%d minimum bits for %d-byte integers", factor, sp.size)
		}
		sp.stored = int(factor) == 8*sp.size
	case 1:
		switch scaleType {
		case 0:
		case 1:
			return nil, &paramError{unsupported: true, msg: "floating-point E-scaling (not implemented by HDF5 either)"}
		default:
			return nil, badParams("scale type %d for floating point", scaleType)
		}
		if p[4] != 4 && p[4] != 8 {
			return nil, &paramError{unsupported: true, msg: fmt.Sprintf("%d-byte floating point", p[4])}
		}
		sp.float, sp.d = true, int(factor)
	default:
		return nil, badParams("datatype class %d", class)
	}
	sp.fillv = uint64(p[8])
	if sp.size == 8 {
		sp.fillv |= uint64(p[9]) << 32
	}
	return sp, nil
}

// soDecode undoes the scale-offset filter into dst and returns the bytes written (p.elems
// elements of p.size bytes, in the datatype's byte order). After the header (soHeader), the
// chunk holds each element's minimum bits, most significant first, one after another: with
// as many bits as the type has, the elements themselves (little-endian); with none, zeros
// (all elements equal). An integer is its packed value plus the minimum (modulo its size);
// a float is the packed value (an integer of its size) divided by 10^D, plus the minimum
// (the first size bytes of the header's minimum), in the float's own precision, as HDF5
// computes it. Where a fill value is defined, the largest value of the minimum bits
// (all ones) stands for it. Integers of full minimum bits set in the parameters are stored
// as they are, without the header.
func soDecode(dst, src []byte, p *soParams) (int, error) {
	if p.stored {
		return copyStored(dst, src)
	}
	total := p.elems * uint64(p.size)
	if total > uint64(len(dst)) {
		return 0, fmt.Errorf("scale-offset parameters say %d elements of %d bytes: %w", p.elems, p.size, errOverrun)
	}
	if len(src) < soHeader {
		return 0, io.ErrUnexpectedEOF
	}
	out := dst[:total]
	minbits := binary.LittleEndian.Uint32(src)
	var minval uint64
	for i := range min(int(src[4]), 8) {
		minval |= uint64(src[5+i]) << (8 * i)
	}
	data := src[soHeader:]
	bits := 8 * p.size
	if minbits > uint32(bits) {
		return 0, fmt.Errorf("scale-offset chunk of %d minimum bits for %d-byte elements", minbits, p.size)
	}
	if int(minbits) == bits {
		if uint64(len(data)) < total {
			return 0, io.ErrUnexpectedEOF
		}
		copy(out, data)
		if p.be {
			swap(out, p.size)
		}
		return int(total), nil
	}
	if need := (p.elems*uint64(minbits) + 7) / 8; uint64(len(data)) < need {
		return 0, io.ErrUnexpectedEOF
	}
	r := bitReader{src: data}
	k := uint(minbits)
	marker := uint64(1)<<k - 1
	mode := 0 // integers
	var scale32, lo32 float32
	var scale64, lo64 float64
	if p.float && p.size == 4 {
		mode, scale32, lo32 = 1, float32(pow10(p.d, 32)), math.Float32frombits(uint32(minval))
	} else if p.float {
		mode, scale64, lo64 = 2, pow10(p.d, 64), math.Float64frombits(minval)
	}
	lay := layoutOf(p.size, p.be)
	for at := 0; at < len(out); at += p.size {
		var v uint64
		switch {
		case k == 0:
		case k <= 57:
			v, _ = r.read(k) // the stream's length is checked above
		default:
			v, _ = r.read64(k)
		}
		switch {
		case p.fill && v == marker:
			v = p.fillv
		case mode == 0:
			v += minval
		case mode == 1:
			v = uint64(math.Float32bits(float32(float32(int32(uint32(v)))/scale32) + lo32))
		default:
			v = math.Float64bits(float64(float64(int64(v))/scale64) + lo64)
		}
		switch lay {
		case layLE4:
			binary.LittleEndian.PutUint32(out[at:], uint32(v))
		case layLE8:
			binary.LittleEndian.PutUint64(out[at:], v)
		case layLE2:
			binary.LittleEndian.PutUint16(out[at:], uint16(v))
		case lay1:
			out[at] = byte(v)
		case layBE4:
			binary.BigEndian.PutUint32(out[at:], uint32(v))
		case layBE8:
			binary.BigEndian.PutUint64(out[at:], v)
		default:
			putUint(out[at:at+p.size], v, p.be)
		}
	}
	return int(total), nil
}

// pow10 returns 10^d correctly rounded to a float of the given bits (32 or 64), as C's
// powf(10, d) and pow(10, d) give it for integer d: exact up to 10^10 (float) and 10^22
// (double), the nearest float otherwise, infinity or zero beyond the range.
func pow10(d, bits int) float64 {
	x, _ := strconv.ParseFloat("1e"+strconv.Itoa(d), bits) // ±Inf or 0 out of range
	return x
}

// copyStored copies a chunk the n-bit or scale-offset filter stored as it is into dst.
func copyStored(dst, src []byte) (int, error) {
	if len(src) > len(dst) {
		return 0, errOverrun
	}
	return copy(dst, src), nil
}
