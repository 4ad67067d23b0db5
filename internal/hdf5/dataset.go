package hdf5

import (
	"fmt"
	"math"
	"sync"
)

// Layout classes.
const (
	layoutCompact    = 0
	layoutContiguous = 1
	layoutChunked    = 2
)

// Chunk index types (layout message version 4), plus the version 1 B-tree of older layouts.
const (
	idxBtree1 = iota
	idxSingle
	idxImplicit
	idxFixedArray
	idxExtArray
	idxBtree2
)

var indexNames = []string{"v1 B-tree", "single chunk", "implicit", "fixed array", "extensible array", "v2 B-tree"}

type filter struct {
	id     uint16
	name   string
	params []uint32
	nbit   *nbitParams // the n-bit filter's parameters, checked
	so     *soParams   // the scale-offset filter's
}

// Dataset is a dataset's description; its data is read with ReadRows.
type Dataset struct {
	Type    Datatype
	Dims    []uint64 // nil for a scalar
	MaxDims []uint64 // as Dims, with math.MaxUint64 for an unlimited dimension

	f           *File
	obj         *Object
	path        string // obj's path, built once
	layout      int
	compact     []byte
	addr, size  uint64   // contiguous storage
	chunk       []uint64 // chunk dims in elements (chunked)
	index       int
	indexAddr   uint64
	eaParams    [5]uint8
	faPageBits  uint8
	single      chunkLoc // single-chunk index: size and mask
	partialRaw  bool     // edge chunks are stored unfiltered
	filters     []filter
	fill        []byte // one element, or nil for zeros
	indexOnce   sync.Once
	chunks      map[uint64]chunkLoc
	elems       uint64 // number of elements
	chunkBytes  uint64
	grid        []uint64 // chunks per dimension (current dims)
	noDataError error
}

type chunkLoc struct {
	addr, size uint64
	mask       uint32
}

// Dataset returns the dataset at this object.
func (o *Object) Dataset() (*Dataset, error) {
	f := o.f
	if !o.o.isDataset() {
		return nil, fmt.Errorf("%w: %s in %s is not a dataset", ErrFormat, o.Path(), f.name)
	}
	d := &Dataset{f: f, obj: o, path: o.Path()}
	var space dataspace
	var haveType, haveSpace bool
	for _, m := range o.o.msgs {
		var err error
		switch m.typ {
		case msgDatatype:
			d.Type, err = f.parseDatatype(m.data, m.addr)
			haveType = true
		case msgDataspace:
			space, err = f.parseDataspace(m.data, m.addr)
			haveSpace = true
		case msgExternal:
			err = f.errAt(m.addr, "dataset "+o.Path(), ErrUnsupported, "external data storage")
		case msgFilters:
			d.filters, err = f.parseFilters(m.data, m.addr)
		case msgFill, msgFillOld:
			if d.fill == nil || m.typ == msgFill {
				d.fill, err = f.parseFill(m)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", o.Path(), err)
		}
	}
	if !haveType || !haveSpace {
		return nil, f.errAt(o.o.addr, "dataset "+o.Path(), ErrFormat, "dataset without a datatype or dataspace")
	}
	if space.null {
		space.dims = []uint64{0}
	}
	if len(space.dims) > 0 {
		d.Dims = space.dims
		d.MaxDims = space.maxDims
		if d.MaxDims == nil {
			d.MaxDims = d.Dims
		}
	}
	n, ok := space.count()
	if !ok || n > math.MaxInt64/uint64(max(d.Type.Size, 1)) {
		return nil, f.errAt(o.o.addr, "dataset "+o.Path(), ErrTooLarge, "dimensions %v overflow", d.Dims)
	}
	d.elems = n
	if len(d.fill) != d.Type.Size {
		d.fill = nil
	}
	m, _ := o.o.find(msgLayout)
	if err := d.parseLayout(m); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", o.Path(), err)
	}
	return d, nil
}

// Path returns the dataset's path.
func (d *Dataset) Path() string { return d.path }

// Len returns the number of elements.
func (d *Dataset) Len() uint64 { return d.elems }

// Layout returns "compact", "contiguous" or "chunked".
func (d *Dataset) Layout() string {
	return [...]string{"compact", "contiguous", "chunked"}[d.layout]
}

// Chunk returns the chunk dimensions (nil unless chunked).
func (d *Dataset) Chunk() []uint64 { return d.chunk }

// Index returns the name of the chunk index ("" unless chunked).
func (d *Dataset) Index() string {
	if d.layout != layoutChunked {
		return ""
	}
	return indexNames[d.index]
}

// Filters returns the names of the filters of a chunked dataset, in pipeline order.
func (d *Dataset) Filters() []string {
	var out []string
	for _, fl := range d.filters {
		out = append(out, fl.name)
	}
	return out
}

// Attrs returns the dataset's attributes.
func (d *Dataset) Attrs() ([]*Attribute, error) { return d.obj.Attrs() }

// knownFilters names the registered HDF5 filters this package does not decode, for errors
// (the HDF Group's registry; files from h5py and hdf5plugin name only some of them).
var knownFilters = map[uint16]string{
	32002: "MAFISC", 32003: "Snappy", 32005: "APAX", 32006: "CBF",
	32007: "JPEG-XR", 32009: "SPDP", 32010: "LPC-Rice", 32011: "CCSDS-123",
	32012: "JPEG-LS", 32013: "zfp", 32014: "fpzip", 32016: "B3D", 32017: "SZ", 32018: "FCIDECOMP",
	32019: "JPEG", 32020: "VBZ", 32021: "FAPEC", 32022: "bitgroom", 32023: "granular bitround",
	32024: "SZ3", 32025: "Delta-Rice", 32026: "BLOSC2", 32027: "FLAC", 32028: "SPERR",
	32029: "TERSE/PROLIX",
}

func (f *File) parseFilters(b []byte, at uint64) ([]filter, error) {
	c := &cursor{b: b, base: at}
	v := c.u8()
	n := int(c.u8())
	if v == 1 {
		c.skip(6)
	} else if v != 2 {
		return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter pipeline version %d", v)
	}
	var out []filter
	for i := 0; i < n; i++ {
		fl := filter{id: c.u16()}
		nameLen := 0
		if v == 1 || fl.id >= 256 {
			nameLen = int(c.u16())
		}
		c.u16() // flags
		nv := int(c.u16())
		if v == 1 {
			nameLen = pad8(nameLen)
		}
		name := c.bytes(nameLen)
		for j := 0; j < nv && !c.bad; j++ {
			fl.params = append(fl.params, c.u32())
		}
		if v == 1 && nv%2 == 1 {
			c.skip(4)
		}
		if c.bad {
			return nil, f.errAt(at, "filter pipeline", ErrFormat, "short filter pipeline message")
		}
		switch fl.id {
		case 1:
			fl.name = "deflate"
		case 2:
			fl.name = "shuffle"
		case 3:
			fl.name = "fletcher32"
		case filterLZO:
			fl.name = "lzo"
		case filterBzip2:
			fl.name = "bzip2"
		case filterLZF:
			fl.name = "lzf"
		case filterLZ4:
			fl.name = "lz4"
		case filterZstd:
			fl.name = "zstd"
		case filterBitshuffle:
			fl.name = "bitshuffle"
			if len(fl.params) < 3 || fl.params[2] == 0 {
				return nil, f.errAt(at, "filter pipeline", ErrFormat, "filter 32008 (bitshuffle) without its element size")
			}
			if len(fl.params) > 4 && fl.params[4] != bshufNone && fl.params[4] != bshufLZ4 && fl.params[4] != bshufZstd {
				return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter 32008 (bitshuffle) with compression %d (only none, LZ4 and Zstandard)", fl.params[4])
			}
		case filterBlosc:
			fl.name = "blosc"
			if len(fl.params) > 6 && fl.params[6] > 5 { // hdf5-blosc's numbers: blosclz, lz4, lz4hc, snappy, zlib, zstd
				return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter 32001 (Blosc) with compressor %d (only blosclz, lz4, lz4hc, snappy, zlib and zstd)", fl.params[6])
			}
		case filterSzip:
			fl.name = "szip"
			if _, err := parseSzip(fl.params); err != nil {
				return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter 4 (szip) with %v", err)
			}
		case filterNbit, filterScaleOffset:
			var err error
			if fl.id == filterNbit {
				fl.name = "n-bit"
				fl.nbit, err = parseNbit(fl.params)
			} else {
				fl.name = "scale-offset"
				fl.so, err = parseScaleOffset(fl.params)
			}
			if pe, ok := err.(*paramError); ok {
				kind := ErrFormat
				if pe.unsupported {
					kind = ErrUnsupported
				}
				return nil, f.errAt(at, "filter pipeline", kind, "filter %d (%s): %s", fl.id, fl.name, pe.msg)
			}
		default:
			s := string(name)
			for k := 0; k < len(s); k++ {
				if s[k] == 0 {
					s = s[:k]
					break
				}
			}
			if s == "" {
				s = knownFilters[fl.id]
			}
			if s == "" {
				return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter %d (unregistered, unnamed)", fl.id)
			}
			return nil, f.errAt(at, "filter pipeline", ErrUnsupported, "filter %d (%s)", fl.id, s)
		}
		out = append(out, fl)
	}
	return out, nil
}

func (f *File) parseFill(m message) ([]byte, error) {
	c := &cursor{b: m.data, base: m.addr}
	if m.typ == msgFillOld {
		n := int(c.u32())
		v := c.bytes(n)
		return v, nil
	}
	v := c.u8()
	switch v {
	case 1, 2:
		c.skip(2)
		defined := c.u8()
		if v == 2 && defined == 0 {
			return nil, nil
		}
		n := int(c.u32())
		return c.bytes(n), nil
	case 3:
		flags := c.u8()
		if flags&0x20 == 0 {
			return nil, nil
		}
		n := int(c.u32())
		return c.bytes(n), nil
	}
	return nil, f.errAt(m.addr, "fill value", ErrUnsupported, "fill value message version %d", v)
}

func (d *Dataset) parseLayout(m message) error {
	f := d.f
	c := &cursor{b: m.data, base: m.addr}
	v := c.u8()
	rank := len(d.Dims)
	esize := uint64(d.Type.Size)
	switch v {
	case 1, 2:
		nd := int(c.u8())
		d.layout = int(c.u8())
		c.skip(5)
		if d.layout > layoutChunked {
			return f.errAt(m.addr, "layout", ErrFormat, "layout class %d", d.layout)
		}
		if d.layout != layoutCompact {
			d.addr = c.addr(f.offSize)
		}
		dims := make([]uint64, nd)
		for i := range dims {
			dims[i] = uint64(c.u32())
		}
		switch d.layout {
		case layoutChunked:
			// the last dimension is the element's size; no field follows (the format's
			// description lists one, but the library neither writes nor reads it)
			if nd != rank+1 {
				return f.errAt(m.addr, "layout", ErrFormat, "chunk rank %d for a rank-%d dataset", nd-1, rank)
			}
			if dims[rank] != esize && !c.bad {
				return f.errAt(m.addr, "layout", ErrFormat, "chunk element size %d for a %d-byte type", dims[rank], esize)
			}
			d.chunk, d.index, d.indexAddr = dims[:rank], idxBtree1, d.addr
		case layoutCompact:
			n := int(c.u32())
			d.compact = c.bytes(n)
		case layoutContiguous:
			d.size = d.elems * esize
		}
	case 3, 4:
		d.layout = int(c.u8())
		switch d.layout {
		case layoutCompact:
			n := int(c.u16())
			d.compact = c.bytes(n)
		case layoutContiguous:
			d.addr, d.size = c.addr(f.offSize), c.uint(f.lenSize)
		case layoutChunked:
			var flags uint8
			if v == 4 {
				flags = c.u8()
			}
			nd := int(c.u8())
			if nd != rank+1 {
				return f.errAt(m.addr, "layout", ErrFormat, "chunk rank %d for a rank-%d dataset", nd-1, rank)
			}
			dsz := 4
			if v == 3 {
				d.indexAddr = c.addr(f.offSize)
				d.index = idxBtree1
			} else {
				dsz = int(c.u8())
				if dsz < 1 || dsz > 8 {
					return f.errAt(m.addr, "layout", ErrFormat, "chunk dimension size %d", dsz)
				}
			}
			d.chunk = make([]uint64, rank)
			for i := 0; i < nd; i++ {
				x := c.uint(dsz)
				if i < rank {
					d.chunk[i] = x
				} else if x != esize && !c.bad {
					return f.errAt(m.addr, "layout", ErrFormat, "chunk element size %d for a %d-byte type", x, esize)
				}
			}
			if v == 4 {
				d.partialRaw = flags&1 != 0
				d.index = int(c.u8()) - 1 + idxSingle
				switch d.index {
				case idxSingle:
					if flags&2 != 0 {
						d.single.size = c.uint(f.lenSize)
						d.single.mask = c.u32()
					}
				case idxImplicit:
				case idxFixedArray:
					d.faPageBits = c.u8()
				case idxExtArray:
					copy(d.eaParams[:], c.bytes(5))
				case idxBtree2:
					c.skip(6)
				default:
					return f.errAt(m.addr, "layout", ErrUnsupported, "chunk index type %d", d.index-idxSingle+1)
				}
				d.indexAddr = c.addr(f.offSize)
			}
		case 3:
			return f.errAt(m.addr, "layout", ErrUnsupported, "virtual dataset")
		default:
			return f.errAt(m.addr, "layout", ErrFormat, "layout class %d", d.layout)
		}
	default:
		return f.errAt(m.addr, "layout", ErrUnsupported, "layout message version %d", v)
	}
	if c.bad {
		return f.errAt(m.addr, "layout", ErrFormat, "short layout message")
	}
	total := d.elems * esize
	switch d.layout {
	case layoutCompact:
		if uint64(len(d.compact)) < total {
			return f.errAt(m.addr, "layout", ErrFormat, "compact data of %d bytes for %d elements of %d bytes", len(d.compact), d.elems, esize)
		}
	case layoutContiguous:
		if d.addr != undef && d.size < total {
			return f.errAt(m.addr, "layout", ErrFormat, "contiguous storage of %d bytes for %d elements of %d bytes", d.size, d.elems, esize)
		}
		if d.addr != undef && (d.addr > uint64(f.size) || total > uint64(f.size)-d.addr) {
			return f.errAt(m.addr, "layout", ErrTooLarge, "dimensions %v need %d bytes past address %d of a %d-byte file", d.Dims, total, d.addr, f.size)
		}
		if d.addr == undef && total > max(maxExpansion*uint64(f.size), fillAllowance) {
			return f.errAt(m.addr, "layout", ErrTooLarge, "dimensions %v claim %d bytes of fill in a %d-byte file", d.Dims, total, f.size)
		}
	case layoutChunked:
		if total/maxExpansion > uint64(f.size) && total > fillAllowance {
			return f.errAt(m.addr, "layout", ErrTooLarge, "dimensions %v claim %d bytes, more than a %d-byte file can hold", d.Dims, total, f.size)
		}
		d.chunkBytes = esize
		d.grid = make([]uint64, rank)
		for i, cd := range d.chunk {
			if cd == 0 {
				return f.errAt(m.addr, "layout", ErrFormat, "chunk dimension 0")
			}
			if d.chunkBytes > math.MaxInt32/cd {
				return f.errAt(m.addr, "layout", ErrTooLarge, "chunks %v of %d-byte elements", d.chunk, esize)
			}
			d.chunkBytes *= cd
			d.grid[i] = (d.Dims[i] + cd - 1) / cd
		}
		if d.chunkBytes > uint64(f.size)*maxExpansion+1<<20 {
			return f.errAt(m.addr, "layout", ErrTooLarge, "chunks of %d bytes in a %d-byte file", d.chunkBytes, f.size)
		}
		if d.index == idxSingle && d.single.size == 0 {
			d.single.size = d.chunkBytes
		}
	}
	if d.layout != layoutChunked && len(d.filters) > 0 {
		return f.errAt(m.addr, "layout", ErrFormat, "filters on a %s dataset", d.Layout())
	}
	return nil
}

// maxGrid returns the number of chunks per dimension over the maximum dimensions (unlimited
// ones count as current), and the "down" products used to number chunks.
func (d *Dataset) maxDown() []uint64 {
	down := make([]uint64, len(d.chunk))
	p := uint64(1)
	for i := len(d.chunk) - 1; i >= 0; i-- {
		down[i] = p
		md := d.MaxDims[i]
		if md == math.MaxUint64 || md < d.Dims[i] {
			md = d.Dims[i]
		}
		g := (md + d.chunk[i] - 1) / d.chunk[i]
		if g != 0 && p > math.MaxUint64/g {
			p = math.MaxUint64
		} else {
			p *= g
		}
	}
	return down
}

// key numbers the chunk with scaled coordinates sc over the current grid; ok is false outside it.
func (d *Dataset) key(sc []uint64) (uint64, bool) {
	k := uint64(0)
	for i, s := range sc {
		if s >= d.grid[i] {
			return 0, false
		}
		k = k*d.grid[i] + s
	}
	return k, true
}

// addChunk records a chunk found in the index.
func (d *Dataset) addChunk(sc []uint64, loc chunkLoc) error {
	if loc.addr == undef || loc.addr == 0 {
		return nil
	}
	k, ok := d.key(sc)
	if !ok {
		return nil
	}
	if loc.addr > uint64(d.f.size) || loc.size > uint64(d.f.size)-loc.addr {
		return d.f.errAt(loc.addr, "chunk of "+d.path, ErrTruncated, "chunk of %d bytes at %d runs past the end of the %d-byte file", loc.size, loc.addr, d.f.size)
	}
	if len(d.chunks) > int(d.f.size/4)+16 {
		return d.f.errAt(loc.addr, "chunk index of "+d.path, ErrFormat, "more chunks than the file can hold")
	}
	d.chunks[k] = loc
	return nil
}

// loadIndex reads the chunk index into d.chunks.
func (d *Dataset) loadIndex() error {
	d.indexOnce.Do(d.readIndex)
	return d.noDataError
}

func (d *Dataset) readIndex() {
	d.chunks = map[uint64]chunkLoc{}
	if d.indexAddr == undef || d.elems == 0 {
		return
	}
	var err error
	switch d.index {
	case idxBtree1:
		err = d.loadBtree1()
	case idxSingle:
		err = d.addChunk(make([]uint64, len(d.chunk)), chunkLoc{d.indexAddr, d.single.size, d.single.mask})
	case idxImplicit:
		if len(d.filters) > 0 {
			err = d.f.errAt(d.indexAddr, "chunk index", ErrFormat, "implicit chunk index with filters")
			break
		}
		err = d.eachLinear(func(i uint64, sc []uint64) error {
			return d.addChunk(sc, chunkLoc{d.indexAddr + i*d.chunkBytes, d.chunkBytes, 0})
		})
	case idxFixedArray:
		err = d.loadFixedArray()
	case idxExtArray:
		err = d.loadExtArray()
	case idxBtree2:
		err = d.loadBtree2()
	}
	if err != nil {
		d.noDataError = fmt.Errorf("dataset %s: %w", d.path, err)
	}
}

// eachLinear calls fn for every chunk of the current grid with its linear number over the
// maximum grid (the numbering of implicit and fixed-array indexes).
func (d *Dataset) eachLinear(fn func(i uint64, sc []uint64) error) error {
	down := d.maxDown()
	sc := make([]uint64, len(d.chunk))
	total := uint64(1)
	for _, g := range d.grid {
		total *= g
	}
	for n := uint64(0); n < total; n++ {
		rem := n
		lin := uint64(0)
		for i := len(sc) - 1; i >= 0; i-- {
			sc[i] = rem % d.grid[i]
			rem /= d.grid[i]
		}
		for i := range sc {
			lin += sc[i] * down[i]
		}
		if err := fn(lin, sc); err != nil {
			return err
		}
	}
	return nil
}

// scaled converts a linear chunk number over the maximum grid to scaled coordinates.
func (d *Dataset) scaled(lin uint64, down []uint64, sc []uint64) {
	for i := range sc {
		sc[i] = lin / down[i]
		lin %= down[i]
	}
}

func (d *Dataset) loadBtree1() error {
	f := d.f
	nd := len(d.chunk) + 1
	keySize := 8 + 8*nd
	visited := map[uint64]bool{}
	sc := make([]uint64, len(d.chunk))
	// the entries of all nodes must fit in the file side by side
	entries, maxEntries := uint64(0), uint64(f.size)/uint64(keySize+f.offSize)+1
	var walk func(addr uint64, depth int) error
	walk = func(addr uint64, depth int) error {
		if depth > 64 || visited[addr] {
			return f.errAt(addr, "chunk B-tree", ErrFormat, "B-tree nodes form a loop or nest too deep")
		}
		visited[addr] = true
		f.work.Add(1)
		hdr, err := f.read(addr, uint64(8+2*f.offSize), "chunk B-tree node")
		if err != nil {
			return err
		}
		if string(hdr[:4]) != "TREE" || hdr[4] != 1 {
			return f.errAt(addr, "chunk B-tree node", ErrFormat, "no TREE signature or not a chunk B-tree")
		}
		level := int(hdr[5])
		n := int(le(hdr[6:8]))
		if entries += uint64(n); entries > maxEntries {
			return f.errAt(addr, "chunk B-tree node", ErrFormat, "more B-tree entries than the file can hold")
		}
		f.work.Add(uint64(n))
		body, err := f.read(addr+uint64(len(hdr)), uint64(n)*uint64(keySize+f.offSize)+uint64(keySize), "chunk B-tree node")
		if err != nil {
			return err
		}
		c := &cursor{b: body, base: addr + uint64(len(hdr))}
		for i := 0; i < n; i++ {
			size := uint64(c.u32())
			mask := c.u32()
			for j := 0; j < nd; j++ {
				off := c.u64()
				if j < len(sc) {
					if off%d.chunk[j] != 0 {
						return f.errAt(c.pos(), "chunk B-tree key", ErrFormat, "chunk offset %d not a multiple of the chunk size %d", off, d.chunk[j])
					}
					sc[j] = off / d.chunk[j]
				}
			}
			child := c.addr(f.offSize)
			if c.bad {
				return f.errAt(addr, "chunk B-tree node", ErrFormat, "short node")
			}
			if level > 0 {
				if err := f.undefAt(child, c.pos()-uint64(f.offSize), "chunk B-tree node"); err != nil {
					return err
				}
				if err := walk(child, depth+1); err != nil {
					return err
				}
			} else if err := d.addChunk(sc, chunkLoc{child, size, mask}); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(d.indexAddr, 0)
}

// entry decodes a chunk address entry of a fixed or extensible array, or a v2 B-tree record
// (without the scaled coordinates).
func (d *Dataset) entry(c *cursor, size int) chunkLoc {
	f := d.f
	loc := chunkLoc{addr: c.addr(f.offSize), size: d.chunkBytes}
	if len(d.filters) > 0 {
		loc.size = c.uint(size - f.offSize - 4)
		loc.mask = c.u32()
	}
	return loc
}

func (d *Dataset) checkEntrySize(at uint64, size int) error {
	want := d.f.offSize
	if len(d.filters) > 0 {
		if size < want+5 || size > want+12 {
			return d.f.errAt(at, "chunk index", ErrFormat, "entry size %d", size)
		}
		return nil
	}
	if size != want {
		return d.f.errAt(at, "chunk index", ErrFormat, "entry size %d", size)
	}
	return nil
}

func bitSet(b []byte, i uint64) bool { return b[i/8]&(0x80>>(i%8)) != 0 }

func (d *Dataset) loadFixedArray() error {
	f := d.f
	addr := d.indexAddr
	b, err := f.read(addr, uint64(4+4+f.lenSize+f.offSize+4), "fixed array header")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: addr}
	if string(c.bytes(4)) != "FAHD" || c.u8() != 0 {
		return f.errAt(addr, "fixed array header", ErrFormat, "no FAHD signature")
	}
	c.u8()
	esize := int(c.u8())
	pageBits := int(c.u8())
	n := c.uint(f.lenSize)
	dblk := c.addr(f.offSize)
	if end := c.p; badSum(b[:end], c.u32()) {
		return f.errAt(addr, "fixed array header", ErrFormat, "checksum mismatch")
	}
	if err := d.checkEntrySize(addr, esize); err != nil {
		return err
	}
	if pageBits > 32 || n > uint64(f.size)/uint64(esize) {
		return f.errAt(addr, "fixed array header", ErrFormat, "%d entries of %d bytes in a %d-byte file", n, esize, f.size)
	}
	if dblk == undef {
		return nil
	}
	pageN := uint64(1) << pageBits
	npages := uint64(0)
	if n > pageN {
		npages = (n + pageN - 1) / pageN
	}
	prefix := uint64(6 + f.offSize)
	bitmapLen := (npages + 7) / 8
	down := d.maxDown()
	sc := make([]uint64, len(d.chunk))
	decode := func(data []byte, first, count uint64) error {
		ec := &cursor{b: data}
		for i := uint64(0); i < count; i++ {
			loc := d.entry(ec, esize)
			d.scaled(first+i, down, sc)
			if err := d.addChunk(sc, loc); err != nil {
				return err
			}
		}
		return nil
	}
	if npages == 0 {
		blk, err := f.read(dblk, prefix+n*uint64(esize)+4, "fixed array data block")
		if err != nil {
			return err
		}
		if string(blk[:4]) != "FADB" || badSum(blk[:len(blk)-4], uint32(le(blk[len(blk)-4:]))) {
			return f.errAt(dblk, "fixed array data block", ErrFormat, "no FADB signature or checksum mismatch")
		}
		return decode(blk[prefix:len(blk)-4], 0, n)
	}
	blk, err := f.read(dblk, prefix+bitmapLen+4, "fixed array data block")
	if err != nil {
		return err
	}
	if string(blk[:4]) != "FADB" || badSum(blk[:len(blk)-4], uint32(le(blk[len(blk)-4:]))) {
		return f.errAt(dblk, "fixed array data block", ErrFormat, "no FADB signature or checksum mismatch")
	}
	bitmap := blk[prefix : prefix+bitmapLen]
	at := dblk + uint64(len(blk))
	for p := uint64(0); p < npages; p++ {
		cnt := min(pageN, n-p*pageN)
		psize := cnt*uint64(esize) + 4
		if bitSet(bitmap, p) {
			page, err := f.read(at, psize, "fixed array page")
			if err != nil {
				return err
			}
			if badSum(page[:len(page)-4], uint32(le(page[len(page)-4:]))) {
				return f.errAt(at, "fixed array page", ErrFormat, "checksum mismatch")
			}
			if err := decode(page[:len(page)-4], p*pageN, cnt); err != nil {
				return err
			}
		}
		at += psize
	}
	return nil
}

func (d *Dataset) loadExtArray() error {
	f := d.f
	addr := d.indexAddr
	b, err := f.read(addr, uint64(12+6*f.lenSize+f.offSize+4), "extensible array header")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: addr}
	if string(c.bytes(4)) != "EAHD" || c.u8() != 0 {
		return f.errAt(addr, "extensible array header", ErrFormat, "no EAHD signature")
	}
	c.u8()
	esize := int(c.u8())
	maxBits := int(c.u8())
	idxElems := uint64(c.u8())
	dblkMin := uint64(c.u8())
	sblkMinPtrs := uint64(c.u8())
	pageBits := int(c.u8())
	c.skip(4 * f.lenSize)
	maxIdx := c.uint(f.lenSize)
	c.uint(f.lenSize)
	iblk := c.addr(f.offSize)
	if end := c.p; badSum(b[:end], c.u32()) {
		return f.errAt(addr, "extensible array header", ErrFormat, "checksum mismatch")
	}
	if err := d.checkEntrySize(addr, esize); err != nil {
		return err
	}
	if maxBits == 0 || maxBits > 64 || !isPow2(dblkMin) || !isPow2(sblkMinPtrs) || pageBits > 32 || log2(dblkMin) > maxBits ||
		maxIdx > uint64(f.size)/uint64(esize) {
		return f.errAt(addr, "extensible array header", ErrFormat, "invalid parameters")
	}
	if iblk == undef || maxIdx == 0 {
		return nil
	}
	arrOff := (maxBits + 7) / 8
	nsblks := 1 + maxBits - log2(dblkMin)
	ibNs := 2 * log2(sblkMinPtrs)
	ndblkAddrs := 2 * (sblkMinPtrs - 1)
	nsblkAddrs := max(nsblks-ibNs, 0)
	ib, err := f.read(iblk, uint64(6+f.offSize)+idxElems*uint64(esize)+ndblkAddrs*uint64(f.offSize)+uint64(nsblkAddrs*f.offSize)+4, "extensible array index block")
	if err != nil {
		return err
	}
	if string(ib[:4]) != "EAIB" || badSum(ib[:len(ib)-4], uint32(le(ib[len(ib)-4:]))) {
		return f.errAt(iblk, "extensible array index block", ErrFormat, "no EAIB signature or checksum mismatch")
	}
	ic := &cursor{b: ib[:len(ib)-4], base: iblk}
	ic.p = 6 + f.offSize
	down := d.maxDown()
	if len(down) > 0 {
		// the unlimited dimension numbers chunks slowest
		for i, md := range d.MaxDims {
			if md == math.MaxUint64 && i != 0 {
				return f.errAt(addr, "extensible array index", ErrUnsupported, "extensible array chunk index with unlimited dimension %d", i)
			}
		}
	}
	sc := make([]uint64, len(d.chunk))
	idx := uint64(0)
	add := func(ec *cursor) error {
		loc := d.entry(ec, esize)
		if idx < maxIdx {
			d.scaled(idx, down, sc)
			if err := d.addChunk(sc, loc); err != nil {
				return err
			}
		}
		idx++
		return nil
	}
	for i := uint64(0); i < idxElems; i++ {
		if err := add(ic); err != nil {
			return err
		}
	}
	pageN := uint64(1) << pageBits
	// readDblk reads a data block of n elements (absent blocks are skipped)
	readDblk := func(a uint64, n uint64, pageInit []byte) error {
		if a == undef || idx >= maxIdx {
			idx += n
			return nil
		}
		prefix := uint64(6 + f.offSize + arrOff)
		if n <= pageN {
			blk, err := f.read(a, prefix+n*uint64(esize)+4, "extensible array data block")
			if err != nil {
				return err
			}
			if string(blk[:4]) != "EADB" || badSum(blk[:len(blk)-4], uint32(le(blk[len(blk)-4:]))) {
				return f.errAt(a, "extensible array data block", ErrFormat, "no EADB signature or checksum mismatch")
			}
			ec := &cursor{b: blk[prefix : len(blk)-4]}
			for i := uint64(0); i < n; i++ {
				if err := add(ec); err != nil {
					return err
				}
			}
			return nil
		}
		npages := n / pageN
		at := a + prefix + 4
		for p := uint64(0); p < npages; p++ {
			psize := pageN*uint64(esize) + 4
			if pageInit != nil && bitSet(pageInit, p) {
				page, err := f.read(at, psize, "extensible array page")
				if err != nil {
					return err
				}
				if badSum(page[:len(page)-4], uint32(le(page[len(page)-4:]))) {
					return f.errAt(at, "extensible array page", ErrFormat, "checksum mismatch")
				}
				ec := &cursor{b: page}
				for i := uint64(0); i < pageN; i++ {
					if err := add(ec); err != nil {
						return err
					}
				}
			} else {
				idx += pageN
			}
			at += psize
		}
		return nil
	}
	sblkInfo := func(u int) (ndblks, dblkN uint64) {
		return 1 << (u / 2), (1 << ((u + 1) / 2)) * dblkMin
	}
	for u := 0; u < ibNs && u < nsblks; u++ {
		nb, dn := sblkInfo(u)
		for j := uint64(0); j < nb; j++ {
			a := ic.addr(f.offSize)
			if err := readDblk(a, dn, nil); err != nil {
				return err
			}
		}
	}
	for u := ibNs; u < nsblks; u++ {
		a := ic.addr(f.offSize)
		nb, dn := sblkInfo(u)
		if ic.bad {
			return f.errAt(iblk, "extensible array index block", ErrFormat, "short index block")
		}
		if a == undef || idx >= maxIdx {
			idx += nb * dn
			continue
		}
		var initLen uint64
		if dn > pageN {
			initLen = (dn/pageN + 7) / 8
		}
		sb, err := f.read(a, uint64(6+f.offSize+arrOff)+nb*initLen+nb*uint64(f.offSize)+4, "extensible array super block")
		if err != nil {
			return err
		}
		if string(sb[:4]) != "EASB" || badSum(sb[:len(sb)-4], uint32(le(sb[len(sb)-4:]))) {
			return f.errAt(a, "extensible array super block", ErrFormat, "no EASB signature or checksum mismatch")
		}
		sc := &cursor{b: sb[:len(sb)-4], base: a}
		sc.p = 6 + f.offSize + arrOff
		inits := sc.bytes(int(nb * initLen))
		for j := uint64(0); j < nb; j++ {
			var pi []byte
			if initLen > 0 {
				pi = inits[j*initLen : (j+1)*initLen]
			}
			if err := readDblk(sc.addr(f.offSize), dn, pi); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Dataset) loadBtree2() error {
	typ := uint8(10)
	if len(d.filters) > 0 {
		typ = 11
	}
	rank := len(d.chunk)
	sc := make([]uint64, rank)
	return d.f.btree2(d.indexAddr, typ, func(rec []byte) error {
		esize := len(rec) - 8*rank
		if err := d.checkEntrySize(d.indexAddr, esize); err != nil {
			return err
		}
		c := &cursor{b: rec}
		loc := d.entry(c, esize)
		for i := range sc {
			sc[i] = c.u64()
		}
		return d.addChunk(sc, loc)
	})
}

// ChunkCount returns the number of chunks stored (reading the chunk index), or 0 unless chunked.
func (d *Dataset) ChunkCount() (int, error) {
	if d.layout != layoutChunked {
		return 0, nil
	}
	if err := d.loadIndex(); err != nil {
		return 0, err
	}
	return len(d.chunks), nil
}
