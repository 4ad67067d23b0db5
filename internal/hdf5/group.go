package hdf5

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Object is a group or a dataset in a file.
type Object struct {
	f    *File
	o    *object
	path string
}

// Path returns the object's path from the root, "/" for the root group.
func (o *Object) Path() string { return o.path }

// IsGroup reports whether the object is a group.
func (o *Object) IsGroup() bool { return o.o.isGroup() || o.o.addr == o.f.rootObj }

// IsDataset reports whether the object is a dataset.
func (o *Object) IsDataset() bool { return o.o.isDataset() }

// Root returns the root group.
func (f *File) Root() (*Object, error) {
	o, err := f.object(f.rootObj)
	if err != nil {
		return nil, err
	}
	return &Object{f, o, "/"}, nil
}

// Get returns the object at path ("/" or "" for the root; "a/b" or "/a/b").
func (f *File) Get(path string) (*Object, error) {
	cur, err := f.Root()
	if err != nil {
		return nil, err
	}
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." {
			continue
		}
		if cur, err = cur.Child(part); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// link is a hard link of a group.
type link struct {
	name string
	addr uint64
}

// Children returns the names of the group's members reached by hard links, sorted.
func (o *Object) Children() ([]string, error) {
	ls, err := o.f.links(o.o)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.name
	}
	sort.Strings(names)
	return names, nil
}

// Child returns the group's member name.
func (o *Object) Child(name string) (*Object, error) {
	ls, err := o.f.links(o.o)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if l.name == name {
			c, err := o.f.object(l.addr)
			if err != nil {
				return nil, err
			}
			return &Object{o.f, c, strings.TrimSuffix(o.path, "/") + "/" + name}, nil
		}
	}
	return nil, fmt.Errorf("%w: no object %q in group %s of %s", ErrNotFound, name, o.path, o.f.name)
}

// links returns the hard links of a group object.
func (f *File) links(o *object) ([]link, error) {
	var out []link
	for _, m := range o.msgs {
		switch m.typ {
		case msgSymbolTable:
			c := &cursor{b: m.data}
			bt, heap := c.addr(f.offSize), c.addr(f.offSize)
			if c.bad {
				return nil, f.errAt(m.addr, "symbol table message", ErrFormat, "short message")
			}
			return f.symbolTable(bt, heap)
		case msgLink:
			l, ok, err := f.parseLink(m.data, m.addr)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, l)
			}
		case msgLinkInfo:
			err := f.denseObjects(m, 8, 5, 4, "link", func(data []byte, heap uint64) error {
				l, ok, err := f.parseLink(data, heap)
				if ok {
					out = append(out, l)
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 && o.addr == f.rootObj && f.rootBtree != 0 && f.rootBtree != undef {
		return f.symbolTable(f.rootBtree, f.rootHeap)
	}
	return out, nil
}

// parseLink decodes a link message; ok is false for soft and external links.
func (f *File) parseLink(b []byte, at uint64) (l link, ok bool, err error) {
	c := &cursor{b: b, base: at}
	if v := c.u8(); v != 1 {
		return l, false, f.errAt(at, "link message", ErrFormat, "link message version %d", v)
	}
	flags := c.u8()
	typ := uint8(0)
	if flags&0x08 != 0 {
		typ = c.u8()
	}
	if flags&0x04 != 0 {
		c.skip(8)
	}
	if flags&0x10 != 0 {
		c.u8()
	}
	n := int(c.uint(1 << (flags & 3)))
	name := c.bytes(n)
	if c.bad {
		return l, false, f.errAt(at, "link message", ErrFormat, "short link message")
	}
	if typ != 0 {
		return l, false, nil
	}
	a := c.addr(f.offSize)
	if c.bad {
		return l, false, f.errAt(at, "link message", ErrFormat, "short link message")
	}
	return link{string(name), a}, true, nil
}

// symbolTable lists an old-style group: a version 1 B-tree of symbol table nodes whose names
// are in a local heap.
func (f *File) symbolTable(btree, heapAddr uint64) ([]link, error) {
	hb, err := f.read(heapAddr, uint64(8+2*f.lenSize+f.offSize), "local heap")
	if err != nil {
		return nil, err
	}
	c := &cursor{b: hb, base: heapAddr}
	if string(c.bytes(4)) != "HEAP" {
		return nil, f.errAt(heapAddr, "local heap", ErrFormat, "no HEAP signature")
	}
	c.skip(4)
	dsize := c.uint(f.lenSize)
	c.uint(f.lenSize)
	daddr := c.addr(f.offSize)
	heap, err := f.read(daddr, dsize, "local heap data")
	if err != nil {
		return nil, err
	}
	var out []link
	// Every node and symbol table node is visited once, and the entries of all of them must
	// fit in the file side by side: nodes that overlap or are shared cannot multiply the work.
	visited := map[uint64]bool{}
	entries := uint64(0)
	maxEntries := uint64(f.size)/uint64(f.lenSize+f.offSize) + 1
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 64 || visited[addr] {
			return f.errAt(addr, "group B-tree", ErrFormat, "B-tree nodes form a loop, are shared or nest too deep")
		}
		visited[addr] = true
		f.work.Add(1)
		hdr, err := f.read(addr, uint64(8+2*f.offSize), "group B-tree node")
		if err != nil {
			return err
		}
		c := &cursor{b: hdr, base: addr}
		if string(c.bytes(4)) != "TREE" {
			if string(hdr[:4]) == "SNOD" && depth > 0 {
				return f.symbolNode(addr, heap, &out) // visited once, as marked above
			}
			return f.errAt(addr, "group B-tree node", ErrFormat, "no TREE signature")
		}
		if t := c.u8(); t != 0 {
			return f.errAt(addr, "group B-tree node", ErrFormat, "B-tree node type %d in a group", t)
		}
		level := int(c.u8())
		n := int(c.u16())
		if entries += uint64(n); entries > maxEntries {
			return f.errAt(addr, "group B-tree node", ErrFormat, "more B-tree entries than the file can hold")
		}
		f.work.Add(uint64(n))
		body, err := f.read(addr+uint64(len(hdr)), uint64(n)*uint64(f.lenSize+f.offSize)+uint64(f.lenSize), "group B-tree node")
		if err != nil {
			return err
		}
		bc := &cursor{b: body, base: addr + uint64(len(hdr))}
		for i := 0; i < n; i++ {
			bc.uint(f.lenSize)
			child := bc.addr(f.offSize)
			if level > 0 {
				if err := walk(child, depth+1); err != nil {
					return err
				}
			} else {
				if visited[child] {
					return f.errAt(child, "symbol table node", ErrFormat, "symbol table node listed twice")
				}
				visited[child] = true
				if err := f.symbolNode(child, heap, &out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(btree, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func (f *File) symbolNode(addr uint64, heap []byte, out *[]link) error {
	hdr, err := f.read(addr, 8, "symbol table node")
	if err != nil {
		return err
	}
	if string(hdr[:4]) != "SNOD" {
		return f.errAt(addr, "symbol table node", ErrFormat, "no SNOD signature")
	}
	n := int(le(hdr[6:8]))
	esz := 2*f.offSize + 24
	if f.lenSize != f.offSize {
		esz = f.lenSize + f.offSize + 24
	}
	// the entries of all symbol table nodes must fit in the file side by side
	if uint64(len(*out)+n) > uint64(f.size)/uint64(esz)+1 {
		return f.errAt(addr, "symbol table node", ErrFormat, "more symbol table entries than the file can hold")
	}
	f.work.Add(uint64(n))
	b, err := f.read(addr+8, uint64(n*esz), "symbol table node")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: addr + 8}
	for i := 0; i < n; i++ {
		noff := c.uint(f.lenSize)
		obj := c.addr(f.offSize)
		c.skip(24)
		if noff >= uint64(len(heap)) {
			return f.errAt(addr, "symbol table entry", ErrFormat, "name offset %d outside the local heap", noff)
		}
		name := heap[noff:]
		if k := bytes.IndexByte(name, 0); k >= 0 {
			name = name[:k]
		}
		*out = append(*out, link{string(name), obj})
	}
	return nil
}

// denseObjects walks the objects a link info or attribute info message (m) keeps in dense
// storage: the fractal heap and the v2 B-tree of names (records of recType, the heap ID at
// byte idAt) that it names, calling fn with each object's bytes. skip is the size of the
// field the message's flag bit 0 adds; what ("link", "attribute") names the storage in errors.
// A message with no heap has no objects there.
func (f *File) denseObjects(m message, skip int, recType uint8, idAt int, what string, fn func(data []byte, heap uint64) error) error {
	c := &cursor{b: m.data}
	c.u8()
	if c.u8()&1 != 0 {
		c.skip(skip)
	}
	heap, names := c.addr(f.offSize), c.addr(f.offSize)
	if c.bad {
		return f.errAt(m.addr, what+" info message", ErrFormat, "short message")
	}
	if heap == undef {
		return nil
	}
	h, err := f.fheap(heap)
	if err != nil {
		return err
	}
	return f.btree2(names, recType, func(rec []byte) error {
		if len(rec) < idAt+h.idLen {
			return f.errAt(names, what+" name index", ErrFormat, "record of %d bytes", len(rec))
		}
		data, err := f.heapObject(h, rec[idAt:idAt+h.idLen])
		if err != nil {
			return err
		}
		return fn(data, heap)
	})
}
