package hdf5

// Message types of object headers.
const (
	msgNil          = 0x00
	msgDataspace    = 0x01
	msgLinkInfo     = 0x02
	msgDatatype     = 0x03
	msgFillOld      = 0x04
	msgFill         = 0x05
	msgLink         = 0x06
	msgExternal     = 0x07
	msgLayout       = 0x08
	msgGroupInfo    = 0x0a
	msgFilters      = 0x0b
	msgAttribute    = 0x0c
	msgContinuation = 0x10
	msgSymbolTable  = 0x11
	msgAttrInfo     = 0x15
)

// message is one object header message.
type message struct {
	typ   uint16
	flags uint8
	data  []byte
	addr  uint64 // file address of data
}

// object is a parsed object header.
type object struct {
	addr uint64
	msgs []message
}

// maxHeaderBlocks bounds the continuation blocks of one object header.
const maxHeaderBlocks = 1 << 16

// object parses (once) the object header at addr.
func (f *File) object(addr uint64) (*object, error) {
	f.mu.Lock()
	o, ok := f.headers[addr]
	f.mu.Unlock()
	if ok {
		return o, nil
	}
	o, err := f.parseObject(addr)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if len(f.headers) > 1<<16 {
		clear(f.headers)
	}
	f.headers[addr] = o
	f.mu.Unlock()
	return o, nil
}

// parseObject parses the object header at addr.
func (f *File) parseObject(addr uint64) (*object, error) {
	o := &object{addr: addr}
	sig, err := f.read(addr, min(4, uint64(f.size)), "object header")
	if err != nil {
		return nil, err
	}
	if string(sig) == "OHDR" {
		err = f.readHeaderV2(o)
	} else {
		err = f.readHeaderV1(o)
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

type block struct{ addr, size uint64 }

func (f *File) readHeaderV1(o *object) error {
	b, err := f.read(o.addr, 16, "object header")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: o.addr}
	if v := c.u8(); v != 1 {
		return f.errAt(o.addr, "object header", ErrFormat, "object header version %d (not an object header?)", v)
	}
	c.skip(1)
	c.skip(2) // number of messages: the blocks are walked to their ends instead
	c.skip(4)
	size := uint64(c.u32())
	blocks := []block{{o.addr + 16, size}}
	seen := map[uint64]bool{}
	total := uint64(0)
	for i := 0; i < len(blocks); i++ {
		if err := f.checkBlock(o.addr, blocks, i, seen, &total); err != nil {
			return err
		}
		bl := blocks[i]
		data, err := f.read(bl.addr, bl.size, "object header messages")
		if err != nil {
			return err
		}
		c := &cursor{b: data, base: bl.addr}
		for c.rest() >= 8 {
			typ, sz := c.u16(), int(c.u16())
			flags := c.u8()
			c.skip(3)
			at := c.pos()
			d := c.bytes(sz)
			if c.bad {
				return f.errAt(at, "object header message", ErrFormat, "message of %d bytes runs past its header block", sz)
			}
			if err := f.addMessage(o, message{typ, flags, d, at}, &blocks); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *File) readHeaderV2(o *object) error {
	b, err := f.read(o.addr, min(uint64(f.size)-min(uint64(f.size), o.addr), 32), "object header")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: o.addr}
	c.skip(4)
	if v := c.u8(); v != 2 {
		return f.errAt(o.addr+4, "object header", ErrUnsupported, "object header version %d", v)
	}
	flags := c.u8()
	if flags&0x20 != 0 {
		c.skip(16)
	}
	if flags&0x10 != 0 {
		c.skip(4)
	}
	size := c.uint(1 << (flags & 3))
	if c.bad {
		return f.errAt(o.addr, "object header", ErrTruncated, "object header runs past the end of the file")
	}
	prefix := uint64(c.p)
	if size > uint64(f.size) {
		return f.errAt(o.addr, "object header", ErrTruncated, "object header of %d bytes in a %d-byte file", size, f.size)
	}
	blocks := []block{{o.addr, prefix + size + 4}}
	seen := map[uint64]bool{}
	total := uint64(0)
	for i := 0; i < len(blocks); i++ {
		if err := f.checkBlock(o.addr, blocks, i, seen, &total); err != nil {
			return err
		}
		bl := blocks[i]
		if bl.size < 8 {
			return f.errAt(bl.addr, "object header", ErrFormat, "continuation block of %d bytes", bl.size)
		}
		data, err := f.read(bl.addr, bl.size, "object header")
		if err != nil {
			return err
		}
		if sum, got := uint32(le(data[len(data)-4:])), lookup3(data[:len(data)-4]); sum != got && verifyChecksums {
			return f.errAt(bl.addr, "object header", ErrFormat, "object header checksum mismatch (stored %#x, computed %#x)", sum, got)
		}
		start := 4 // "OCHK"
		if i == 0 {
			start = int(prefix)
		} else if string(data[:4]) != "OCHK" {
			return f.errAt(bl.addr, "object header", ErrFormat, "continuation block has no OCHK signature")
		}
		c := &cursor{b: data[:len(data)-4], base: bl.addr}
		c.p = start
		hsize := 4
		if flags&0x04 != 0 {
			hsize = 6
		}
		for c.rest() >= hsize {
			typ := uint16(c.u8())
			sz := int(c.u16())
			mflags := c.u8()
			if flags&0x04 != 0 {
				c.skip(2)
			}
			at := c.pos()
			d := c.bytes(sz)
			if c.bad {
				return f.errAt(at, "object header message", ErrFormat, "message of %d bytes runs past its header block", sz)
			}
			if err := f.addMessage(o, message{typ, mflags, d, at}, &blocks); err != nil {
				return err
			}
		}
	}
	return nil
}

func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func (f *File) addMessage(o *object, m message, blocks *[]block) error {
	switch m.typ {
	case msgNil:
		return nil
	case msgContinuation:
		c := &cursor{b: m.data}
		a, n := c.addr(f.offSize), c.uint(f.lenSize)
		if c.bad {
			return f.errAt(m.addr, "continuation message", ErrFormat, "short continuation message")
		}
		if err := f.undefAt(a, m.addr, "continuation message"); err != nil {
			return err
		}
		*blocks = append(*blocks, block{a, n})
		return nil
	}
	if m.flags&0x02 != 0 {
		return f.errAt(m.addr, "object header message", ErrUnsupported, "shared object header message (type %#x)", m.typ)
	}
	if len(o.msgs) > 1<<20 {
		return f.errAt(m.addr, "object header", ErrTooLarge, "more than 2^20 messages")
	}
	o.msgs = append(o.msgs, m)
	return nil
}

// find returns the first message of type typ.
func (o *object) find(typ uint16) (message, bool) {
	for _, m := range o.msgs {
		if m.typ == typ {
			return m, true
		}
	}
	return message{}, false
}

// isGroup reports whether the object is a group.
func (o *object) isGroup() bool {
	for _, m := range o.msgs {
		switch m.typ {
		case msgSymbolTable, msgLinkInfo, msgLink, msgGroupInfo:
			return true
		}
	}
	return false
}

// isDataset reports whether the object is a dataset.
func (o *object) isDataset() bool {
	_, ok := o.find(msgLayout)
	return ok
}

// checkBlock checks header block i of the object at addr before it is read: the blocks'
// total size against the file, their count, and loops among continuation blocks.
func (f *File) checkBlock(addr uint64, blocks []block, i int, seen map[uint64]bool, total *uint64) error {
	if *total += blocks[i].size; *total > uint64(f.size) {
		return f.errAt(addr, "object header", ErrFormat, "header blocks larger than the file")
	}
	if i > maxHeaderBlocks {
		return f.errAt(addr, "object header", ErrFormat, "too many continuation blocks")
	}
	if seen[blocks[i].addr] {
		return f.errAt(blocks[i].addr, "object header", ErrFormat, "continuation blocks form a loop")
	}
	seen[blocks[i].addr] = true
	return nil
}
