package hdf5

import "math/bits"

// fheap is a fractal heap's header.
type fheap struct {
	addr       uint64
	idLen      int
	filters    bool
	maxMan     uint64
	width      int
	start      uint64
	maxDirect  uint64
	maxBits    int
	rootAddr   uint64
	rootRows   int
	checksums  bool // direct blocks carry checksums
	offSz      int  // bytes of a heap offset in managed IDs
	lenSz      int  // bytes of a length in managed IDs
	directRows int  // rows of direct blocks in an indirect block
	// direct blocks read and verified so far, by address, up to twice the file's size in all:
	// a group of many links reads each block once, not once per link
	blocks map[uint64][]byte
	cached uint64
}

func log2(v uint64) int { return bits.Len64(v) - 1 }

func isPow2(v uint64) bool { return v != 0 && v&(v-1) == 0 }

func (f *File) fheap(addr uint64) (*fheap, error) {
	n := uint64(4 + 1 + 2 + 2 + 1 + 4 + 12*f.lenSize + 3*f.offSize + 2 + 2 + 2 + 2 + 4)
	b, err := f.read(addr, n, "fractal heap header")
	if err != nil {
		return nil, err
	}
	c := &cursor{b: b, base: addr}
	if string(c.bytes(4)) != "FRHP" || c.u8() != 0 {
		return nil, f.errAt(addr, "fractal heap header", ErrFormat, "no FRHP signature or unknown version")
	}
	h := &fheap{addr: addr}
	h.idLen = int(c.u16())
	h.filters = c.u16() != 0
	flags := c.u8()
	h.checksums = flags&2 != 0
	h.maxMan = uint64(c.u32())
	c.uint(f.lenSize) // next huge id
	c.addr(f.offSize) // huge objects' B-tree
	c.uint(f.lenSize) // free space
	c.addr(f.offSize) // free space manager
	c.skip(8 * f.lenSize)
	h.width = int(c.u16())
	h.start = c.uint(f.lenSize)
	h.maxDirect = c.uint(f.lenSize)
	h.maxBits = int(c.u16())
	c.u16() // starting rows
	h.rootAddr = c.addr(f.offSize)
	h.rootRows = int(c.u16())
	if h.filters {
		return nil, f.errAt(addr, "fractal heap header", ErrUnsupported, "fractal heap with I/O filters")
	}
	end := c.p
	sum := c.u32()
	if c.bad {
		return nil, f.errAt(addr, "fractal heap header", ErrTruncated, "short header")
	}
	if got := lookup3(b[:end]); got != sum && verifyChecksums {
		return nil, f.errAt(addr, "fractal heap header", ErrFormat, "checksum mismatch")
	}
	if h.width == 0 || !isPow2(uint64(h.width)) || !isPow2(h.start) || !isPow2(h.maxDirect) || h.maxDirect < h.start ||
		h.maxBits == 0 || h.maxBits > 64 || h.idLen < 2 || h.idLen > 256 || h.rootRows > 64 {
		return nil, f.errAt(addr, "fractal heap header", ErrFormat, "invalid doubling table or ID length")
	}
	h.offSz = (h.maxBits + 7) / 8
	h.lenSz = min((log2(h.maxDirect)+7)/8, log2(h.maxMan)/8+1)
	h.directRows = log2(h.maxDirect) - log2(h.start) + 2
	return h, nil
}

// rowSize is the size of the blocks of row r.
func (h *fheap) rowSize(r int) uint64 {
	if r <= 1 {
		return h.start
	}
	if r-1 >= 64-log2(h.start) {
		return 0
	}
	return h.start << (r - 1)
}

// get returns the object with heap ID id.
func (f *File) heapObject(h *fheap, id []byte) ([]byte, error) {
	if len(id) < 1 {
		return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "empty heap ID")
	}
	switch (id[0] >> 4) & 3 {
	case 0:
	case 2: // tiny: the object is in the ID
		if h.idLen <= 18 {
			n := int(id[0]&0x0f) + 1
			if 1+n > len(id) {
				return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "tiny object longer than its ID")
			}
			return id[1 : 1+n], nil
		}
		if len(id) < 2 {
			return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "short heap ID")
		}
		n := (int(id[0]&0x0f)<<8 | int(id[1])) + 1
		if 2+n > len(id) {
			return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "tiny object longer than its ID")
		}
		return id[2 : 2+n], nil
	case 1:
		return nil, f.errAt(h.addr, "fractal heap ID", ErrUnsupported, "huge fractal heap objects")
	default:
		return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "unknown heap ID type")
	}
	c := &cursor{b: id[1:]}
	off, n := c.uint(h.offSz), c.uint(h.lenSz)
	if c.bad {
		return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "short heap ID")
	}
	if n > h.maxDirect {
		return nil, f.errAt(h.addr, "fractal heap ID", ErrFormat, "object of %d bytes exceeds the heap's block size", n)
	}
	if err := f.undefAt(h.rootAddr, h.addr, "fractal heap header"); err != nil {
		return nil, err
	}
	addr, blockOff, size, rows := h.rootAddr, uint64(0), h.start, h.rootRows
	for depth := 0; ; depth++ {
		if depth > 64 {
			return nil, f.errAt(h.addr, "fractal heap", ErrFormat, "indirect blocks nest too deep")
		}
		if rows == 0 { // a direct block
			rel := off - blockOff
			if off < blockOff || rel > size || n > size-rel {
				return nil, f.errAt(addr, "fractal heap direct block", ErrFormat, "object at heap offset %d not in its block", off)
			}
			b, hdr, err := f.directBlock(h, addr, size)
			if err != nil {
				return nil, err
			}
			if rel < hdr {
				return nil, f.errAt(addr, "fractal heap direct block", ErrFormat, "object inside the block header")
			}
			return b[rel : rel+n], nil
		}
		// an indirect block
		if rows > 64 {
			return nil, f.errAt(addr, "fractal heap indirect block", ErrFormat, "%d rows", rows)
		}
		dRows := min(rows, h.directRows)
		nd, ni := dRows*h.width, (rows-dRows)*h.width
		b, err := f.read(addr, uint64(5+f.offSize+h.offSz+(nd+ni)*f.offSize+4), "fractal heap indirect block")
		if err != nil {
			return nil, err
		}
		if string(b[:4]) != "FHIB" {
			return nil, f.errAt(addr, "fractal heap indirect block", ErrFormat, "no FHIB signature")
		}
		if sum, got := uint32(le(b[len(b)-4:])), lookup3(b[:len(b)-4]); sum != got && verifyChecksums {
			return nil, f.errAt(addr, "fractal heap indirect block", ErrFormat, "checksum mismatch")
		}
		c := &cursor{b: b[5+f.offSize+h.offSz:], base: addr}
		rel := off - blockOff
		if off < blockOff {
			return nil, f.errAt(addr, "fractal heap ID", ErrFormat, "heap offset %d not in its block", off)
		}
		found := false
		for r := 0; r < rows; r++ {
			rs := h.rowSize(r)
			if rs == 0 {
				break
			}
			span := rs * uint64(h.width)
			if rel >= span {
				rel -= span
				blockOff += span
				continue
			}
			col := int(rel / rs)
			blockOff += uint64(col) * rs
			entry := r*h.width + col
			c.p = entry * f.offSize
			child := c.addr(f.offSize)
			if child == undef || c.bad {
				return nil, f.errAt(addr, "fractal heap indirect block", ErrFormat, "heap offset %d in an unallocated block", off)
			}
			addr, size = child, rs
			if r < h.directRows {
				rows = 0
			} else {
				rows = log2(rs) - log2(h.start*uint64(h.width)) + 1
			}
			found = true
			break
		}
		if !found {
			return nil, f.errAt(addr, "fractal heap ID", ErrFormat, "heap offset %d beyond the heap", off)
		}
	}
}

// btree2 enumerates the records of the version 2 B-tree at addr, of type typ.
func (f *File) btree2(addr uint64, typ uint8, fn func(rec []byte) error) error {
	b, err := f.read(addr, uint64(4+1+1+4+2+2+1+1+f.offSize+2+f.lenSize+4), "v2 B-tree header")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: addr}
	if string(c.bytes(4)) != "BTHD" || c.u8() != 0 {
		return f.errAt(addr, "v2 B-tree header", ErrFormat, "no BTHD signature or unknown version")
	}
	if t := c.u8(); t != typ {
		return f.errAt(addr, "v2 B-tree header", ErrFormat, "B-tree of type %d where type %d was expected", t, typ)
	}
	nodeSize := uint64(c.u32())
	recSize := int(c.u16())
	depth := int(c.u16())
	c.skip(2)
	root := c.addr(f.offSize)
	rootN := int(c.u16())
	c.uint(f.lenSize)
	end := c.p
	if sum := c.u32(); badSum(b[:end], sum) {
		return f.errAt(addr, "v2 B-tree header", ErrFormat, "checksum mismatch")
	}
	if root == undef || rootN == 0 {
		return nil
	}
	if recSize == 0 || nodeSize < 16 || nodeSize > uint64(f.size) || depth > 32 {
		return f.errAt(addr, "v2 B-tree header", ErrFormat, "invalid node size %d, record size %d or depth %d", nodeSize, recSize, depth)
	}
	// sizes of the child record counts, per level (as libhdf5 computes them)
	maxLeaf := (nodeSize - 10) / uint64(recSize)
	maxNrecSize := log2(maxLeaf)/8 + 1
	cum := make([]uint64, depth+1)
	cumSize := make([]int, depth+1)
	maxRec := make([]uint64, depth+1)
	cum[0], maxRec[0] = maxLeaf, maxLeaf
	for u := 1; u <= depth; u++ {
		ptr := uint64(f.offSize + maxNrecSize)
		if u > 1 {
			ptr += uint64(cumSize[u-1])
		}
		maxRec[u] = (nodeSize - 10) / (uint64(recSize) + ptr)
		cum[u] = (maxRec[u]+1)*cum[u-1] + maxRec[u]
		if cum[u] < cum[u-1] { // overflow
			cum[u] = ^uint64(0) >> 1
		}
		cumSize[u] = log2(cum[u])/8 + 1
	}
	// the nodes, and the records of all nodes, must fit in the file side by side
	visited, records := 0, uint64(0)
	var walk func(addr uint64, nrec int, depth int) error
	walk = func(addr uint64, nrec int, depth int) error {
		visited++
		if visited > int(f.size/16)+1 {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "more nodes than the file can hold")
		}
		if records += uint64(nrec); records > uint64(f.size)/uint64(recSize)+1 {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "more records than the file can hold")
		}
		f.work.Add(1 + uint64(nrec))
		if uint64(nrec) > maxRec[depth] {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "%d records in a node that holds %d", nrec, maxRec[depth])
		}
		b, err := f.read(addr, nodeSize, "v2 B-tree node")
		if err != nil {
			return err
		}
		c := &cursor{b: b, base: addr}
		sig := "BTLF"
		if depth > 0 {
			sig = "BTIN"
		}
		if string(c.bytes(4)) != sig || c.u8() != 0 || c.u8() != typ {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "no %s signature, or wrong version or type", sig)
		}
		recs := c.bytes(nrec * recSize)
		type child struct {
			addr uint64
			n    int
		}
		var kids []child
		if depth > 0 {
			for i := 0; i <= nrec; i++ {
				a := c.addr(f.offSize)
				n := c.uint(maxNrecSize)
				if depth > 1 {
					c.uint(cumSize[depth-1])
				}
				kids = append(kids, child{a, int(min(n, 1<<30))})
			}
		}
		end := c.p
		sum := c.u32()
		if c.bad {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "node overflows its size")
		}
		if badSum(b[:end], sum) {
			return f.errAt(addr, "v2 B-tree node", ErrFormat, "checksum mismatch")
		}
		for i := 0; i <= nrec; i++ {
			if depth > 0 {
				if err := walk(kids[i].addr, kids[i].n, depth-1); err != nil {
					return err
				}
			}
			if i < nrec {
				if err := fn(recs[i*recSize : (i+1)*recSize]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, rootN, depth)
}

// directBlock returns the direct block of size bytes at addr, verified, and the size of its
// header (objects start past it).
func (f *File) directBlock(h *fheap, addr, size uint64) ([]byte, uint64, error) {
	hdr := uint64(5 + f.offSize + h.offSz)
	if h.checksums {
		hdr += 4
	}
	if b, ok := h.blocks[addr]; ok && uint64(len(b)) == size {
		return b, hdr, nil
	}
	f.work.Add(1)
	b, err := f.read(addr, size, "fractal heap direct block")
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 4 || string(b[:4]) != "FHDB" {
		return nil, 0, f.errAt(addr, "fractal heap direct block", ErrFormat, "no FHDB signature")
	}
	if h.checksums {
		at := hdr - 4
		if hdr > uint64(len(b)) {
			return nil, 0, f.errAt(addr, "fractal heap direct block", ErrFormat, "block too small")
		}
		sum := uint32(le(b[at:hdr]))
		clear(b[at:hdr])
		if got := lookup3(b); got != sum && verifyChecksums {
			return nil, 0, f.errAt(addr, "fractal heap direct block", ErrFormat, "checksum mismatch")
		}
	}
	if h.cached+size <= 2*uint64(f.size) {
		if h.blocks == nil {
			h.blocks = map[uint64][]byte{}
		}
		h.blocks[addr] = b
		h.cached += size
	}
	return b, hdr, nil
}
