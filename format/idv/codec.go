package idv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
)

// prim is the encoding of one item of a block: a column's value, or a vector's slot value.
type prim uint8

const (
	pInvalid prim = iota
	pI1
	pU1
	pI2
	pU2
	pI4
	pU4
	pI8
	pU8
	pR4
	pR8
	pTS
	pDT
	pDTO
	pBool
	pDvBool
	pText
	pRowID
)

// primByName maps the load names of the simple codecs (current and legacy) to their encoding.
var primByName = map[string]prim{
	"SByte": pI1, "Byte": pU1, "Int16": pI2, "UInt16": pU2, "Int32": pI4, "UInt32": pU4,
	"Int64": pI8, "UInt64": pU8, "Single": pR4, "Double": pR8,
	"TimeSpan": pTS, "DvTimeSpan": pTS, "DateTime": pDT, "DvDateTime": pDT,
	"DateTimeOffset": pDTO, "DvDateTimeZone": pDTO, "Boolean": pBool, "DvBool": pDvBool,
	"TextSpan": pText, "DataViewRowId": pRowID, "RowId": pRowID, "UInt128": pRowID,
}

// primInfo gives each encoding its current load name, element type and fixed width in bytes
// (0 for encodings that are not a plain array of fixed-width values).
var primInfo = [...]struct {
	name  string
	elem  mlfeed.ElemType
	width int
}{
	pI1: {"SByte", mlfeed.Int8, 1}, pU1: {"Byte", mlfeed.Uint8, 1},
	pI2: {"Int16", mlfeed.Int16, 2}, pU2: {"UInt16", mlfeed.Uint16, 2},
	pI4: {"Int32", mlfeed.Int32, 4}, pU4: {"UInt32", mlfeed.Uint32, 4},
	pI8: {"Int64", mlfeed.Int64, 8}, pU8: {"UInt64", mlfeed.Uint64, 8},
	pR4: {"Single", mlfeed.Float32, 4}, pR8: {"Double", mlfeed.Float64, 8},
	pTS: {"TimeSpan", mlfeed.Duration, 8}, pDT: {"DateTime", mlfeed.DateTime, 8},
	pDTO: {"DateTimeOffset", mlfeed.DateTimeOffset, 0}, pBool: {"Boolean", mlfeed.Bool, 0},
	pDvBool: {"DvBool", mlfeed.Bool, 0}, pText: {"TextSpan", mlfeed.String, 0},
	pRowID: {"DataViewRowId", mlfeed.RowID, 16},
}

// primOf returns the encoding this package writes for an element type.
func primOf(t mlfeed.ElemType) prim {
	for p := pI1; p <= pRowID; p++ {
		if p != pDvBool && primInfo[p].elem == t {
			return p
		}
	}
	return pInvalid
}

// codec is a parsed codec definition: a simple codec, a key over an unsigned codec, or a
// vector of a simple or key codec.
type codec struct {
	name     string // load name as in the file
	item     string // load name of the simple codec of the items, as in the file
	prim     prim   // item encoding (of the slots, for a vector)
	keyCount uint64 // key cardinality, 0 if not a key
	keyName  string // load name of the key codec ("Key2" or the legacy "Key"), if a key
	vector   bool
	dims     []int // vector dimensions; empty or containing 0 means variable size
}

// size returns a vector's slot count, 0 for variable size.
func (c *codec) size() int {
	if len(c.dims) == 0 {
		return 0
	}
	p := 1
	for _, d := range c.dims {
		p *= d
	}
	return p
}

func (c *codec) elem() mlfeed.ElemType { return primInfo[c.prim].elem }

// String describes the codec: "Single", "Key2(UInt32, 3)", "VBuffer(TextSpan, [5])".
func (c *codec) String() string {
	item := c.item
	if c.keyCount > 0 {
		item = fmt.Sprintf("%s(%s, %d)", c.keyName, item, c.keyCount)
	}
	if !c.vector {
		return item
	}
	ds := make([]string, len(c.dims))
	for i, d := range c.dims {
		ds[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("VBuffer(%s, [%s])", item, strings.Join(ds, ", "))
}

// errDead marks a codec name or compression kind ML.NET does not know: the column or
// metadata item is skipped, not the file.
var errDead = errors.New("unknown codec")

// bytesReader reads the primitive encodings from memory.
type bytesReader struct {
	b   []byte
	off int
}

var errShort = errors.New("ends early")

func (r *bytesReader) left() int { return len(r.b) - r.off }

func (r *bytesReader) take(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, errShort
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *bytesReader) u8() (byte, error) {
	p, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (r *bytesReader) i32() (int32, error) {
	p, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.LittleEndian.Uint32(p)), nil
}

func (r *bytesReader) u64() (uint64, error) {
	p, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

// leb reads an unsigned LEB128 value of at most 10 bytes, as ML.NET does.
func (r *bytesReader) leb() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		b, err := r.u8()
		if err != nil {
			return 0, err
		}
		if i == 9 && b > 1 {
			return 0, fmt.Errorf("%w: LEB128 value overflows 64 bits", ErrFormat)
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: LEB128 value longer than 10 bytes", ErrFormat)
}

// strLen reads .NET's 7-bit encoded Int32 length prefix.
func (r *bytesReader) strLen() (int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		b, err := r.u8()
		if err != nil {
			return 0, err
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b < 0x80 {
			if i == 4 && b > 7 {
				return 0, fmt.Errorf("%w: string length prefix exceeds 2^31-1", ErrFormat)
			}
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("%w: string length prefix longer than 5 bytes", ErrFormat)
}

// str reads a .NET BinaryWriter string; invalid UTF-8 becomes U+FFFD as .NET decodes it.
func (r *bytesReader) str() (string, error) {
	n, err := r.strLen()
	if err != nil {
		return "", err
	}
	p, err := r.take(n)
	if err != nil {
		return "", fmt.Errorf("%w: string of %d bytes: %w", ErrTruncated, n, err)
	}
	return validUTF8(p), nil
}

// validUTF8 returns p as a string, replacing invalid UTF-8 as .NET decodes it: each maximal
// subpart of an ill-formed sequence becomes one U+FFFD (so that UTF-16 lengths agree with
// what ML.NET counts).
func validUTF8(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError || size > 1 {
			b.Write(p[i : i+size])
			i += size
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += maximalSubpart(p[i:])
	}
	return b.String()
}

// maximalSubpart returns the length of the ill-formed sequence at the start of p that Unicode
// (and .NET) replace with a single U+FFFD: a lead byte and the continuation bytes that could
// still have completed it.
func maximalSubpart(p []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := p[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	k := 1
	for ; k <= need && k < len(p); k++ {
		if c := p[k]; k == 1 && (c < lo || c > hi) || k > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return k
}

// readCodec reads a codec definition: load name, LEB128 parameter length and parameters. An
// unknown name returns errDead after skipping the parameters.
func (r *bytesReader) readCodec() (*codec, error) {
	name, err := r.str()
	if err != nil {
		return nil, fmt.Errorf("codec name: %w", err)
	}
	plen, err := r.leb()
	if err != nil {
		return nil, fmt.Errorf("codec %s parameter length: %w", name, err)
	}
	if plen > uint64(r.left()) {
		return nil, fmt.Errorf("%w: codec %s claims %d parameter bytes, %d remain: %w", ErrTruncated, name, plen, r.left(), errShort)
	}
	params, _ := r.take(int(plen))
	c, err := parseCodec(name, params)
	if err != nil && !errors.Is(err, errDead) {
		return nil, fmt.Errorf("codec %s: %w", name, err)
	}
	return c, err
}

// parseCodec interprets a codec's parameters.
func parseCodec(name string, params []byte) (*codec, error) {
	c := &codec{name: name}
	pr := &bytesReader{b: params}
	if p, ok := primByName[name]; ok {
		c.prim, c.item = p, name
	} else {
		switch name {
		case "Key2", "Key":
			if err := c.parseKey(pr); err != nil {
				return nil, err
			}
		case "VBuffer":
			if err := c.parseVector(pr); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w %q", errDead, name)
		}
	}
	if pr.left() != 0 {
		return nil, fmt.Errorf("%w: %d parameter bytes left unread", ErrFormat, pr.left())
	}
	return c, nil
}

func (c *codec) parseKey(pr *bytesReader) error {
	inner, err := pr.readCodec()
	if err != nil {
		return err
	}
	var max uint64
	switch inner.name {
	case "Byte":
		max = math.MaxUint8
	case "UInt16":
		max = math.MaxUint16
	case "UInt32":
		max = math.MaxUint32
	case "UInt64":
		max = math.MaxUint64
	default:
		return fmt.Errorf("%w: key over %s (want Byte, UInt16, UInt32 or UInt64)", ErrFormat, inner.name)
	}
	c.prim, c.item, c.keyName = inner.prim, inner.item, c.name
	if c.name == "Key2" {
		if c.keyCount, err = pr.u64(); err != nil {
			return fmt.Errorf("%w: key count %v", ErrFormat, err)
		}
		if c.keyCount == 0 || c.keyCount > max {
			return fmt.Errorf("%w: key count %d outside 1..%d", ErrFormat, c.keyCount, max)
		}
		return nil
	}
	contig, err := pr.u8()
	if err != nil {
		return fmt.Errorf("%w: key parameters %v", ErrFormat, err)
	}
	min, err := pr.u64()
	if err != nil {
		return fmt.Errorf("%w: key parameters %v", ErrFormat, err)
	}
	count, err := pr.i32()
	if err != nil {
		return fmt.Errorf("%w: key parameters %v", ErrFormat, err)
	}
	switch {
	case contig > 1:
		return fmt.Errorf("%w: key contiguous flag %d is not a bool", ErrFormat, contig)
	case contig != 1:
		return fmt.Errorf("%w: non-contiguous key (ML.NET rejects it too)", ErrFormat)
	case min != 0:
		return fmt.Errorf("%w: key minimum %d (ML.NET only reads keys with minimum 0 and rejects the file too)", ErrFormat, min)
	case count < 0 || uint64(count) > max:
		return fmt.Errorf("%w: key count %d outside 0..%d", ErrFormat, count, max)
	}
	c.keyCount = uint64(count)
	if count == 0 {
		c.keyCount = max
	}
	return nil
}

func (c *codec) parseVector(pr *bytesReader) error {
	inner, err := pr.readCodec()
	if err != nil {
		return err
	}
	if inner.vector {
		return fmt.Errorf("%w: vector of vectors", ErrFormat)
	}
	c.vector, c.prim, c.item, c.keyCount, c.keyName = true, inner.prim, inner.item, inner.keyCount, inner.keyName
	k, err := pr.i32()
	if err != nil {
		return fmt.Errorf("%w: vector dimension count %v", ErrFormat, err)
	}
	if k < 0 || int(k) > pr.left()/4 {
		return fmt.Errorf("%w: vector dimension count %d", ErrFormat, k)
	}
	c.dims = make([]int, k)
	prod := int64(1)
	for i := range c.dims {
		d, _ := pr.i32()
		if d < 0 {
			return fmt.Errorf("%w: negative vector dimension %d", ErrFormat, d)
		}
		c.dims[i] = int(d)
		if prod *= int64(d); prod > math.MaxInt32 {
			return fmt.Errorf("%w: vector size exceeds 2^31-1", ErrFormat)
		}
	}
	return nil
}

// appendLEB appends v as unsigned LEB128.
func appendLEB(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendString(b []byte, s string) []byte {
	return append(appendLEB(b, uint64(len(s))), s...)
}

func appendCodecDef(b []byte, name string, params []byte) []byte {
	b = appendString(b, name)
	b = appendLEB(b, uint64(len(params)))
	return append(b, params...)
}

// encode appends the codec definition as this package writes it (current names, Key2).
func (c *codec) encode(b []byte) []byte {
	item := appendCodecDef(nil, primInfo[c.prim].name, nil)
	if c.keyCount > 0 {
		item = appendCodecDef(nil, "Key2", binary.LittleEndian.AppendUint64(item, c.keyCount))
	}
	if !c.vector {
		return append(b, item...)
	}
	p := binary.LittleEndian.AppendUint32(item, uint32(len(c.dims)))
	for _, d := range c.dims {
		p = binary.LittleEndian.AppendUint32(p, uint32(d))
	}
	return appendCodecDef(b, "VBuffer", p)
}

// streamOf describes a codec's values as a stream (without name or storage).
func streamOf(c *codec) mlfeed.Stream {
	st := mlfeed.Stream{Type: c.elem(), KeyCount: c.keyCount, Dim: 1}
	if !c.vector {
		return st
	}
	st.Dim = c.size()
	switch {
	case st.Dim == 0: // variable size: Shape stays nil (a Shape with a zero means fixed size 0)
	case len(c.dims) > 1:
		st.Shape = append([]int(nil), c.dims...)
	case len(c.dims) == 1 && c.dims[0] == 1:
		st.Shape = []int{1}
	}
	return st
}

// codecFor returns the codec this package writes for a stream.
func codecFor(st *mlfeed.Stream) (*codec, error) {
	p := primOf(st.Type)
	if p == pInvalid {
		return nil, fmt.Errorf("%w: stream %q holds %s values, which IDV cannot store", ErrUnsupported, st.Name, st.Type)
	}
	c := &codec{prim: p, name: primInfo[p].name, item: primInfo[p].name}
	if st.KeyCount > 0 {
		var max uint64
		switch st.Type {
		case mlfeed.Uint8:
			max = math.MaxUint8
		case mlfeed.Uint16:
			max = math.MaxUint16
		case mlfeed.Uint32:
			max = math.MaxUint32
		case mlfeed.Uint64:
			max = math.MaxUint64
		default:
			return nil, fmt.Errorf("%w: key stream %q holds %s values; keys must be unsigned", ErrUnsupported, st.Name, st.Type)
		}
		if st.KeyCount > max {
			return nil, fmt.Errorf("%w: key stream %q: count %d exceeds the %s range", ErrRange, st.Name, st.KeyCount, st.Type)
		}
		c.keyCount, c.keyName, c.name = st.KeyCount, "Key2", "Key2"
	}
	scalar := st.Storage == mlfeed.Dense && st.Dim == 1 && st.Shape == nil
	if scalar {
		return c, nil
	}
	if st.Storage == mlfeed.Sparse && st.Dim == 0 {
		return nil, fmt.Errorf("%w: sparse stream %q has no dimension; IDV vectors need one", ErrUnsupported, st.Name)
	}
	c.vector, c.name = true, "VBuffer"
	if st.Shape != nil {
		c.dims = append([]int(nil), st.Shape...)
	} else {
		c.dims = []int{st.Dim}
	}
	if st.Dim > math.MaxInt32 {
		return nil, fmt.Errorf("%w: stream %q has dimension %d; IDV vectors hold at most 2^31-1 slots", ErrRange, st.Name, st.Dim)
	}
	return c, nil
}
