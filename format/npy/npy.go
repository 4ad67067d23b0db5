// Package npy reads and writes NumPy's array files: .npy (one array) and .npz (a zip archive
// of .npy members, as numpy.savez and numpy.savez_compressed write it).
//
// An array is one stream whose first dimension counts records: a record is one sequence of
// one sample whose shape is the remaining dimensions (a 1-d array holds records of one
// value). An .npz archive holds one stream per array, named by the array ("x" for member
// "x.npy"); every array must have the same first dimension.
//
// Every numeric dtype numpy writes is read: bool, signed and unsigned integers of 1 to 8 bytes,
// float32, float64, complex64 and complex128, in either byte order, in C or Fortran order,
// in format versions 1.0, 2.0 and 3.0; unicode strings ('<U') become String streams, and
// datetime64 and timedelta64 of any unit DateTime and Duration ticks (written back as
// datetime64[100ns] and timedelta64[100ns]).
// Little-endian C-order arrays in a .npy file or a stored .npz member are handed out from the
// memory-mapped file without copying; big-endian or Fortran-order arrays are converted while
// reading, and deflated members are inflated into memory on first use.
//
// Writers produce the bytes numpy.save and numpy.savez produce for the same array: the same
// header text, key order, padding, format version and zip layout (little-endian, C order).
// savez_compressed's archives are reproduced except for the deflate stream itself, which
// zlib and Go encode differently (both inflate to the same bytes).
package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"

	"github.com/mlfeed/mlfeed/internal/half"
)

var (
	// ErrFormat is wrapped by errors for data that is not a valid .npy or .npz file.
	ErrFormat = fmt.Errorf("npy: %w", mlfeed.ErrFormat)
	// ErrTruncated is wrapped by errors for arrays that end before their header says.
	ErrTruncated = fmt.Errorf("npy: %w", mlfeed.ErrTruncated)
	// ErrTooLarge is wrapped by errors for headers that announce more data than the file holds.
	ErrTooLarge = fmt.Errorf("npy: %w", mlfeed.ErrTooLarge)
	// ErrUnsupported is wrapped by errors for dtypes mlfeed has no type for (float16,
	// longdouble, bytes, objects, structured arrays) and for data an array cannot hold
	// (sparse streams, sequences of several samples).
	ErrUnsupported = fmt.Errorf("npy: %w", mlfeed.ErrUnsupported)
)

// Magic is the first six bytes of every .npy array.
const Magic = "\x93NUMPY"

// MaxHeaderLen bounds the header dictionary a reader accepts (numpy's own limit for
// untrusted files is 10000 bytes; format 2.0 allows up to 4 GiB).
const MaxHeaderLen = 1 << 20

// Header describes one array: its dtype, its memory order and its shape.
type Header struct {
	// Version is the format version, 1, 2 or 3 (minor version 0).
	Version int
	// Descr is the dtype string as the file spells it ("<f8", "|u1", ">i4", "<U7").
	Descr string
	// Type is the element type the dtype maps to.
	Type mlfeed.ElemType
	// BigEndian is set for '>' dtypes of more than one byte.
	BigEndian bool
	// Half is set for float16 ('<f2', '>f2'): Type is then Float32 and ItemSize 2, and the
	// values are widened as they are read (every float16 is exactly a float32).
	Half bool
	// Unit is the unit of a datetime64 ('M8') or timedelta64 ('m8') array as numpy writes it
	// ("ns", "100ns", "D"), whose counts are converted to mlfeed's ticks as they are read:
	// Type is then DateTime or Duration. Empty for other dtypes.
	Unit string
	// ItemSize is the size of one element in bytes (4 × length for '<U').
	ItemSize int
	// Fortran is the header's fortran_order: the first axis varies fastest.
	Fortran bool
	// Shape is the array's shape; empty for a 0-d array.
	Shape []int
	// DataOffset is the size of the magic, version, length and header: where data starts.
	DataOffset int64

	ticks tickUnit // how Unit's counts become ticks
}

// Converted reports whether the elements are not their stored bytes even in little-endian C
// order: float16 is widened (Half), datetime64 and timedelta64 counts become ticks (Unit).
func (h *Header) Converted() bool {
	return h.Half || h.Unit != "" && h.ticks != (tickUnit{num: 1, den: 1})
}

// Records returns the number of records: Shape[0], or 1 for a 0-d array.
func (h *Header) Records() int {
	if len(h.Shape) == 0 {
		return 1
	}
	return h.Shape[0]
}

// RecordShape returns the shape of one record: Shape[1:].
func (h *Header) RecordShape() []int {
	if len(h.Shape) == 0 {
		return nil
	}
	return h.Shape[1:]
}

// RecordElems returns the number of elements in one record.
func (h *Header) RecordElems() int {
	n := 1
	for _, d := range h.RecordShape() {
		n *= d
	}
	return n
}

// DataSize returns the number of data bytes the header announces, or ok == false when it
// overflows.
func (h *Header) DataSize() (n int64, ok bool) {
	p := uint64(h.ItemSize)
	for _, d := range h.Shape {
		hi, lo := bits.Mul64(p, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// dtypes maps a dtype's kind and size to an element type.
func dtypeType(kind byte, size int) (mlfeed.ElemType, bool) {
	switch kind {
	case 'b':
		if size == 1 {
			return mlfeed.Bool, true
		}
	case 'i':
		switch size {
		case 1:
			return mlfeed.Int8, true
		case 2:
			return mlfeed.Int16, true
		case 4:
			return mlfeed.Int32, true
		case 8:
			return mlfeed.Int64, true
		}
	case 'u':
		switch size {
		case 1:
			return mlfeed.Uint8, true
		case 2:
			return mlfeed.Uint16, true
		case 4:
			return mlfeed.Uint32, true
		case 8:
			return mlfeed.Uint64, true
		}
	case 'f':
		switch size {
		case 4:
			return mlfeed.Float32, true
		case 8:
			return mlfeed.Float64, true
		}
	case 'c':
		switch size {
		case 8:
			return mlfeed.Complex64, true
		case 16:
			return mlfeed.Complex128, true
		}
	case 'U':
		return mlfeed.String, true
	}
	return mlfeed.Invalid, false
}

// Descr returns the dtype string numpy writes for little-endian elements of type t ("<f8",
// "|b1"; "<M8[100ns]" and "<m8[100ns]" for DateTime and Duration), or "" when t has no numpy
// dtype. String streams need a length: see StringDescr. AppendData gives the elements' bytes.
func Descr(t mlfeed.ElemType) string {
	switch t {
	case mlfeed.DateTime:
		return "<M8[100ns]"
	case mlfeed.Duration:
		return "<m8[100ns]"
	case mlfeed.Bool:
		return "|b1"
	case mlfeed.Int8:
		return "|i1"
	case mlfeed.Uint8:
		return "|u1"
	case mlfeed.Int16:
		return "<i2"
	case mlfeed.Int32:
		return "<i4"
	case mlfeed.Int64:
		return "<i8"
	case mlfeed.Uint16:
		return "<u2"
	case mlfeed.Uint32:
		return "<u4"
	case mlfeed.Uint64:
		return "<u8"
	case mlfeed.Float32:
		return "<f4"
	case mlfeed.Float64:
		return "<f8"
	case mlfeed.Complex64:
		return "<c8"
	case mlfeed.Complex128:
		return "<c16"
	}
	return ""
}

// StringDescr returns the dtype of unicode strings of up to n characters: "<Un".
func StringDescr(n int) string { return "<U" + strconv.Itoa(n) }

// parseDescr parses a dtype string such as "<f8" or "|b1".
func parseDescr(s string) (h Header, err error) {
	h.Descr = s
	if len(s) >= 3 && (s[1] == 'M' || s[1] == 'm') && s[2] == '8' {
		return parseTimeDescr(s)
	}
	if len(s) >= 2 && s[1] == 'O' { // Python 3's numpy writes "|O", without a size
		return h, fmt.Errorf("%w: dtype %q (%s) has no mlfeed type; numeric types, bool, datetime64, timedelta64 and unicode strings are supported", ErrUnsupported, s, kindName('O', 0))
	}
	if len(s) < 3 {
		return h, fmt.Errorf("%w: dtype %q is not a simple type", ErrUnsupported, s)
	}
	order, kind := s[0], s[1]
	size, err := strconv.Atoi(s[2:])
	if err != nil || size <= 0 || s[2] == '+' || s[2] == '0' {
		return h, fmt.Errorf("%w: dtype %q is not a simple type", ErrUnsupported, s)
	}
	if order != '<' && order != '>' && order != '|' && order != '=' {
		return h, fmt.Errorf("%w: dtype %q has byte order %q (want <, > or |)", ErrFormat, s, order)
	}
	t, ok := dtypeType(kind, size)
	if kind == 'f' && size == 2 {
		t, ok, h.Half = mlfeed.Float32, true, true
	}
	if !ok {
		return h, fmt.Errorf("%w: dtype %q (%s) has no mlfeed type; numeric types, bool, datetime64, timedelta64 and unicode strings are supported", ErrUnsupported, s, kindName(kind, size))
	}
	h.Type, h.ItemSize = t, size
	if t == mlfeed.String {
		if size > 1<<20 {
			return h, fmt.Errorf("%w: dtype %q: strings of more than %d characters", ErrUnsupported, s, 1<<20)
		}
		h.ItemSize = 4 * size
	}
	if order == '|' && h.ItemSize > 1 && t != mlfeed.String {
		return h, fmt.Errorf("%w: dtype %q: byte order '|' on a %d-byte type", ErrFormat, s, size)
	}
	h.BigEndian = order == '>' && h.ItemSize > 1
	return h, nil
}

func kindName(kind byte, size int) string {
	switch {
	case kind == 'f' || kind == 'c':
		return "extended precision"
	case kind == 'S' || kind == 'a':
		return "bytes"
	case kind == 'O':
		return "Python objects"
	case kind == 'V':
		return "raw or structured"
	}
	return "unknown kind"
}

// ParseHeader parses the header at the start of b, which must hold all of it (the magic,
// version, length and dictionary). name is used in errors.
func ParseHeader(b []byte, name string) (*Header, error) {
	if len(b) < 8 {
		return nil, mlfeed.OffsetError(name, int64(len(b)), "magic", fmt.Errorf("%w: file ends inside the magic", ErrTruncated))
	}
	if string(b[:6]) != Magic {
		return nil, mlfeed.OffsetError(name, 0, "magic", fmt.Errorf("%w: not a NumPy array (no \\x93NUMPY magic)", ErrFormat))
	}
	major, minor := int(b[6]), int(b[7])
	var hlen, start int
	switch {
	case major == 1 && minor == 0:
		if len(b) < 10 {
			return nil, mlfeed.OffsetError(name, int64(len(b)), "header length", fmt.Errorf("%w: file ends inside the header length", ErrTruncated))
		}
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case (major == 2 || major == 3) && minor == 0:
		if len(b) < 12 {
			return nil, mlfeed.OffsetError(name, int64(len(b)), "header length", fmt.Errorf("%w: file ends inside the header length", ErrTruncated))
		}
		l := binary.LittleEndian.Uint32(b[8:])
		if l > MaxHeaderLen {
			return nil, mlfeed.OffsetError(name, 8, "header length", fmt.Errorf("%w: header of %d bytes (at most %d accepted)", ErrTooLarge, l, MaxHeaderLen))
		}
		hlen, start = int(l), 12
	default:
		return nil, mlfeed.OffsetError(name, 6, "version", fmt.Errorf("%w: format version %d.%d (known: 1.0, 2.0, 3.0)", ErrUnsupported, major, minor))
	}
	if len(b) < start+hlen {
		return nil, mlfeed.OffsetError(name, int64(len(b)), "header", fmt.Errorf("%w: file ends inside the %d-byte header", ErrTruncated, hlen))
	}
	text := b[start : start+hlen]
	if major == 3 && !utf8.Valid(text) {
		return nil, mlfeed.OffsetError(name, int64(start), "header", fmt.Errorf("%w: format 3.0 header is not UTF-8", ErrFormat))
	}
	h, pos, err := parseDict(text)
	if err != nil {
		return nil, mlfeed.OffsetError(name, int64(start+pos), "header", err)
	}
	h.Version = major
	h.DataOffset = int64(start + hlen)
	if _, ok := h.DataSize(); !ok {
		return nil, mlfeed.OffsetError(name, int64(start), "shape", fmt.Errorf("%w: shape %v of %d-byte elements overflows", ErrTooLarge, h.Shape, h.ItemSize))
	}
	return h, nil
}

// ReadHeader reads a header from r, reading nothing past it.
func ReadHeader(r io.Reader, name string) (*Header, error) {
	pre := make([]byte, 12)
	n, _ := io.ReadFull(r, pre[:10])
	if n == 10 && pre[6] != 1 {
		m, _ := io.ReadFull(r, pre[10:12])
		n += m
	}
	pre = pre[:n]
	hlen, ok := headerLen(pre)
	if !ok {
		return ParseHeader(pre, name) // reports what is wrong with the prefix
	}
	full := make([]byte, len(pre)+hlen) // hlen ≤ MaxHeaderLen
	copy(full, pre)
	m, _ := io.ReadFull(r, full[len(pre):])
	return ParseHeader(full[:len(pre)+m], name)
}

// headerLen returns the header length a complete, valid prefix (magic, version, length)
// announces.
func headerLen(pre []byte) (int, bool) {
	if len(pre) < 10 || string(pre[:6]) != Magic || pre[7] != 0 {
		return 0, false
	}
	switch pre[6] {
	case 1:
		return int(binary.LittleEndian.Uint16(pre[8:])), len(pre) == 10
	case 2, 3:
		if len(pre) < 12 {
			return 0, false
		}
		l := binary.LittleEndian.Uint32(pre[8:])
		return int(l), l <= MaxHeaderLen
	}
	return 0, false
}

// parseDict parses the header dictionary: {'descr': ..., 'fortran_order': ..., 'shape': ...}
// with Python literal syntax. pos is the offset of an error in text.
func parseDict(text []byte) (h *Header, pos int, err error) {
	p := &lit{b: text}
	bad := func(f string, a ...any) (*Header, int, error) {
		return nil, p.i, fmt.Errorf("%w: header: "+f, append([]any{ErrFormat}, a...)...)
	}
	p.space()
	if !p.eat('{') {
		return bad("want a dictionary starting with '{'")
	}
	var descr *string
	var fortran *bool
	var shape []int
	haveShape := false
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, ok := p.str()
		if !ok {
			return bad("want a quoted key")
		}
		p.space()
		if !p.eat(':') {
			return bad("want ':' after key %q", key)
		}
		p.space()
		switch key {
		case "descr":
			if descr != nil {
				return bad("key 'descr' twice")
			}
			s, ok := p.str()
			if !ok {
				if p.i < len(p.b) && p.b[p.i] == '[' {
					return nil, p.i, fmt.Errorf("%w: structured dtypes (a descr list)", ErrUnsupported)
				}
				return bad("descr is not a string")
			}
			descr = &s
		case "fortran_order":
			if fortran != nil {
				return bad("key 'fortran_order' twice")
			}
			var v bool
			switch {
			case p.word("True"):
				v = true
			case p.word("False"):
			default:
				return bad("fortran_order is not True or False")
			}
			fortran = &v
		case "shape":
			if haveShape {
				return bad("key 'shape' twice")
			}
			var ok bool
			if shape, ok = p.tuple(); !ok {
				return bad("shape is not a tuple of non-negative integers")
			}
			haveShape = true
		default:
			return bad("unknown key %q (want descr, fortran_order, shape)", key)
		}
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return bad("want ',' or '}'")
		}
	}
	p.space()
	if p.i != len(p.b) {
		return bad("text after the dictionary")
	}
	if descr == nil || fortran == nil || !haveShape {
		return bad("the keys descr, fortran_order and shape are all required")
	}
	hd, err := parseDescr(*descr)
	if err != nil {
		return nil, 0, err
	}
	hd.Fortran = *fortran
	hd.Shape = shape
	return &hd, 0, nil
}

// lit scans Python literals.
type lit struct {
	b []byte
	i int
}

func (p *lit) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *lit) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *lit) word(w string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(w)) {
		p.i += len(w)
		return true
	}
	return false
}

// str scans a quoted string without escapes (numpy's keys and dtypes have none).
func (p *lit) str() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '\'' && p.b[p.i] != '"' {
		return "", false
	}
	q := p.b[p.i]
	end := bytes.IndexByte(p.b[p.i+1:], q)
	if end < 0 || bytes.IndexByte(p.b[p.i+1:p.i+1+end], '\\') >= 0 {
		return "", false
	}
	s := string(p.b[p.i+1 : p.i+1+end])
	p.i += end + 2
	return s, true
}

// tuple scans a tuple of non-negative integers: (), (3,), (2, 3).
func (p *lit) tuple() ([]int, bool) {
	if !p.eat('(') {
		return nil, false
	}
	shape := []int{}
	for {
		p.space()
		if p.eat(')') {
			return shape, true
		}
		if len(shape) >= 64 {
			return nil, false
		}
		j := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		v, err := strconv.ParseInt(string(p.b[j:p.i]), 10, 64)
		if err != nil || v > 1<<48 {
			return nil, false
		}
		p.eat('L') // Python 2 longs
		shape = append(shape, int(v))
		p.space()
		if p.eat(')') {
			// A one-element tuple needs its comma in Python: (3) is an integer.
			return shape, len(shape) != 1
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// AppendHeader appends the header numpy.save writes for a C-order array of dtype descr and
// the given shape: the dictionary in sorted key order, the spare spaces numpy leaves for the
// first dimension to grow, padding to a multiple of 64 bytes, and the oldest format version
// that can hold it.
func AppendHeader(dst []byte, descr string, shape []int) []byte {
	var d strings.Builder
	d.WriteString("{'descr': ")
	d.WriteString(pyRepr(descr))
	d.WriteString(", 'fortran_order': False, 'shape': (")
	for i, s := range shape {
		if i > 0 {
			d.WriteString(", ")
		}
		d.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		d.WriteByte(',')
	}
	d.WriteString("), }")
	if len(shape) > 0 {
		// numpy's GROWTH_AXIS_MAX_DIGITS: room for the first axis to reach 21 digits.
		d.WriteString(strings.Repeat(" ", max(0, 21-len(strconv.Itoa(shape[0])))))
	}
	text := d.String()
	hlen := len(text) + 1 // the final newline
	// numpy pads with 1 to 64 spaces (a header already aligned gets 64), and uses format 2.0
	// only when the padded length does not fit version 1.0's 16 bits.
	version, pad := 1, 64-(10+hlen)%64
	if hlen+pad > 0xFFFF {
		version, pad = 2, 64-(12+hlen)%64
	}
	dst = append(dst, Magic...)
	dst = append(dst, byte(version), 0)
	if version == 1 {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(hlen+pad))
	} else {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(hlen+pad))
	}
	dst = append(dst, text...)
	for range pad {
		dst = append(dst, ' ')
	}
	return append(dst, '\n')
}

// pyRepr returns Python's repr of an ASCII string without quotes or backslashes.
func pyRepr(s string) string { return "'" + s + "'" }

// Match reports whether head starts like a .npy array.
func Match(head []byte) bool {
	return len(head) >= 8 && string(head[:6]) == Magic && head[7] == 0 && head[6] >= 1 && head[6] <= 3
}

// MatchNPZ reports whether head starts like an .npz archive: a zip file whose first member
// is a .npy array.
func MatchNPZ(head []byte) bool {
	if len(head) < 30 || string(head[:4]) != "PK\x03\x04" {
		return false
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	return 30+n <= len(head) && strings.HasSuffix(string(head[30:30+n]), ".npy")
}

// AppendC appends the elements of an array with header h to dst in C order and little-endian
// byte order, converting a Fortran-order or big-endian array, widening float16 to float32
// (h.Half: 4 bytes appended per element) and datetime64 and timedelta64 counts to ticks (h.Unit:
// a count without exact ticks is ErrUnsupported); data holds the array's data (what follows the
// header), at least DataSize bytes. Unicode ('<U') arrays are not numbers: AppendC reports
// ErrUnsupported for them, and ErrTruncated when data is short.
func (h *Header) AppendC(dst, data []byte) ([]byte, error) {
	if h.Type == mlfeed.String {
		return dst, fmt.Errorf("%w: dtype %q: unicode strings are not numbers", ErrUnsupported, h.Descr)
	}
	n, ok := h.DataSize()
	if !ok || n > int64(len(data)) {
		return dst, fmt.Errorf("%w: the array needs %d bytes of data, %d remain", ErrTruncated, n, len(data))
	}
	start := len(dst)
	a := array{h: h}
	if h.Half {
		src := data[:n]
		if a.fortran() {
			src = make([]byte, n)
			gatherFortran(src, data, h.Shape, h.ItemSize, 0, h.Shape[0])
		}
		dst = slices.Grow(dst, 2*int(n))[:start+2*int(n)]
		half.Widen(dst[start:], src, h.BigEndian)
		return dst, nil
	}
	if a.fortran() {
		dst = slices.Grow(dst, int(n))[:start+int(n)]
		gatherFortran(dst[start:], data, h.Shape, h.ItemSize, 0, h.Shape[0])
	} else {
		dst = append(dst, data[:n]...)
	}
	if h.BigEndian {
		unit := h.ItemSize
		if h.Type == mlfeed.Complex64 || h.Type == mlfeed.Complex128 {
			unit /= 2
		}
		swapBytes(dst[start:], unit)
	}
	if h.Unit != "" {
		if k, err := h.toTicks(dst[start:]); err != nil {
			return dst, fmt.Errorf("element %d: %w", k, err)
		}
	}
	return dst, nil
}
