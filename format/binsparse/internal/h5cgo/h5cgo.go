//go:build cgo && hdf5

// Package h5cgo reads Binsparse's HDF5 files through libhdf5 (cgo, build tag "hdf5"). It is
// only a test oracle: the tests of package binsparse built with -tags hdf5 compare what the
// pure-Go HDF5 layer reads and writes with what libhdf5 reads. Files, groups and group listing
// go through gonum.org/v1/hdf5, string attributes (fixed or variable length, scalar or
// one-element) and typed hyperslab reads through our own small C in bsp_h5.h, compiled once
// (by this file only), so its crash guard's static state exists once.
package h5cgo

/*
#cgo linux,amd64 CFLAGS: -I/usr/include/hdf5/serial
#cgo linux,amd64 LDFLAGS: -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lz
#cgo linux,arm64 CFLAGS: -I/usr/include/hdf5/serial
#cgo linux,arm64 LDFLAGS: -L/usr/lib/aarch64-linux-gnu/hdf5/serial -lhdf5 -lz
#cgo !linux LDFLAGS: -lhdf5 -lz
#include "bsp_h5.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"gonum.org/v1/hdf5"

	"github.com/mlfeed/mlfeed"
)

// Info describes a one-dimensional dataset.
type Info struct {
	Type    mlfeed.ElemType // the element type, or Invalid when it is not an integer or float
	Len     int64           // number of elements
	Rank    int             // number of dimensions of the dataspace
	Layout  string          // "contiguous", "chunked", "compact"
	Chunk   int64           // chunk length (chunked layout)
	Filters []string        // "deflate", "shuffle", "fletcher32", "szip", or numbers
}

// File is an open HDF5 file.
type File struct {
	name string
	f    *hdf5.File
}

// mu serializes calls into libhdf5 (which serializes them anyway), so that one crash guard is
// active at a time (see bsp_h5.h).
var mu sync.Mutex

// ErrCrashed is returned once libhdf5 has crashed on a corrupt file: the library's state is
// lost, so no further HDF5 call is made in this process.
var ErrCrashed = fmt.Errorf("%w: libhdf5 crashed reading a corrupt HDF5 file; HDF5 is disabled for the rest of this process", mlfeed.ErrFormat)

// call runs fn on a locked OS thread with libhdf5's error printing off, so that the error
// stack fn leaves behind can be read by stackErr.
func call(fn func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if C.bsp_is_crashed() != 0 {
		return ErrCrashed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.bsp_prepare()
	return fn()
}

// stackErr returns libhdf5's error stack of this thread as an error wrapping sentinel.
func stackErr(sentinel error, what string) error {
	buf := make([]byte, 1024)
	C.bsp_error((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	msg := strings.TrimRight(string(buf[:clen(buf)]), " \n")
	if msg == "" {
		return fmt.Errorf("%w: %s", sentinel, what)
	}
	return fmt.Errorf("%w: %s (libhdf5: %s)", sentinel, what, msg)
}

// errBuf is a buffer the C functions fill with the error stack when they fail.
type errBuf []byte

func newErrBuf() errBuf { return make(errBuf, 1024) }

func (e errBuf) c() *C.char { return (*C.char)(unsafe.Pointer(&e[0])) }

// err returns the recorded error stack as an error wrapping sentinel (ErrCrashed, with what,
// when libhdf5 crashed).
func (e errBuf) err(sentinel error, what string) error {
	if C.bsp_is_crashed() != 0 {
		return fmt.Errorf("%s: %w", what, ErrCrashed)
	}
	msg := strings.TrimSpace(string(e[:clen(e)]))
	if msg == "" {
		return fmt.Errorf("%w: %s", sentinel, what)
	}
	return fmt.Errorf("%w: %s (libhdf5: %s)", sentinel, what, msg)
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// Open opens an HDF5 file for reading.
func Open(name string) (*File, error) {
	if _, err := os.Stat(name); err != nil {
		return nil, err
	}
	var f *hdf5.File
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := call(func() error {
		// A guarded first pass: libhdf5 parses the superblock and every object header, so
		// that gonum's unguarded calls below meet only structures libhdf5 survives.
		eb := newErrBuf()
		if C.bsp_probe(cname, eb.c()) < 0 {
			return eb.err(mlfeed.ErrFormat, "not a readable HDF5 file (truncated or corrupt?)")
		}
		var err error
		if f, err = hdf5.OpenFile(name, hdf5.F_ACC_RDONLY); err != nil {
			return stackErr(mlfeed.ErrFormat, "not a readable HDF5 file (truncated or corrupt?)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &File{name: name, f: f}, nil
}

// Close closes the file, flushing what was written.
func (f *File) Close() error {
	return call(func() error {
		if err := f.f.Close(); err != nil {
			return stackErr(errors.New("closing HDF5 file failed"), f.name)
		}
		return nil
	})
}

// withGroup runs fn with the location id of group path ("/" or "" is the root).
func (f *File) withGroup(path string, fn func(loc C.hid_t) error) error {
	return call(func() error {
		if path == "" || path == "/" {
			return fn(C.hid_t(f.f.ID()))
		}
		g, err := f.f.OpenGroup(path)
		if err != nil {
			return stackErr(mlfeed.ErrFormat, fmt.Sprintf("no group %s", path))
		}
		defer g.Close()
		return fn(C.hid_t(g.ID()))
	})
}

// Attr returns the string attribute name of the group at path; ok is false when the group
// has no such attribute.
func (f *File) Attr(path, name string) (value string, ok bool, err error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err = f.withGroup(path, func(loc C.hid_t) error {
		eb := newErrBuf()
		switch C.bsp_attr_exists(loc, cname, eb.c()) {
		case 0:
			return nil
		case -1:
			return eb.err(mlfeed.ErrFormat, "cannot read attributes of "+path)
		}
		var out *C.char
		var n C.size_t
		switch C.bsp_attr_read(loc, cname, &out, &n, eb.c()) {
		case -2:
			return fmt.Errorf("%w: attribute %s of %s is not a single string", mlfeed.ErrFormat, name, path)
		case -3:
			return fmt.Errorf("%w: attribute %s of %s is longer than 256 MiB", mlfeed.ErrTooLarge, name, path)
		case 0:
		default:
			return eb.err(mlfeed.ErrFormat, fmt.Sprintf("cannot read attribute %s of %s", name, path))
		}
		defer C.free(unsafe.Pointer(out))
		value, ok = C.GoStringN(out, C.int(n)), true
		return nil
	})
	return value, ok, err
}

// Groups returns the paths of every group, the root ("/") first, depth first, up to a depth
// of 32 levels and 100000 groups.
func (f *File) Groups() ([]string, error) {
	out := []string{"/"}
	var walk func(g *hdf5.CommonFG, path string, depth int) error
	walk = func(g *hdf5.CommonFG, path string, depth int) error {
		if depth > 32 || len(out) > 100000 {
			return nil
		}
		n, err := g.NumObjects()
		if err != nil {
			return stackErr(mlfeed.ErrFormat, "cannot list group "+path)
		}
		for i := uint(0); i < n; i++ {
			t, err := g.ObjectTypeByIndex(i)
			if err != nil || t != hdf5.H5G_GROUP {
				continue
			}
			name, err := g.ObjectNameByIndex(i)
			if err != nil {
				return stackErr(mlfeed.ErrFormat, "cannot list group "+path)
			}
			child := strings.TrimSuffix(path, "/") + "/" + name
			sub, err := g.OpenGroup(name)
			if err != nil {
				return stackErr(mlfeed.ErrFormat, "cannot open group "+child)
			}
			out = append(out, child)
			err = walk(&sub.CommonFG, child, depth+1)
			sub.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	err := call(func() error { return walk(&f.f.CommonFG, "/", 0) })
	return out, err
}

// Dataset describes the dataset name in the group at path; ok is false when there is none.
func (f *File) Dataset(path, name string) (info Info, ok bool, err error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err = f.withGroup(path, func(loc C.hid_t) error {
		var di C.dsinfo
		eb := newErrBuf()
		switch C.bsp_dset_info(loc, cname, &di, eb.c()) {
		case 0:
			return nil
		case -2:
			return fmt.Errorf("%w: %s in %s is not a dataset", mlfeed.ErrFormat, name, path)
		case 1:
		default:
			return eb.err(mlfeed.ErrFormat, fmt.Sprintf("cannot open dataset %s in %s", name, path))
		}
		ok = true
		info.Len, info.Rank, info.Chunk = int64(di.n), int(di.rank), int64(di.chunk)
		info.Type = elemType(int(di.cls), di.sign != 0, int(di.size))
		info.Layout = [...]string{"compact", "contiguous", "chunked"}[max(0, int(di.layout))]
		for i := 0; i < int(di.nfilters) && i < 8; i++ {
			info.Filters = append(info.Filters, filterName(int(di.filters[i])))
		}
		return nil
	})
	return info, ok, err
}

func elemType(cls int, signed bool, size int) mlfeed.ElemType {
	switch {
	case cls == 2 && size == 4:
		return mlfeed.Float32
	case cls == 2 && size == 8:
		return mlfeed.Float64
	case cls == 1:
		s := map[int]mlfeed.ElemType{1: mlfeed.Uint8, 2: mlfeed.Uint16, 4: mlfeed.Uint32, 8: mlfeed.Uint64}
		if signed {
			s = map[int]mlfeed.ElemType{1: mlfeed.Int8, 2: mlfeed.Int16, 4: mlfeed.Int32, 8: mlfeed.Int64}
		}
		return s[size]
	}
	return mlfeed.Invalid
}

func filterName(id int) string {
	switch C.int(id) {
	case C.bsp_filter_deflate():
		return "deflate"
	case C.bsp_filter_shuffle():
		return "shuffle"
	case C.bsp_filter_fletcher32():
		return "fletcher32"
	case C.bsp_filter_szip():
		return "szip"
	}
	return fmt.Sprint(id)
}

func typeCode(t mlfeed.ElemType) C.int {
	switch t {
	case mlfeed.Float32:
		return 1
	case mlfeed.Float64:
		return 2
	case mlfeed.Int8:
		return 3
	case mlfeed.Int16:
		return 4
	case mlfeed.Int32:
		return 5
	case mlfeed.Int64:
		return 6
	case mlfeed.Uint8, mlfeed.Bool:
		return 7
	case mlfeed.Uint16:
		return 8
	case mlfeed.Uint32:
		return 9
	case mlfeed.Uint64:
		return 10
	}
	return 0
}

// Read reads elements [off, off+n) of the dataset name in the group at path, of total
// elements, converted by libhdf5 to type t.
func (f *File) Read(path, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	code := typeCode(t)
	if code == 0 {
		return mlfeed.Buffer{}, fmt.Errorf("%w: cannot read %s as %s", mlfeed.ErrUnsupported, name, t)
	}
	buf := mlfeed.NewBuffer(t, int(n))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := f.withGroup(path, func(loc C.hid_t) error {
		var p unsafe.Pointer
		if n > 0 {
			p = unsafe.Pointer(&buf.Bytes[0])
		}
		eb := newErrBuf()
		if C.bsp_dset_read(loc, cname, code, C.longlong(off), C.longlong(n), C.longlong(total), p, eb.c()) < 0 {
			return eb.err(mlfeed.ErrFormat, fmt.Sprintf("reading dataset %s failed", name))
		}
		return nil
	})
	return buf, err
}
