package hdf5

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/mlfeed/mlfeed"
)

// Class is the class of a datatype this package supports.
type Class int

// The supported datatype classes.
const (
	Integer   Class = iota + 1 // fixed-point: 1, 2, 4 or 8 bytes, signed or unsigned
	Float                      // IEEE 754 binary32 or binary64
	String                     // fixed-length string of Size bytes
	VarString                  // variable-length string (in the global heap)
	Compound                   // records of Size bytes holding named members (Members)
)

// Datatype is an element type.
type Datatype struct {
	Class     Class
	Size      int  // bytes per element as stored (for VarString: the size of a heap reference)
	Signed    bool // Integer only
	BigEndian bool // Integer and Float
	UTF8      bool // String and VarString: the character set is UTF-8 (else ASCII)
	// Pad is a fixed-length String's padding: PadNullTerm, PadNull or PadSpace.
	Pad uint8
	// Float only: IEEE binary16 (numpy's float16). It has no mlfeed type (ElemType is
	// Invalid): format/hdf5 widens it to float32, which holds every float16 exactly.
	Half bool
	// Integer only: stored as an enumeration of this integer type or as a bitfield, read as
	// the integers (h5py reads both so); the names of an enumeration's members are not kept.
	Enum, Bitfield bool
	// Integer only: an integer of fewer bits than its bytes hold (HDF5's precision and bit
	// offset, as H5Tset_precision and H5Tset_offset make them; the n-bit filter stores just
	// those bits): its value is the Bits bits from bit BitOffset, sign-extended when Signed,
	// and the bits around them (padding) are ignored, as h5py reads such integers. Both are 0
	// for an integer that fills its bytes.
	Bits, BitOffset int
	// Bool marks h5py's bool: an enumeration of a 1-byte integer whose members are exactly
	// FALSE (0) and TRUE (1). ElemType is then mlfeed.Bool.
	Bool bool
	// Compound only: the members, in the order stored.
	Members []Member
}

// Member is a member (a field) of a compound datatype. An array member (numpy's (3,) field)
// holds Dims' product of elements of Type, one after another in C order.
type Member struct {
	Name   string
	Offset int      // byte offset in the record
	Size   int      // bytes in the record
	Type   Datatype // the type of one element; the zero Datatype when Err is set
	Dims   []uint64 // an array member's dimensions; nil for one element
	// Err, when not nil, says why the member's type is outside the supported subset (a nested
	// compound, a variable-length or reference type, ...); it wraps ErrUnsupported.
	Err error
}

// Elems returns the number of elements of the member in one record.
func (m *Member) Elems() uint64 {
	n := uint64(1)
	for _, d := range m.Dims {
		n *= d
	}
	return n
}

// Gather copies member m of each record in recs (records of size bytes) to dst, which must
// hold len(recs)/size*m.Size bytes, converting numbers as ReadRows does (little-endian,
// narrow integers widened).
func (m *Member) Gather(dst, recs []byte, size int) {
	for at, o := m.Offset, 0; at+m.Size <= len(recs) && o < len(dst); at, o = at+size, o+m.Size {
		copy(dst[o:o+m.Size], recs[at:at+m.Size])
	}
	m.Type.toLE(dst)
}

// converts reports whether elements of t change between the file and ReadRows: big-endian
// numbers, and narrow integers (Bits).
func (t Datatype) converts() bool {
	return (t.BigEndian && t.Class != String && t.Class != VarString && t.Size > 1) || t.Bits != 0
}

// toLE converts whole elements of t from the file's form to ReadRows': big-endian numbers to
// little-endian, then narrow integers to the value of their bits (Bits from BitOffset),
// sign-extended when Signed, zero-extended otherwise.
func (t Datatype) toLE(b []byte) {
	if t.BigEndian && t.Class != String && t.Class != VarString {
		swap(b, t.Size)
	}
	if t.Bits == 0 || t.Class != Integer || t.Size < 1 || t.Size > 8 {
		return
	}
	mask := ^uint64(0) >> (64 - t.Bits)
	sign := uint64(0)
	if t.Signed {
		sign = 1 << (t.Bits - 1)
	}
	off := uint(t.BitOffset)
	switch t.Size {
	case 1:
		for i := range b {
			v := uint64(b[i]) >> off & mask
			b[i] = byte((v ^ sign) - sign)
		}
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			v := uint64(binary.LittleEndian.Uint16(b[i:])) >> off & mask
			binary.LittleEndian.PutUint16(b[i:], uint16((v^sign)-sign))
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			v := uint64(binary.LittleEndian.Uint32(b[i:])) >> off & mask
			binary.LittleEndian.PutUint32(b[i:], uint32((v^sign)-sign))
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			v := binary.LittleEndian.Uint64(b[i:]) >> off & mask
			binary.LittleEndian.PutUint64(b[i:], (v^sign)-sign)
		}
	}
}

// ElemType returns the mlfeed element type of a numeric datatype, or mlfeed.Invalid.
func (t Datatype) ElemType() mlfeed.ElemType {
	switch t.Class {
	case Float:
		switch t.Size {
		case 4:
			return mlfeed.Float32
		case 8:
			return mlfeed.Float64
		}
	case Integer:
		if t.Bool {
			return mlfeed.Bool
		}
		signed := [...]mlfeed.ElemType{1: mlfeed.Int8, 2: mlfeed.Int16, 4: mlfeed.Int32, 8: mlfeed.Int64}
		unsigned := [...]mlfeed.ElemType{1: mlfeed.Uint8, 2: mlfeed.Uint16, 4: mlfeed.Uint32, 8: mlfeed.Uint64}
		if t.Size < 1 || t.Size > 8 {
			return mlfeed.Invalid
		}
		if t.Signed {
			return signed[t.Size]
		}
		return unsigned[t.Size]
	}
	return mlfeed.Invalid
}

// String describes the type ("int32 big-endian", "vlen string", ...).
func (t Datatype) String() string {
	s := ""
	switch t.Class {
	case Float, Integer:
		s = t.ElemType().String()
		if t.Half {
			s = "float16"
		}
		if t.BigEndian && t.Size > 1 {
			s += " big-endian"
		}
		if t.Bits != 0 {
			s += fmt.Sprintf(" of %d bits at bit %d", t.Bits, t.BitOffset)
		}
		if t.Enum {
			s += " enum"
		} else if t.Bitfield {
			s += " bitfield"
		}
	case String:
		s = fmt.Sprintf("string of %d bytes", t.Size)
	case VarString:
		s = "variable-length string"
	case Compound:
		s = fmt.Sprintf("compound (%d members, %d bytes)", len(t.Members), t.Size)
	}
	return s
}

var classNames = []string{"fixed-point", "floating-point", "time", "string", "bitfield", "opaque", "compound", "reference", "enum", "variable-length", "array"}

// parseDatatype decodes a datatype message.
func (f *File) parseDatatype(b []byte, at uint64) (Datatype, error) {
	c := &cursor{b: b, base: at}
	cv := c.u8()
	bits := c.bytes(3)
	size := int(c.u32())
	if c.bad {
		return Datatype{}, f.errAt(at, "datatype", ErrFormat, "short datatype message")
	}
	class := int(cv & 0x0f)
	t := Datatype{Size: size}
	switch class {
	case 0:
		off, prec := c.u16(), c.u16()
		t.Class, t.BigEndian, t.Signed = Integer, bits[0]&1 != 0, bits[0]&8 != 0
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return t, f.errAt(at, "datatype", ErrUnsupported, "%d-byte integers", size)
		}
		if !c.bad && (off != 0 || int(prec) != 8*size) {
			if prec == 0 || int(off)+int(prec) > 8*size {
				return t, f.errAt(at, "datatype", ErrFormat, "integers of %d bits at bit offset %d in %d bytes", prec, off, size)
			}
			t.Bits, t.BitOffset = int(prec), int(off)
		}
	case 4: // a bitfield: unsigned integers of its size, as h5py reads it
		off, prec := c.u16(), c.u16()
		t.Class, t.BigEndian, t.Bitfield = Integer, bits[0]&1 != 0, true
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return t, f.errAt(at, "datatype", ErrUnsupported, "%d-byte bitfields", size)
		}
		if !c.bad && (off != 0 || int(prec) != 8*size) {
			return t, f.errAt(at, "datatype", ErrUnsupported, "bitfields of %d bits at bit offset %d in %d bytes", prec, off, size)
		}
	case 8: // an enumeration: its base integer type's values, as h5py reads it
		if len(b) <= c.p || b[c.p]&0x0f != 0 {
			return t, f.errAt(at, "datatype", ErrUnsupported, "enum datatype of a base other than an integer")
		}
		base, err := f.parseDatatype(b[c.p:], at+uint64(c.p))
		if err != nil {
			return t, err
		}
		if base.Size != size {
			return t, f.errAt(at, "datatype", ErrFormat, "enum of %d bytes over a %d-byte integer", size, base.Size)
		}
		version := cv >> 4
		n := int(bits[0]) | int(bits[1])<<8
		t = base
		t.Enum = true
		t.Bool = size == 1 && len(b) >= c.p+12 && isBoolEnum(b[c.p+12:], n, version)
	case 1:
		t.Class, t.BigEndian = Float, bits[0]&1 != 0
		if bits[0]&0x40 != 0 {
			return t, f.errAt(at, "datatype", ErrUnsupported, "VAX floating-point byte order")
		}
		off, prec := c.u16(), c.u16()
		c.skip(1) // the exponent's bit position
		ebits := c.u8()
		c.u8()
		mant := c.u8()
		bias := c.u32()
		t.Half = size == 2 && mant == 10 && ebits == 5 && bias == 15
		if (size != 4 && size != 8 && !t.Half) || c.bad || off != 0 || int(prec) != 8*size || (size == 4 && mant != 23) || (size == 8 && mant != 52) {
			return t, f.errAt(at, "datatype", ErrUnsupported, "%d-byte floating point with %d-bit mantissa (only IEEE float16, float32 and float64)", size, mant)
		}
	case 3:
		t.Class, t.UTF8, t.Pad = String, bits[0]>>4 == 1, bits[0]&0x0f
		if size < 1 { // HDF5's H5Tset_size refuses 0 too
			return t, f.errAt(at, "datatype", ErrFormat, "fixed-length string of %d bytes", size)
		}
		if uint64(size) > uint64(f.size)+64 {
			return t, f.errAt(at, "datatype", ErrTooLarge, "string of %d bytes", size)
		}
	case 6:
		t.Class = Compound
		if size < 1 {
			return t, f.errAt(at, "datatype", ErrFormat, "compound datatype of %d bytes", size)
		}
		var err error
		t.Members, err = f.parseMembers(b, at, cv>>4, int(bits[0])|int(bits[1])<<8, size)
		return t, err
	case 9:
		if bits[0]&3 != 1 {
			return t, f.errAt(at, "datatype", ErrUnsupported, "variable-length sequences")
		}
		t.Class, t.UTF8 = VarString, bits[1]&0x0f == 1
		if size != 4+f.offSize+4 {
			return t, f.errAt(at, "datatype", ErrFormat, "variable-length string of size %d", size)
		}
	default:
		name := "class " + fmt.Sprint(class)
		if class < len(classNames) {
			name = classNames[class]
		}
		return t, f.errAt(at, "datatype", ErrUnsupported, "%s datatype", name)
	}
	return t, nil
}

// isBoolEnum reports whether the members of an enumeration of 1-byte integers (p: the
// properties after the base type's 12 bytes: n names, then n values) are exactly FALSE = 0
// and TRUE = 1, as h5py writes numpy's bool. Names are NUL-terminated, padded to a multiple
// of 8 bytes before version 3.
func isBoolEnum(p []byte, n int, version byte) bool {
	if n != 2 {
		return false
	}
	var names [2]string
	for i := range names {
		end := bytes.IndexByte(p, 0)
		if end < 0 {
			return false
		}
		names[i] = string(p[:end])
		skip := end + 1
		if version < 3 {
			skip = (end + 8) &^ 7
		}
		if skip > len(p) {
			return false
		}
		p = p[skip:]
	}
	if len(p) < 2 {
		return false
	}
	v := map[string]byte{names[0]: p[0], names[1]: p[1]}
	f, okF := v["FALSE"]
	t, okT := v["TRUE"]
	return okF && okT && f == 0 && t == 1
}

// Dataspace is the shape of a dataset or attribute.
type dataspace struct {
	dims    []uint64
	maxDims []uint64 // nil when not stored (= dims)
	null    bool
}

// count returns the number of elements, checking for overflow.
func (s dataspace) count() (uint64, bool) {
	if s.null {
		return 0, true
	}
	n := uint64(1)
	for _, d := range s.dims {
		if d != 0 && n > math.MaxUint64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func (f *File) parseDataspace(b []byte, at uint64) (dataspace, error) {
	c := &cursor{b: b, base: at}
	v := c.u8()
	rank := int(c.u8())
	flags := c.u8()
	var s dataspace
	switch v {
	case 1:
		c.skip(5)
	case 2:
		switch c.u8() {
		case 0: // scalar
		case 1:
		case 2:
			s.null = true
		default:
			return s, f.errAt(at, "dataspace", ErrFormat, "unknown dataspace type")
		}
	default:
		return s, f.errAt(at, "dataspace", ErrUnsupported, "dataspace version %d", v)
	}
	if rank > 32 {
		return s, f.errAt(at, "dataspace", ErrFormat, "rank %d", rank)
	}
	if flags&2 != 0 && v == 1 {
		return s, f.errAt(at, "dataspace", ErrUnsupported, "dataspace permutation")
	}
	s.dims = make([]uint64, rank)
	for i := range s.dims {
		s.dims[i] = c.uint(f.lenSize)
	}
	if flags&1 != 0 {
		s.maxDims = make([]uint64, rank)
		for i := range s.maxDims {
			s.maxDims[i] = c.uint(f.lenSize)
		}
	}
	if c.bad {
		return s, f.errAt(at, "dataspace", ErrFormat, "short dataspace message")
	}
	return s, nil
}

// Attribute is an attribute of a group or dataset.
type Attribute struct {
	Name string
	Type Datatype
	Dims []uint64 // nil for a scalar
	f    *File
	data []byte
	at   uint64
	err  error // the datatype is outside the supported subset
}

// Attrs returns the object's attributes.
func (o *Object) Attrs() ([]*Attribute, error) {
	f := o.f
	var out []*Attribute
	for _, m := range o.o.msgs {
		switch m.typ {
		case msgAttribute:
			a, err := f.parseAttribute(m.data, m.addr)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case msgAttrInfo:
			err := f.denseObjects(m, 2, 8, 0, "attribute", func(data []byte, heap uint64) error {
				a, err := f.parseAttribute(data, heap)
				if err == nil {
					out = append(out, a)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Attr returns the attribute name; the error wraps ErrNotFound when there is none.
func (o *Object) Attr(name string) (*Attribute, error) {
	as, err := o.Attrs()
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, &noAttr{o, name}
}

// noAttr is Attr's error for a missing attribute: its message names the object's path, built
// only when the message is asked for (a walk asks every group for an attribute most lack).
type noAttr struct {
	o    *Object
	name string
}

func (e *noAttr) Error() string {
	return fmt.Sprintf("%v: no attribute %q on %s of %s", ErrNotFound, e.name, e.o.Path(), e.o.f.name)
}

func (e *noAttr) Unwrap() error { return ErrNotFound }

func pad8(n int) int { return (n + 7) &^ 7 }

func (f *File) parseAttribute(b []byte, at uint64) (*Attribute, error) {
	c := &cursor{b: b, base: at}
	v := c.u8()
	flags := c.u8()
	nameLen, typeLen, spaceLen := int(c.u16()), int(c.u16()), int(c.u16())
	if v == 3 {
		c.u8()
	}
	if v < 1 || v > 3 {
		return nil, f.errAt(at, "attribute", ErrUnsupported, "attribute message version %d", v)
	}
	if flags&3 != 0 {
		return nil, f.errAt(at, "attribute", ErrUnsupported, "shared datatype or dataspace in an attribute")
	}
	p := func(n int) int {
		if v == 1 {
			return pad8(n)
		}
		return n
	}
	name := c.bytes(p(nameLen))
	if len(name) >= nameLen {
		name = name[:nameLen]
	}
	name = bytes.TrimRight(name, "\x00")
	tb := c.bytes(p(typeLen))
	sat := c.pos()
	sb := c.bytes(p(spaceLen))
	if c.bad {
		return nil, f.errAt(at, "attribute", ErrFormat, "short attribute message")
	}
	a := &Attribute{Name: string(name), f: f, at: at}
	var err error
	if a.Type, err = f.parseDatatype(tb, at); err != nil {
		if !errors.Is(err, ErrUnsupported) {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		// keep the attribute (its name is valid) but not its value
		a.Type, a.err = Datatype{}, fmt.Errorf("attribute %q: %w", a.Name, err)
		return a, nil
	}
	s, err := f.parseDataspace(sb, sat)
	if err != nil {
		return nil, err
	}
	if len(s.dims) > 0 {
		a.Dims = s.dims
	}
	n, ok := s.count()
	if !ok || n > uint64(c.rest())/uint64(max(a.Type.Size, 1)) {
		return nil, f.errAt(at, "attribute", ErrFormat, "attribute %q holds %d elements of %d bytes in %d bytes", a.Name, n, a.Type.Size, c.rest())
	}
	a.data = c.bytes(int(n) * a.Type.Size)
	return a, nil
}

// String returns the value of a string attribute that holds one string (scalar or one element).
// A fixed-length string ends at its first NUL; its padding (NUL or space) is kept otherwise.
func (a *Attribute) String() (string, error) {
	if a.err != nil {
		return "", a.err
	}
	n := 1
	for _, d := range a.Dims {
		n *= int(d)
	}
	if n != 1 {
		return "", fmt.Errorf("%w: attribute %q holds %d values, not one string", ErrUnsupported, a.Name, n)
	}
	switch a.Type.Class {
	case String:
		s := a.data
		if k := bytes.IndexByte(s, 0); k >= 0 {
			s = s[:k]
		}
		return string(s), nil
	case VarString:
		return a.f.vlenString(a.data, a.at)
	}
	return "", fmt.Errorf("%w: attribute %q is %s, not a string", ErrUnsupported, a.Name, a.Type)
}

// The paddings of a fixed-length string (Datatype.Pad).
const (
	PadNullTerm = 0 // the string ends at its first NUL
	PadNull     = 1 // NULs pad the string to its size
	PadSpace    = 2 // spaces pad the string to its size (Fortran's)
)

// FixedString returns the string a fixed-length String element b holds, as h5py (through
// numpy's bytes) gives it: up to the first NUL for PadNullTerm, less the trailing NULs for
// PadNull, less the trailing spaces (and NULs) for PadSpace.
func (t Datatype) FixedString(b []byte) string {
	switch t.Pad {
	case PadNullTerm:
		if k := bytes.IndexByte(b, 0); k >= 0 {
			b = b[:k]
		}
	case PadSpace:
		b = bytes.TrimRight(b, " \x00")
	default:
		b = bytes.TrimRight(b, "\x00")
	}
	return string(b)
}

// vlenString reads a variable-length string from the global heap.
func (f *File) vlenString(ref []byte, at uint64) (string, error) {
	out := []string{""}
	err := f.varStrings(ref, out, at, uint64(f.size))
	return out[0], err
}

// maxHeapCache bounds the bytes of global heap collections VarStrings keeps between strings.
const maxHeapCache = 64 << 20

// VarStrings reads the variable-length strings whose global heap references (as ReadRows
// gives a dataset of VarString values: a 4-byte length, the collection's address and a 4-byte
// object index each) refs holds, one into each element of out.
// A collection larger than the memory budget ctx carries (MemoryLimit) is refused
// (ErrTooLarge) before it is read.
func (d *Dataset) VarStrings(ctx context.Context, refs []byte, out []string) error {
	if d.Type.Class != VarString {
		return fmt.Errorf("%w: dataset %s holds %s values, not variable-length strings", ErrUnsupported, d.path, d.Type)
	}
	return d.f.varStrings(refs, out, d.obj.o.addr, uint64(MemoryLimit(ctx)))
}

// varStrings reads the variable-length strings whose global heap references refs holds, one
// into each element of out; at locates the references in errors. Each collection is read once
// per call (up to maxHeapCache bytes of them at a time); one of more than limit bytes is
// refused.
func (f *File) varStrings(refs []byte, out []string, at, limit uint64) error {
	size := 8 + f.offSize
	if len(refs) < len(out)*size {
		return f.errAt(at, "variable-length string", ErrFormat, "%d bytes of references for %d strings", len(refs), len(out))
	}
	cache := map[uint64]map[uint32][]byte{}
	cached := uint64(0)
	for i := range out {
		c := &cursor{b: refs[i*size : (i+1)*size]}
		n := c.u32()
		coll := c.addr(f.offSize)
		idx := c.u32()
		if c.bad {
			return f.errAt(at, "variable-length string", ErrFormat, "short reference")
		}
		if n == 0 {
			out[i] = ""
			continue
		}
		objs, ok := cache[coll]
		if !ok {
			var csize uint64
			var err error
			if objs, csize, err = f.heapCollection(coll, at, limit); err != nil {
				return err
			}
			if cached += csize; cached > maxHeapCache {
				clear(cache)
				cached = csize
			}
			cache[coll] = objs
		}
		obj, ok := objs[idx]
		if !ok {
			return f.errAt(coll, "global heap", ErrFormat, "no object %d in the collection", idx)
		}
		if uint64(n) > uint64(len(obj)) {
			return f.errAt(coll, "global heap", ErrFormat, "string of %d bytes in an object of %d", n, len(obj))
		}
		out[i] = string(obj[:n])
	}
	return nil
}

// heapCollection reads the global heap collection at coll: its objects by index, and the
// collection's size.
func (f *File) heapCollection(coll, at, limit uint64) (map[uint32][]byte, uint64, error) {
	if err := f.undefAt(coll, at, "variable-length string"); err != nil {
		return nil, 0, err
	}
	hdr, err := f.read(coll, uint64(8+f.lenSize), "global heap")
	if err != nil {
		return nil, 0, err
	}
	if string(hdr[:4]) != "GCOL" {
		return nil, 0, f.errAt(coll, "global heap", ErrFormat, "no GCOL signature")
	}
	size := le(hdr[8:])
	if size > limit {
		return nil, 0, f.errAt(coll, "global heap", ErrTooLarge, "a collection of %d bytes, more than the memory budget of %d bytes (raise it with --memory)", size, limit)
	}
	b, err := f.read(coll, size, "global heap")
	if err != nil {
		return nil, 0, err
	}
	objs := map[uint32][]byte{}
	hc := &cursor{b: b, base: coll}
	hc.p = 8 + f.lenSize
	for hc.rest() >= 8+f.lenSize {
		id := hc.u16()
		hc.skip(6)
		sz := hc.uint(f.lenSize)
		if id == 0 || sz > uint64(hc.rest()) {
			break
		}
		data := hc.bytes(int(sz))
		hc.skip(min(pad8(int(sz))-int(sz), hc.rest()))
		if _, dup := objs[uint32(id)]; !dup {
			objs[uint32(id)] = data
		}
	}
	return objs, size, nil
}
