package binsparse

import (
	"encoding/binary"
	"math"

	"github.com/mlfeed/mlfeed"
)

// toInt64s returns an integer array's elements as int64. Negative values and uint64 values
// above MaxInt64 are an ArrayError naming the array and position.
func toInt64s(name string, b mlfeed.Buffer) ([]int64, error) {
	n := b.Len()
	out := make([]int64, n)
	p := b.Bytes
	le := binary.LittleEndian
	bad := int64(-1)
	switch b.Type {
	case mlfeed.Uint8:
		for i := range out {
			out[i] = int64(p[i])
		}
	case mlfeed.Uint16:
		for i := range out {
			out[i] = int64(le.Uint16(p[2*i:]))
		}
	case mlfeed.Uint32:
		for i := range out {
			out[i] = int64(le.Uint32(p[4*i:]))
		}
	case mlfeed.Uint64:
		for i := range out {
			v := le.Uint64(p[8*i:])
			if v > math.MaxInt64 && bad < 0 {
				bad = int64(i)
			}
			out[i] = int64(v)
		}
	case mlfeed.Int8:
		for i := range out {
			out[i] = int64(int8(p[i]))
		}
	case mlfeed.Int16:
		for i := range out {
			out[i] = int64(int16(le.Uint16(p[2*i:])))
		}
	case mlfeed.Int32:
		for i := range out {
			out[i] = int64(int32(le.Uint32(p[4*i:])))
		}
	case mlfeed.Int64:
		for i := range out {
			out[i] = int64(le.Uint64(p[8*i:]))
		}
	default:
		return nil, arrayErr(name, -1, "holds %s, not integers", b.Type)
	}
	if bad >= 0 {
		return nil, arrayErr(name, bad, "value %d does not fit int64", le.Uint64(p[8*bad:]))
	}
	if b.Type.IsSigned() {
		for i, v := range out {
			if v < 0 {
				return nil, arrayErr(name, int64(i), "negative value %d", v)
			}
		}
	}
	return out, nil
}

// fromInt64s stores non-negative values in a buffer of integer type t (which holds them).
func fromInt64s(v []int64, t mlfeed.ElemType) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, len(v))
	p := b.Bytes
	le := binary.LittleEndian
	switch t.Size() {
	case 1:
		for i, x := range v {
			p[i] = byte(x)
		}
	case 2:
		for i, x := range v {
			le.PutUint16(p[2*i:], uint16(x))
		}
	case 4:
		for i, x := range v {
			le.PutUint32(p[4*i:], uint32(x))
		}
	default:
		for i, x := range v {
			le.PutUint64(p[8*i:], uint64(x))
		}
	}
	return b
}

// MinIndexType returns the smallest unsigned integer type that holds max, as the C reference's
// mtx2bsp chooses index types.
func MinIndexType(max int64) mlfeed.ElemType {
	switch {
	case max <= math.MaxUint8:
		return mlfeed.Uint8
	case max <= math.MaxUint16:
		return mlfeed.Uint16
	case max <= math.MaxUint32:
		return mlfeed.Uint32
	}
	return mlfeed.Uint64
}

// gather returns the values of b at positions idx (b's element size, Complex included).
func gather(b mlfeed.Buffer, idx []int64) mlfeed.Buffer {
	sz := b.Type.Size()
	out := mlfeed.NewBuffer(b.Type, len(idx))
	switch sz {
	case 8:
		src := b.Bytes
		for i, j := range idx {
			copy(out.Bytes[8*i:8*i+8], src[8*j:8*j+8])
		}
	default:
		for i, j := range idx {
			copy(out.Bytes[sz*i:sz*(i+1)], b.Bytes[sz*int(j):sz*int(j+1)])
		}
	}
	return out
}
