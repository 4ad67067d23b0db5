// Package hdf5 reads and writes the subset of HDF5 that machine-learning data uses, in pure Go
// with no C library.
//
// The reader works over an io.ReaderAt. It understands superblocks 0 to 3, object headers
// versions 1 and 2 (checksums verified), old-style groups (symbol tables, local heaps,
// version 1 B-trees) and new-style groups (link messages, and dense links and attributes in
// fractal heaps indexed by version 2 B-trees), and the global heap for variable-length strings.
// Datasets may have any rank; their elements may be integers of 8 to 64 bits of either sign and
// byte order, IEEE float32 or float64, and (for attributes and small datasets) fixed or
// variable-length strings. Layouts are contiguous, compact and chunked, with every chunk index
// (version 1 B-tree, single chunk, implicit, fixed array, extensible array, version 2 B-tree),
// the deflate, shuffle and Fletcher-32 filters (checksums verified), and the registered LZF,
// LZ4, bitshuffle (alone, with LZ4 or with Zstandard), bzip2 and Zstandard filters as h5py and
// the HDF Group's plugins write them, szip (filter 4) as libaec writes it, and the n-bit and
// scale-offset filters. Fill values stand in for chunks never written.
//
// Every size and address a file states is checked against the file's size before it is used, and
// nothing is allocated that the file's size does not justify: a dataset whose dimensions claim more
// data than its file could hold (even at deflate's highest ratio, and past 2 GiB of fill) is
// refused. Anything outside the subset (scale-offset's E-scaling, virtual or external storage,
// shared messages, ...) is an error wrapping ErrUnsupported that names the feature.
//
// The writer (Create) writes superblock version 2 files with version 2 object headers: groups,
// variable-length UTF-8 string attributes, and numeric datasets of any rank stored contiguous
// or chunked with deflate and optionally shuffle.
//
// Nothing here starts a goroutine. A File and its Datasets may be read from several goroutines
// at once when the io.ReaderAt allows that (an *os.File does); a Writer may not.
package hdf5

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
)

// Errors, wrapping mlfeed's sentinels so that errors.Is works with either.
var (
	// ErrFormat means the file is not valid HDF5 (or is corrupt).
	ErrFormat = fmt.Errorf("hdf5: %w", mlfeed.ErrFormat)
	// ErrTruncated means a structure runs past the end of the file.
	ErrTruncated = fmt.Errorf("hdf5: %w", mlfeed.ErrTruncated)
	// ErrUnsupported means the file uses an HDF5 feature this package does not implement.
	ErrUnsupported = fmt.Errorf("hdf5: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge means a size the file states exceeds what the file can hold.
	ErrTooLarge = fmt.Errorf("hdf5: %w", mlfeed.ErrTooLarge)
	// ErrNotFound means a path names no object, or an attribute does not exist.
	ErrNotFound = errors.New("hdf5: not found")
)

// signature is the 8 bytes every HDF5 superblock starts with.
var signature = []byte("\x89HDF\r\n\x1a\n")

// undef is the undefined address.
const undef = ^uint64(0)

// maxExpansion bounds how many bytes of data one byte of file may stand for: deflate's highest
// ratio is a little over 1032:1.
const maxExpansion = 1100

// fillAllowance is how many bytes a dataset may claim beyond what its file could hold at
// maxExpansion: chunks never written, or contiguous storage never allocated, read as the fill
// value (the HDF Group's dset_gzip.h5: three 8 MB datasets of fill in a 1,944-byte file, which
// h5py reads). Reading them takes no memory beyond a chunk's (the memory budget bounds it),
// and time in proportion to this claim at most.
const fillAllowance = 2 << 30

// File is an HDF5 file open for reading.
type File struct {
	r       io.ReaderAt
	size    int64
	name    string
	closer  io.Closer
	offSize int    // size of addresses in bytes
	lenSize int    // size of lengths in bytes
	base    uint64 // base address
	rootObj uint64 // address of the root group's object header
	// root group's symbol table from the superblock's cache, for superblock 0/1 files whose root
	// object header lacks it (never seen, but allowed).
	rootBtree, rootHeap uint64
	sbVersion           int
	mu                  sync.Mutex            // guards headers and groups
	headers             map[uint64]*object    // parsed object headers
	groups              map[storeKey]*linkSet // members of the groups read so far, by storage
	// work counts the steps of reading (chunks visited, index entries and nodes, heap blocks):
	// tests of forged files check it stays proportional to the file's size.
	work atomic.Uint64
}

// Open opens the named HDF5 file for reading.
func Open(name string) (*File, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := NewFile(fh, st.Size(), name)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// NewFile reads the HDF5 file of size bytes in r; name is used in error messages only.
func NewFile(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{r: r, size: size, name: name, headers: map[uint64]*object{}, groups: map[storeKey]*linkSet{}}
	if err := f.readSuperblock(); err != nil {
		return nil, err
	}
	return f, nil
}

// Close closes the file opened by Open; for NewFile it does nothing.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Name returns the name given when opening the file.
func (f *File) Name() string { return f.name }

// Size returns the file's size in bytes.
func (f *File) Size() int64 { return f.size }

// errAt returns a positional error at byte offset off about field.
func (f *File) errAt(off uint64, field string, sentinel error, format string, a ...any) error {
	o := int64(off)
	if off > uint64(f.size)+1<<40 {
		o = -1
	}
	return mlfeed.OffsetError(f.name, o, field, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...)))
}

// read returns n bytes at the file address addr (relative to the base address), checking that
// they lie in the file before allocating anything.
func (f *File) read(addr uint64, n uint64, field string) ([]byte, error) {
	if addr == undef {
		return nil, f.errAt(addr, field, ErrFormat, "undefined address of a %s", field)
	}
	abs := addr + f.base
	if abs < addr || abs > uint64(f.size) || n > uint64(f.size)-abs {
		return nil, f.errAt(abs, field, ErrTruncated, "%d bytes at address %d run past the end of the %d-byte file", n, abs, f.size)
	}
	b := make([]byte, n)
	if k, err := f.r.ReadAt(b, int64(abs)); k < len(b) {
		return nil, f.errAt(abs, field, ErrTruncated, "%v", err)
	}
	return b, nil
}

// undefAt returns an error at from, where the address addr was stored, when addr is the
// undefined address (read would name no position for it); nil otherwise.
func (f *File) undefAt(addr, from uint64, field string) error {
	if addr == undef {
		return f.errAt(from, field, ErrFormat, "undefined address where %s needs one", field)
	}
	return nil
}

// readInto fills b from the file address addr.
func (f *File) readInto(b []byte, addr uint64, field string) error {
	abs := addr + f.base
	n := uint64(len(b))
	if addr == undef || abs < addr || abs > uint64(f.size) || n > uint64(f.size)-abs {
		return f.errAt(abs, field, ErrTruncated, "%d bytes at address %d run past the end of the %d-byte file", n, addr, f.size)
	}
	k, err := f.r.ReadAt(b, int64(abs))
	if k < len(b) {
		return f.errAt(abs, field, ErrTruncated, "%v", err)
	}
	return nil
}

// cursor decodes little-endian fields from a byte slice, remembering the first overrun.
type cursor struct {
	b    []byte
	p    int
	base uint64 // file address of b[0], for error messages
	bad  bool
}

func (c *cursor) skip(n int) { c.bytes(n) }

func (c *cursor) bytes(n int) []byte {
	if c.bad || n < 0 || n > len(c.b)-c.p {
		c.bad = true
		return nil
	}
	s := c.b[c.p : c.p+n]
	c.p += n
	return s
}

func (c *cursor) u8() uint8 {
	s := c.bytes(1)
	if s == nil {
		return 0
	}
	return s[0]
}

func (c *cursor) u16() uint16 { return uint16(c.uint(2)) }
func (c *cursor) u32() uint32 { return uint32(c.uint(4)) }
func (c *cursor) u64() uint64 { return c.uint(8) }

// uint reads an n-byte little-endian unsigned integer (n <= 8).
func (c *cursor) uint(n int) uint64 {
	if n > 8 || n < 0 {
		c.bad = true
		return 0
	}
	s := c.bytes(n)
	if s == nil {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

// addr reads an address of size offSize; all ones is undef.
func (c *cursor) addr(offSize int) uint64 {
	v := c.uint(offSize)
	if offSize < 8 && v == 1<<(8*offSize)-1 {
		return undef
	}
	return v
}

func (c *cursor) rest() int { return len(c.b) - c.p }

func (c *cursor) pos() uint64 { return c.base + uint64(c.p) }

// readSuperblock finds and decodes the superblock (at 0, 512, 1024, ...).
func (f *File) readSuperblock() error {
	var at uint64
	hdr := make([]byte, 8)
	for at = 0; ; at = max(512, at*2) {
		if at+8 > uint64(f.size) {
			return f.errAt(0, "superblock", ErrFormat, "not an HDF5 file: no HDF5 signature")
		}
		if err := f.readInto(hdr, at, "signature"); err != nil {
			return err
		}
		if string(hdr) == string(signature) {
			break
		}
	}
	b, err := f.read(at, min(uint64(f.size)-at, 256), "superblock")
	if err != nil {
		return err
	}
	c := &cursor{b: b, base: at}
	c.skip(8)
	f.sbVersion = int(c.u8())
	switch f.sbVersion {
	case 0, 1:
		c.skip(4) // free space, root group symtab, reserved, shared header versions
		if len(c.b) < 24 {
			return f.errAt(at, "superblock", ErrTruncated, "superblock runs past the end of the file")
		}
		if c.b[9] != 0 || c.b[10] != 0 || c.b[12] != 0 {
			return f.errAt(at+9, "superblock", ErrUnsupported, "superblock component versions %d/%d/%d", c.b[9], c.b[10], c.b[12])
		}
		c.p = 13
		f.offSize, f.lenSize = int(c.u8()), int(c.u8())
		c.skip(1)
		c.skip(4) // group K values
		c.skip(4) // flags
		if f.sbVersion == 1 {
			c.skip(4) // indexed storage K, reserved
		}
		if err := f.checkSizes(at); err != nil {
			return err
		}
		f.base = c.addr(f.offSize)
		c.addr(f.offSize) // free space info
		c.addr(f.offSize) // end of file
		if drv := c.addr(f.offSize); drv != undef {
			return f.errAt(at, "superblock", ErrUnsupported, "file driver information block (a multi-file or family driver)")
		}
		// root group symbol table entry
		c.uint(f.lenSize) // name offset
		f.rootObj = c.addr(f.offSize)
		cache := c.u32()
		c.skip(4)
		if cache == 1 {
			f.rootBtree, f.rootHeap = c.addr(f.offSize), c.addr(f.offSize)
		}
	case 2, 3:
		f.offSize, f.lenSize = int(c.u8()), int(c.u8())
		if err := f.checkSizes(at); err != nil {
			return err
		}
		c.skip(1) // flags
		f.base = c.addr(f.offSize)
		c.addr(f.offSize) // superblock extension
		c.addr(f.offSize) // end of file
		f.rootObj = c.addr(f.offSize)
		end := c.p
		sum := c.u32()
		if c.bad {
			return f.errAt(at, "superblock", ErrTruncated, "superblock runs past the end of the file")
		}
		if got := lookup3(b[:end]); got != sum && verifyChecksums {
			return f.errAt(at, "superblock", ErrFormat, "superblock checksum mismatch (stored %#x, computed %#x)", sum, got)
		}
	default:
		return f.errAt(at+8, "superblock", ErrUnsupported, "superblock version %d", f.sbVersion)
	}
	if c.bad {
		return f.errAt(at, "superblock", ErrTruncated, "superblock runs past the end of the file")
	}
	if f.base == undef {
		f.base = 0
	}
	if err := f.undefAt(f.rootObj, at, "superblock"); err != nil {
		return err
	}
	if f.base != 0 && f.base != at {
		// The base address is where the superblock is in every file written by libhdf5.
		return f.errAt(at, "superblock", ErrUnsupported, "base address %d differs from the superblock's position %d", f.base, at)
	}
	return nil
}

func (f *File) checkSizes(at uint64) error {
	ok := func(n int) bool { return n == 2 || n == 4 || n == 8 }
	if !ok(f.offSize) || !ok(f.lenSize) {
		return f.errAt(at+13, "superblock", ErrUnsupported, "sizes of offsets %d and lengths %d", f.offSize, f.lenSize)
	}
	return nil
}
