package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// maxTypeDepth bounds the nesting of datatype messages (compounds of arrays of compounds ...)
// that typeLen walks.
const maxTypeDepth = 16

// parseMembers decodes the n members of a compound datatype message b (at file offset at) of
// the given version whose records are size bytes. Version 1 gives each member up to four array
// dimensions of its own; versions 1 and 2 pad names to 8 bytes and store offsets in 4 bytes;
// version 3 (and 4) stores names unpadded and offsets in as few bytes as the size needs.
func (f *File) parseMembers(b []byte, at uint64, version byte, n, size int) ([]Member, error) {
	if version < 1 || version > 4 {
		return nil, f.errAt(at, "datatype", ErrUnsupported, "compound datatype version %d", version)
	}
	offBytes := 4
	if version >= 3 {
		offBytes = 1
		for s := size >> 8; s > 0; s >>= 8 {
			offBytes++
		}
	}
	c := &cursor{b: b, base: at}
	c.skip(8)
	var out []Member
	seen := map[string]bool{}
	for range n {
		mat := c.pos()
		end := bytes.IndexByte(b[min(c.p, len(b)):], 0)
		if end < 0 {
			return nil, f.errAt(mat, "compound member", ErrFormat, "member name without its NUL")
		}
		m := Member{Name: string(c.bytes(end))}
		if version < 3 {
			c.skip(pad8(end+1) - end)
		} else {
			c.skip(1)
		}
		m.Offset = int(c.uint(offBytes))
		var dims []uint64
		if version == 1 {
			rank := int(c.u8())
			c.skip(3 + 4 + 4) // reserved, a permutation HDF5 never used, reserved
			for k := range 4 {
				if d := c.u32(); k < rank {
					dims = append(dims, uint64(d))
				}
			}
			if rank > 4 {
				return nil, f.errAt(mat, "compound member", ErrFormat, "member %q of rank %d", m.Name, rank)
			}
		}
		if c.bad {
			return nil, f.errAt(mat, "compound member", ErrFormat, "short compound member")
		}
		tat := c.pos()
		l, err := f.typeLen(b[c.p:], tat, 0)
		if err != nil {
			return nil, err
		}
		if err := f.parseMember(&m, c.bytes(l), tat, dims); err != nil {
			return nil, err
		}
		if m.Offset+m.Size > size {
			return nil, f.errAt(mat, "compound member", ErrFormat, "member %q of %d bytes at byte %d of a %d-byte record", m.Name, m.Size, m.Offset, size)
		}
		if seen[m.Name] {
			return nil, f.errAt(mat, "compound member", ErrFormat, "two members named %q", m.Name)
		}
		seen[m.Name] = true
		out = append(out, m)
	}
	return out, nil
}

// parseMember decodes the datatype message b (at file offset at) of member m, which version 1
// messages give the array dimensions dims.
func (f *File) parseMember(m *Member, b []byte, at uint64, dims []uint64) error {
	size := uint64(binary.LittleEndian.Uint32(b[4:8])) // typeLen checked the 8-byte header
	class := int(b[0] & 0x0f)
	if class == 10 && dims == nil { // an array: dimensions, then the base type
		c := &cursor{b: b, base: at}
		c.skip(8)
		rank := int(c.u8())
		if b[0]>>4 < 3 {
			c.skip(3)
		}
		for range rank {
			dims = append(dims, uint64(c.u32()))
		}
		if b[0]>>4 < 3 {
			c.skip(4 * rank)
		}
		if c.bad {
			return f.errAt(at, "datatype", ErrFormat, "short array datatype")
		}
		b, at = b[c.p:], c.pos()
		class = int(b[0] & 0x0f)
	}
	elems := uint64(1)
	for _, d := range dims {
		if d != 0 && elems > (1<<32)/d {
			return f.errAt(at, "datatype", ErrFormat, "member %q of dimensions %v", m.Name, dims)
		}
		elems *= d
	}
	m.Dims = dims
	base := uint64(binary.LittleEndian.Uint32(b[4:8]))
	if len(dims) > 0 && size == base { // version 1: the message is the base type's
		size = elems * base
	}
	m.Size = int(size)
	if size != elems*base {
		return f.errAt(at, "datatype", ErrFormat, "array member %q of %d bytes holding %d elements of %d", m.Name, size, elems, base)
	}
	switch {
	case class == 10:
		m.Err = f.errAt(at, "datatype", ErrUnsupported, "array of arrays")
	case class > 4 && class != 8 || class == 2:
		m.Err = f.errAt(at, "datatype", ErrUnsupported, "%s datatype", classNames[class])
	case elems == 0:
		m.Err = f.errAt(at, "datatype", ErrUnsupported, "array member of no elements")
	default:
		t, err := f.parseDatatype(b, at)
		if err != nil && !errors.Is(err, ErrUnsupported) {
			return err
		}
		m.Type, m.Err = t, err
	}
	if m.Err != nil {
		m.Type = Datatype{}
	}
	return nil
}

// typeLen returns the length of the datatype message at the start of b (at file offset at),
// walking the members of compounds and the bases of arrays, enumerations and variable-length
// types, at most maxTypeDepth deep.
func (f *File) typeLen(b []byte, at uint64, depth int) (int, error) {
	if len(b) < 8 {
		return 0, f.errAt(at, "datatype", ErrFormat, "short datatype message")
	}
	if depth > maxTypeDepth {
		return 0, f.errAt(at, "datatype", ErrUnsupported, "datatypes nested more than %d deep", maxTypeDepth)
	}
	version, class := b[0]>>4, int(b[0]&0x0f)
	n := int(b[1]) | int(b[2])<<8
	p := 8
	sub := func() error { // a datatype message within this one, at p
		if p > len(b) {
			return f.errAt(at, "datatype", ErrFormat, "short datatype message")
		}
		l, err := f.typeLen(b[p:], at+uint64(p), depth+1)
		p += l
		return err
	}
	switch class {
	case 0, 4: // fixed-point, bitfield: bit offset and precision
		p += 4
	case 1: // floating point
		p += 12
	case 2: // time: precision
		p += 2
	case 3: // fixed-length string: no properties
	case 7: // reference: none before version 4
		if version >= 4 {
			return 0, f.errAt(at, "datatype", ErrUnsupported, "reference datatype version %d", version)
		}
	case 5: // opaque: a tag, padded to 8 bytes
		p += int(b[1])
	case 6:
		size := int(binary.LittleEndian.Uint32(b[4:8]))
		for range n {
			end := bytes.IndexByte(b[min(p, len(b)):], 0)
			if end < 0 {
				return 0, f.errAt(at, "datatype", ErrFormat, "member name without its NUL")
			}
			switch {
			case version == 1:
				p += pad8(end+1) + 32
			case version == 2:
				p += pad8(end+1) + 4
			default:
				p += end + 2
				for s := size >> 8; s > 0; s >>= 8 {
					p++
				}
			}
			if err := sub(); err != nil {
				return 0, err
			}
		}
	case 8: // enumeration: the base type, n names, n values
		base := p
		if err := sub(); err != nil {
			return 0, err
		}
		for range n {
			end := bytes.IndexByte(b[min(p, len(b)):], 0)
			if end < 0 {
				return 0, f.errAt(at, "datatype", ErrFormat, "enum member name without its NUL")
			}
			if version < 3 {
				p += pad8(end + 1)
			} else {
				p += end + 1
			}
		}
		p += n * int(binary.LittleEndian.Uint32(b[base+4:base+8]))
	case 9: // variable-length: the base type
		if err := sub(); err != nil {
			return 0, err
		}
	case 10: // array: dimensions (and before version 3 a permutation), then the base type
		if p >= len(b) {
			return 0, f.errAt(at, "datatype", ErrFormat, "short array datatype")
		}
		rank := int(b[p])
		if version < 3 {
			p += 4 + 8*rank
		} else {
			p += 1 + 4*rank
		}
		if err := sub(); err != nil {
			return 0, err
		}
	default:
		return 0, f.errAt(at, "datatype", ErrUnsupported, "datatype class %d", class)
	}
	if p > len(b) {
		return 0, f.errAt(at, "datatype", ErrFormat, "short datatype message")
	}
	return p, nil
}
