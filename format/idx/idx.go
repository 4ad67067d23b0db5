// Package idx reads and writes IDX files, the format of the MNIST database: a header of two
// zero bytes, a type code, the rank, and the rank's dimensions as big-endian uint32, followed
// by the elements in big-endian, row-major order.
//
// Every element type is supported (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
// 0x0D float32, 0x0E float64) at any rank ≥ 1. The first dimension counts records; a record
// is one sequence of one sample whose shape is the remaining dimensions. gzip-compressed files
// are recognised by their magic bytes and read transparently; uncompressed local files are
// memory-mapped, so uint8 and int8 data is handed out without a copy.
//
// Files are checked strictly before anything is allocated: the first two bytes must be zero,
// the type code known, the rank at least 1, and the product of the dimensions times the
// element size (checked for overflow) must equal the bytes that follow the header. A
// truncated file and trailing bytes are both errors that name the file and the byte offset.
//
// Several IDX files with the same record count (images and labels) combine into one source
// with mlfeed.Zip or format.Open.
package idx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sniff"
)

var (
	// ErrFormat is wrapped by errors for data that is not valid IDX.
	ErrFormat = fmt.Errorf("idx: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for files that end before their header says.
	ErrTruncated = fmt.Errorf("idx: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for headers that announce more data than the input
	// can hold.
	ErrTooLarge = fmt.Errorf("idx: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for data IDX cannot hold (several streams, sparse
	// or text values, sequences of several samples).
	ErrUnsupported = fmt.Errorf("idx: %w", mlfeed.ErrUnsupported)
)

// Type codes of the IDX element types.
const (
	codeUint8   = 0x08
	codeInt8    = 0x09
	codeInt16   = 0x0B
	codeInt32   = 0x0C
	codeFloat32 = 0x0D
	codeFloat64 = 0x0E
)

// MaxRank is the largest rank the format can express (one byte).
const MaxRank = 255

// Header is the IDX header: the element type and the dimensions, the first of which counts
// records.
type Header struct {
	Type mlfeed.ElemType
	Dims []int
}

// Size returns the header's size in bytes: 4 + 4 × rank.
func (h Header) Size() int64 { return 4 + 4*int64(len(h.Dims)) }

// Records returns the number of records, Dims[0].
func (h Header) Records() int { return h.Dims[0] }

// RecordShape returns the shape of one record, Dims[1:].
func (h Header) RecordShape() []int { return h.Dims[1:] }

// RecordElems returns the number of elements in one record.
func (h Header) RecordElems() int {
	n := 1
	for _, d := range h.Dims[1:] {
		n *= d
	}
	return n
}

// RecordBytes returns the size of one record in bytes.
func (h Header) RecordBytes() int { return h.RecordElems() * h.Type.Size() }

// PayloadSize returns the number of data bytes the header announces, or ok == false when
// that number overflows int64.
func (h Header) PayloadSize() (n int64, ok bool) {
	p := uint64(h.Type.Size())
	for _, d := range h.Dims {
		hi, lo := bits.Mul64(p, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

func typeCode(t mlfeed.ElemType) (byte, bool) {
	switch t {
	case mlfeed.Uint8:
		return codeUint8, true
	case mlfeed.Int8:
		return codeInt8, true
	case mlfeed.Int16:
		return codeInt16, true
	case mlfeed.Int32:
		return codeInt32, true
	case mlfeed.Float32:
		return codeFloat32, true
	case mlfeed.Float64:
		return codeFloat64, true
	}
	return 0, false
}

func codeType(c byte) (mlfeed.ElemType, bool) {
	switch c {
	case codeUint8:
		return mlfeed.Uint8, true
	case codeInt8:
		return mlfeed.Int8, true
	case codeInt16:
		return mlfeed.Int16, true
	case codeInt32:
		return mlfeed.Int32, true
	case codeFloat32:
		return mlfeed.Float32, true
	case codeFloat64:
		return mlfeed.Float64, true
	}
	return mlfeed.Invalid, false
}

// Supports reports whether IDX can store elements of type t.
func Supports(t mlfeed.ElemType) bool {
	_, ok := typeCode(t)
	return ok
}

// ReadHeader reads and checks an IDX header from r: the zero bytes, the type code, the rank
// and the dimensions. It reads nothing past the header. name is used in errors.
func ReadHeader(r io.Reader, name string) (Header, error) {
	var h Header
	var fixed [4]byte
	if n, err := io.ReadFull(r, fixed[:]); err != nil {
		return h, mlfeed.OffsetError(name, int64(n), "magic", fmt.Errorf("%w: file ends inside the 4-byte magic", ErrTruncated))
	}
	if fixed[0] != 0 || fixed[1] != 0 {
		return h, mlfeed.OffsetError(name, 0, "magic", fmt.Errorf("%w: the first two bytes must be zero, found %#02x %#02x", ErrFormat, fixed[0], fixed[1]))
	}
	t, ok := codeType(fixed[2])
	if !ok {
		return h, mlfeed.OffsetError(name, 2, "type code", fmt.Errorf("%w: unknown element type code %#02x (known: 0x08 0x09 0x0B 0x0C 0x0D 0x0E)", ErrFormat, fixed[2]))
	}
	rank := int(fixed[3])
	if rank == 0 {
		return h, mlfeed.OffsetError(name, 3, "rank", fmt.Errorf("%w: rank 0; an IDX file has at least one dimension", ErrFormat))
	}
	dims := make([]byte, 4*rank) // at most 1020 bytes
	if n, err := io.ReadFull(r, dims); err != nil {
		return h, mlfeed.OffsetError(name, 4+int64(n), "dimensions", fmt.Errorf("%w: file ends inside the %d dimensions", ErrTruncated, rank))
	}
	h.Type = t
	h.Dims = make([]int, rank)
	for i := range h.Dims {
		d := binary.BigEndian.Uint32(dims[4*i:])
		if int64(d) > int64(^uint(0)>>1) {
			return h, mlfeed.OffsetError(name, 4+4*int64(i), "dimension", fmt.Errorf("%w: dimension %d too large for this platform", ErrFormat, d))
		}
		h.Dims[i] = int(d)
	}
	if _, ok := h.PayloadSize(); !ok {
		return h, mlfeed.OffsetError(name, 4, "dimensions", fmt.Errorf("%w: dimensions %v times %d bytes overflow", ErrFormat, h.Dims, t.Size()))
	}
	return h, nil
}

// DecodeHeader reads the header at the start of data, which may be gzip-compressed. It is the
// cheap call behind `mlfeed info`: it decodes no elements.
func DecodeHeader(r io.Reader, name string) (Header, error) {
	zr, _, err := sniff.Gunzip(r)
	if err != nil {
		return Header{}, mlfeed.OffsetError(name, 0, "gzip header", fmt.Errorf("%w: %v", ErrFormat, err))
	}
	defer zr.Close()
	return ReadHeader(zr, name)
}

// Match reports whether head starts like an IDX file, plain or gzip-compressed.
func Match(head []byte) bool {
	if sniff.IsGzip(head) {
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return false
		}
		var b [4]byte
		n, _ := io.ReadFull(zr, b[:])
		return n == 4 && matchPlain(b[:])
	}
	return matchPlain(head)
}

func matchPlain(head []byte) bool {
	if len(head) < 4 || head[0] != 0 || head[1] != 0 || head[3] == 0 {
		return false
	}
	_, ok := codeType(head[2])
	return ok
}

// encodeHeader returns the header's bytes.
func encodeHeader(h Header) ([]byte, error) {
	code, ok := typeCode(h.Type)
	if !ok {
		return nil, fmt.Errorf("%w: IDX cannot hold %s elements (it holds uint8, int8, int16, int32, float32, float64)", ErrUnsupported, h.Type)
	}
	if len(h.Dims) == 0 || len(h.Dims) > MaxRank {
		return nil, fmt.Errorf("%w: rank %d is outside 1..%d", ErrUnsupported, len(h.Dims), MaxRank)
	}
	b := make([]byte, h.Size())
	b[2], b[3] = code, byte(len(h.Dims))
	for i, d := range h.Dims {
		if d < 0 || uint64(d) > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w: dimension %d does not fit 32 bits", ErrUnsupported, d)
		}
		binary.BigEndian.PutUint32(b[4+4*i:], uint32(d))
	}
	return b, nil
}
