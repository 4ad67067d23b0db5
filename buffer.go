package mlfeed

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Buffer holds element-typed values: fixed-width elements as raw little-endian bytes in Bytes,
// or variable-length values (String text, Bytes byte strings) in Strings. Typed views
// (Float32s, Uint8s, ...) reinterpret Bytes without copying.
//
// The bytes may be memory-mapped from a file; such a buffer must not be written to.
type Buffer struct {
	Type    ElemType
	Bytes   []byte   // len = Len() * Type.Size(); nil for String and Bytes
	Strings []string // String and Bytes elements only (see ElemType.IsVarLen)
}

// NewBuffer returns a zeroed buffer of n elements of type t, aligned for typed views.
func NewBuffer(t ElemType, n int) Buffer {
	if t.IsVarLen() {
		return Buffer{Type: t, Strings: make([]string, n)}
	}
	return Buffer{Type: t, Bytes: alignedBytes(n * t.Size())}
}

// alignedBytes allocates n bytes aligned to 8 bytes, so that views of any element type are
// aligned.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// Len returns the number of elements.
func (b Buffer) Len() int {
	if b.Type.IsVarLen() {
		return len(b.Strings)
	}
	if sz := b.Type.Size(); sz > 0 {
		return len(b.Bytes) / sz
	}
	return 0
}

// Slice returns the elements [from, to) sharing memory with b.
func (b Buffer) Slice(from, to int) Buffer {
	if b.Type.IsVarLen() {
		return Buffer{Type: b.Type, Strings: b.Strings[from:to]}
	}
	sz := b.Type.Size()
	return Buffer{Type: b.Type, Bytes: b.Bytes[from*sz : to*sz]}
}

// Append appends the elements of o, which must have the same type, to b.
func (b *Buffer) Append(o Buffer) {
	if b.Type.IsVarLen() {
		b.Strings = append(b.Strings, o.Strings...)
		return
	}
	b.Bytes = append(b.Bytes, o.Bytes...)
}

// view reinterprets Bytes as []T when the type's size matches and the memory is aligned, else
// copies into a fresh, aligned slice.
func view[T any](b Buffer, want ElemType) []T {
	if b.Type != want {
		panic(fmt.Sprintf("mlfeed: %s buffer viewed as %s", b.Type, want))
	}
	var zero T
	sz := int(unsafe.Sizeof(zero))
	n := len(b.Bytes) / sz
	if n == 0 {
		return []T{}
	}
	if uintptr(unsafe.Pointer(&b.Bytes[0]))%unsafe.Alignof(zero) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b.Bytes[0])), n)
	}
	out := make([]T, n)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n*sz), b.Bytes)
	return out
}

// Float32s views a Float32 buffer as []float32. It panics on another type. The view aliases
// the buffer unless the bytes are misaligned, in which case it is a copy.
func (b Buffer) Float32s() []float32 { return view[float32](b, Float32) }

// Float64s views a Float64 buffer as []float64 (see Float32s).
func (b Buffer) Float64s() []float64 { return view[float64](b, Float64) }

// Int8s views an Int8 buffer as []int8 (see Float32s).
func (b Buffer) Int8s() []int8 { return view[int8](b, Int8) }

// Int16s views an Int16 buffer as []int16 (see Float32s).
func (b Buffer) Int16s() []int16 { return view[int16](b, Int16) }

// Int32s views an Int32 buffer as []int32 (see Float32s).
func (b Buffer) Int32s() []int32 { return view[int32](b, Int32) }

// Int64s views an Int64 buffer as []int64 (see Float32s).
func (b Buffer) Int64s() []int64 { return view[int64](b, Int64) }

// Uint8s returns a Uint8 buffer's bytes.
func (b Buffer) Uint8s() []uint8 { return view[uint8](b, Uint8) }

// Uint16s views a Uint16 buffer as []uint16 (see Float32s).
func (b Buffer) Uint16s() []uint16 { return view[uint16](b, Uint16) }

// Uint32s views a Uint32 buffer as []uint32 (see Float32s).
func (b Buffer) Uint32s() []uint32 { return view[uint32](b, Uint32) }

// Uint64s views a Uint64 buffer as []uint64 (see Float32s).
func (b Buffer) Uint64s() []uint64 { return view[uint64](b, Uint64) }

// Float64At returns element i as a float64. It is defined for numeric types (IsNumeric) and
// for Duration and DateTime (their ticks); other types return NaN. Int64 and Uint64 values
// beyond 2^53 are rounded.
func (b Buffer) Float64At(i int) float64 {
	p := b.Bytes
	le := binary.LittleEndian
	switch b.Type {
	case Float32:
		return float64(math.Float32frombits(le.Uint32(p[4*i:])))
	case Float64:
		return math.Float64frombits(le.Uint64(p[8*i:]))
	case Int8:
		return float64(int8(p[i]))
	case Int16:
		return float64(int16(le.Uint16(p[2*i:])))
	case Int32:
		return float64(int32(le.Uint32(p[4*i:])))
	case Int64, Duration, DateTime:
		return float64(int64(le.Uint64(p[8*i:])))
	case Uint8, Bool:
		return float64(p[i])
	case Uint16:
		return float64(le.Uint16(p[2*i:]))
	case Uint32:
		return float64(le.Uint32(p[4*i:]))
	case Uint64:
		return float64(le.Uint64(p[8*i:]))
	}
	return math.NaN()
}

// Int64At returns element i of an integer, Bool, Duration or DateTime buffer as an int64
// (Uint64 values above 2^63-1 wrap). It panics on other types.
func (b Buffer) Int64At(i int) int64 {
	p := b.Bytes
	le := binary.LittleEndian
	switch b.Type {
	case Int8:
		return int64(int8(p[i]))
	case Int16:
		return int64(int16(le.Uint16(p[2*i:])))
	case Int32:
		return int64(int32(le.Uint32(p[4*i:])))
	case Int64, Duration, DateTime, Uint64:
		return int64(le.Uint64(p[8*i:]))
	case Uint8, Bool:
		return int64(p[i])
	case Uint16:
		return int64(le.Uint16(p[2*i:]))
	case Uint32:
		return int64(le.Uint32(p[4*i:]))
	}
	panic(fmt.Sprintf("mlfeed: Int64At on a %s buffer", b.Type))
}

// SetFloat64 stores v into element i of a numeric buffer, converting it to the buffer's type
// (integers truncate toward zero; the caller checks representability with Representable).
func (b Buffer) SetFloat64(i int, v float64) {
	p := b.Bytes
	le := binary.LittleEndian
	switch b.Type {
	case Float32:
		le.PutUint32(p[4*i:], math.Float32bits(float32(v)))
	case Float64:
		le.PutUint64(p[8*i:], math.Float64bits(v))
	case Int8:
		p[i] = byte(int8(v))
	case Int16:
		le.PutUint16(p[2*i:], uint16(int16(v)))
	case Int32:
		le.PutUint32(p[4*i:], uint32(int32(v)))
	case Int64, Duration, DateTime:
		le.PutUint64(p[8*i:], uint64(int64(v)))
	case Uint8:
		p[i] = byte(v)
	case Bool:
		if v != 0 {
			p[i] = 1
		} else {
			p[i] = 0
		}
	case Uint16:
		le.PutUint16(p[2*i:], uint16(v))
	case Uint32:
		le.PutUint32(p[4*i:], uint32(v))
	case Uint64:
		le.PutUint64(p[8*i:], uint64(v))
	default:
		panic(fmt.Sprintf("mlfeed: SetFloat64 on a %s buffer", b.Type))
	}
}

// Representable reports whether the float64 v is held exactly by type t: NaN and infinities
// only by float types, fractions only by float types, integers only within t's range. For
// Float32 the value must survive the float32 round trip.
func Representable(v float64, t ElemType) bool {
	switch t {
	case Float64:
		return true
	case Float32:
		return math.IsNaN(v) || float64(float32(v)) == v
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
		return false
	}
	lo, hi := intRange(t)
	return v >= lo && v <= hi
}

func intRange(t ElemType) (lo, hi float64) {
	switch t {
	case Int8:
		return math.MinInt8, math.MaxInt8
	case Int16:
		return math.MinInt16, math.MaxInt16
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Int64, Duration, DateTime:
		return -(1 << 63), (1 << 63) - 1024 // largest float64 below 2^63
	case Uint8:
		return 0, math.MaxUint8
	case Bool:
		return 0, 1
	case Uint16:
		return 0, math.MaxUint16
	case Uint32:
		return 0, math.MaxUint32
	case Uint64:
		return 0, (1 << 64) - 2048 // largest float64 below 2^64
	}
	return 1, 0
}

// ConvertBuffer returns b's values as type t. The conversion is lossless or fails: every value
// must be held exactly by t, else the error (wrapping ErrRange) names the first element that is
// not. Converting to the same type returns b itself. Only numeric types (IsNumeric) convert.
func ConvertBuffer(b Buffer, t ElemType) (Buffer, error) {
	if b.Type == t {
		return b, nil
	}
	if !b.Type.IsNumeric() || !t.IsNumeric() {
		return Buffer{}, fmt.Errorf("%w: cannot convert %s values to %s", ErrUnsupported, b.Type, t)
	}
	n := b.Len()
	out := NewBuffer(t, n)
	srcInt := b.Type.IsInteger() || b.Type == Bool
	for i := 0; i < n; i++ {
		if !srcInt {
			v := b.Float64At(i)
			if !Representable(v, t) {
				return Buffer{}, fmt.Errorf("%w: value %v at element %d does not fit %s", ErrRange, v, i, t)
			}
			out.SetFloat64(i, v)
			continue
		}
		neg, mag := integerAt(b, i)
		if !integerFits(neg, mag, t) {
			v := fmt.Sprint(mag)
			if neg {
				v = "-" + v
			}
			return Buffer{}, fmt.Errorf("%w: value %s at element %d does not fit %s", ErrRange, v, i, t)
		}
		if t.IsFloat() {
			f := float64(mag)
			if neg {
				f = -f
			}
			out.SetFloat64(i, f)
			continue
		}
		v := mag
		if neg {
			v = -mag // two's complement; the range check above makes the truncation exact
		}
		putUint(out.Bytes[i*t.Size():], t.Size(), v)
	}
	return out, nil
}

// integerAt returns element i of an integer or Bool buffer as a sign and a magnitude.
func integerAt(b Buffer, i int) (neg bool, mag uint64) {
	v := b.Int64At(i)
	if b.Type.IsSigned() && v < 0 {
		return true, uint64(-v)
	}
	return false, uint64(v)
}

// integerFits reports whether the integer (neg, mag) is held exactly by t.
func integerFits(neg bool, mag uint64, t ElemType) bool {
	switch t {
	case Float64:
		return mag <= 1<<53 || uint64(float64(mag)) == mag
	case Float32:
		return mag <= 1<<24 || (mag < 1<<63 && uint64(float32(mag)) == mag)
	case Bool:
		return !neg && mag <= 1
	}
	bits := uint(8 * t.Size())
	if t.IsSigned() {
		if neg {
			return mag <= 1<<(bits-1)
		}
		return mag <= 1<<(bits-1)-1
	}
	return !neg && (bits == 64 || mag <= 1<<bits-1)
}

func putUint(p []byte, size int, v uint64) {
	for k := 0; k < size; k++ {
		p[k] = byte(v >> (8 * k))
	}
}
