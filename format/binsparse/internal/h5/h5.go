//go:build cgo && hdf5

package h5

// The HDF5 layer: files, groups and group listing through gonum.org/v1/hdf5, and our own
// small C for what gonum gets wrong or lacks: string attributes of every kind (fixed or
// variable length, scalar or one-element), typed dataset reads and writes with native memory
// types, hyperslab reads, chunking with deflate, and error messages taken from libhdf5's
// error stack. libhdf5's automatic error printing is switched off on every thread that calls
// it, and every return value is checked.

/*
#cgo linux,amd64 CFLAGS: -I/usr/include/hdf5/serial
#cgo linux,amd64 LDFLAGS: -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5
#cgo linux,arm64 CFLAGS: -I/usr/include/hdf5/serial
#cgo linux,arm64 LDFLAGS: -L/usr/lib/aarch64-linux-gnu/hdf5/serial -lhdf5
#cgo !linux LDFLAGS: -lhdf5
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>

#define ERRLEN 1024
// FAIL records the error stack in err before cleanup calls clear it.
#define FAIL do { bsp_error(err, ERRLEN); goto done; } while (0)

typedef struct { char *buf; size_t len; int n; } errwalk;

static herr_t bsp_walk(unsigned n, const H5E_error2_t *e, void *data) {
	errwalk *w = (errwalk *)data;
	const char *msg = e->desc && e->desc[0] ? e->desc : "error";
	if (n == 0 && e->func_name) {
		snprintf(w->buf, w->len, "%s: %s", e->func_name, msg);
	} else {
		size_t l = strlen(w->buf);
		if (l + 3 < w->len) snprintf(w->buf + l, w->len - l, ": %s", msg);
	}
	w->n++;
	return 0;
}

// bsp_prepare silences libhdf5's error printing on this thread and clears its error stack.
static void bsp_prepare(void) {
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	H5Eclear2(H5E_DEFAULT);
}

// bsp_error copies this thread's libhdf5 error stack (outermost call first) into buf.
static void bsp_error(char *buf, size_t len) {
	errwalk w = {buf, len, 0};
	buf[0] = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, bsp_walk, &w);
	H5Eclear2(H5E_DEFAULT);
}

static hid_t memtype(int code) {
	switch (code) {
	case 1: return H5T_NATIVE_FLOAT;
	case 2: return H5T_NATIVE_DOUBLE;
	case 3: return H5T_NATIVE_INT8;
	case 4: return H5T_NATIVE_INT16;
	case 5: return H5T_NATIVE_INT32;
	case 6: return H5T_NATIVE_INT64;
	case 7: return H5T_NATIVE_UINT8;
	case 8: return H5T_NATIVE_UINT16;
	case 9: return H5T_NATIVE_UINT32;
	case 10: return H5T_NATIVE_UINT64;
	}
	return -1;
}

// bsp_attr_exists returns 1 if loc has the attribute, 0 if not, -1 on error.
static int bsp_attr_exists(hid_t loc, const char *name, char *err) {
	bsp_prepare();
	htri_t r = H5Aexists(loc, name);
	if (r < 0) { bsp_error(err, ERRLEN); return -1; }
	return (int)r;
}

// bsp_attr_read reads a string attribute of one element (scalar or one-element simple
// dataspace; fixed or variable length) into a malloc'd buffer. Returns 0 on success, -1 on a
// libhdf5 error, -2 when the attribute is not a single string, -3 when it is too long.
static int bsp_attr_read(hid_t loc, const char *name, char **out, size_t *outlen, char *err) {
	int rc = -1;
	hid_t attr = -1, ftype = -1, space = -1, mtype = -1;
	*out = NULL;
	*outlen = 0;
	bsp_prepare();
	if ((attr = H5Aopen(loc, name, H5P_DEFAULT)) < 0) FAIL;
	if ((ftype = H5Aget_type(attr)) < 0) FAIL;
	if ((space = H5Aget_space(attr)) < 0) FAIL;
	if (H5Tget_class(ftype) != H5T_STRING) { rc = -2; goto done; }
	hssize_t np = H5Sget_simple_extent_npoints(space);
	if (np != 1) { rc = -2; goto done; }
	htri_t isv = H5Tis_variable_str(ftype);
	if (isv < 0) FAIL;
	if (isv) {
		if ((mtype = H5Tcopy(H5T_C_S1)) < 0) FAIL;
		if (H5Tset_size(mtype, H5T_VARIABLE) < 0) FAIL;
		H5T_cset_t cs = H5Tget_cset(ftype);
		if (cs >= 0 && H5Tset_cset(mtype, cs) < 0) FAIL;
		char *s = NULL;
		if (H5Aread(attr, mtype, &s) < 0) FAIL;
		if (s == NULL) { *out = calloc(1, 1); rc = *out ? 0 : -1; goto done; }
		size_t l = strlen(s);
		if (l > ((size_t)1 << 28)) { H5free_memory(s); rc = -3; goto done; }
		*out = malloc(l + 1);
		if (*out) { memcpy(*out, s, l + 1); *outlen = l; rc = 0; }
		H5free_memory(s);
	} else {
		size_t sz = H5Tget_size(ftype);
		if (sz == 0) FAIL;
		if (sz > ((size_t)1 << 28)) { rc = -3; goto done; }
		if ((mtype = H5Tcopy(ftype)) < 0) FAIL;
		*out = calloc(sz + 1, 1);
		if (!*out) FAIL;
		if (H5Aread(attr, mtype, *out) < 0) { free(*out); *out = NULL; FAIL; }
		*outlen = sz;
		rc = 0;
	}
done:
	if (mtype >= 0) H5Tclose(mtype);
	if (space >= 0) H5Sclose(space);
	if (ftype >= 0) H5Tclose(ftype);
	if (attr >= 0) H5Aclose(attr);
	return rc;
}

// bsp_attr_write writes s as a variable-length UTF-8 string attribute with a scalar
// dataspace, replacing any attribute of that name.
static int bsp_attr_write(hid_t loc, const char *name, const char *s, char *err) {
	int rc = -1;
	hid_t mtype = -1, space = -1, attr = -1;
	bsp_prepare();
	htri_t ex = H5Aexists(loc, name);
	if (ex < 0) FAIL;
	if (ex > 0 && H5Adelete(loc, name) < 0) FAIL;
	if ((mtype = H5Tcopy(H5T_C_S1)) < 0) FAIL;
	if (H5Tset_size(mtype, H5T_VARIABLE) < 0) FAIL;
	if (H5Tset_cset(mtype, H5T_CSET_UTF8) < 0) FAIL;
	if ((space = H5Screate(H5S_SCALAR)) < 0) FAIL;
	if ((attr = H5Acreate2(loc, name, mtype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0) FAIL;
	if (H5Awrite(attr, mtype, &s) < 0) FAIL;
	rc = 0;
done:
	if (attr >= 0 && H5Aclose(attr) < 0) rc = -1;
	if (space >= 0) H5Sclose(space);
	if (mtype >= 0) H5Tclose(mtype);
	return rc;
}

typedef struct {
	int cls;        // 0 other, 1 integer, 2 float
	int sign;       // 1 signed
	size_t size;    // bytes per element
	int rank;
	long long n;    // number of elements
	int layout;     // 0 compact, 1 contiguous, 2 chunked, -1 other
	int nfilters;
	long long chunk;
	int filters[8];
} dsinfo;

// bsp_dset_info describes the dataset name in loc. Returns 1 if found, 0 if absent, -1 on error,
// -2 when name is not a dataset.
static int bsp_dset_info(hid_t loc, const char *name, dsinfo *info, char *err) {
	int rc = -1;
	hid_t ds = -1, t = -1, sp = -1, pl = -1;
	memset(info, 0, sizeof *info);
	bsp_prepare();
	htri_t ex = H5Lexists(loc, name, H5P_DEFAULT);
	if (ex < 0) { bsp_error(err, ERRLEN); return -1; }
	if (ex == 0) return 0;
	H5O_info_t oi;
	if (H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0) { bsp_error(err, ERRLEN); return -1; }
	if (oi.type != H5O_TYPE_DATASET) return -2;
	if ((ds = H5Dopen2(loc, name, H5P_DEFAULT)) < 0) FAIL;
	if ((t = H5Dget_type(ds)) < 0) FAIL;
	if ((sp = H5Dget_space(ds)) < 0) FAIL;
	H5T_class_t c = H5Tget_class(t);
	info->cls = c == H5T_INTEGER ? 1 : c == H5T_FLOAT ? 2 : 0;
	if (c == H5T_INTEGER) {
		H5T_sign_t s = H5Tget_sign(t);
		if (s < 0) FAIL;
		info->sign = s == H5T_SGN_2;
	}
	info->size = H5Tget_size(t);
	int r = H5Sget_simple_extent_ndims(sp);
	if (r < 0) FAIL;
	info->rank = r;
	hssize_t np = H5Sget_simple_extent_npoints(sp);
	if (np < 0) FAIL;
	info->n = np;
	if ((pl = H5Dget_create_plist(ds)) < 0) FAIL;
	H5D_layout_t lay = H5Pget_layout(pl);
	info->layout = lay == H5D_COMPACT ? 0 : lay == H5D_CONTIGUOUS ? 1 : lay == H5D_CHUNKED ? 2 : -1;
	if (lay == H5D_CHUNKED && r == 1) {
		hsize_t cd[1];
		if (H5Pget_chunk(pl, 1, cd) == 1) info->chunk = cd[0];
	}
	int nf = H5Pget_nfilters(pl);
	if (nf < 0) FAIL;
	info->nfilters = nf;
	for (int i = 0; i < nf && i < 8; i++) {
		unsigned flags; size_t ne = 0; unsigned fc;
		info->filters[i] = (int)H5Pget_filter2(pl, i, &flags, &ne, NULL, 0, NULL, &fc);
	}
	rc = 1;
done:
	if (pl >= 0) H5Pclose(pl);
	if (sp >= 0) H5Sclose(sp);
	if (t >= 0) H5Tclose(t);
	if (ds >= 0) H5Dclose(ds);
	return rc;
}

// bsp_dset_read reads elements [off, off+n) of the one-dimensional dataset name into buf,
// converted to the native type code.
static int bsp_dset_read(hid_t loc, const char *name, int code, long long off, long long n, long long total, void *buf, char *err) {
	int rc = -1;
	hid_t ds = -1, fs = -1, ms = -1;
	hid_t mt = memtype(code);
	bsp_prepare();
	if (mt < 0) return -1;
	if ((ds = H5Dopen2(loc, name, H5P_DEFAULT)) < 0) FAIL;
	if (n == 0) { rc = 0; goto done; }
	if (off == 0 && n == total) {
		if (H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) FAIL;
		rc = 0;
		goto done;
	}
	if ((fs = H5Dget_space(ds)) < 0) FAIL;
	hsize_t start[1] = {(hsize_t)off}, count[1] = {(hsize_t)n};
	if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) FAIL;
	if ((ms = H5Screate_simple(1, count, NULL)) < 0) FAIL;
	if (H5Dread(ds, mt, ms, fs, H5P_DEFAULT, buf) < 0) FAIL;
	rc = 0;
done:
	if (ms >= 0) H5Sclose(ms);
	if (fs >= 0) H5Sclose(fs);
	if (ds >= 0 && H5Dclose(ds) < 0) rc = -1;
	return rc;
}

// bsp_dset_write creates the one-dimensional dataset name holding the n elements at buf
// (native type code): chunked with chunks of up to chunk elements, shuffled and deflated as
// asked, or contiguous when chunk is 0 or the array is empty.
static int bsp_dset_write(hid_t loc, const char *name, int code, long long n, long long chunk, int level, int shuffle, const void *buf, char *err) {
	int rc = -1;
	hid_t sp = -1, pl = -1, ds = -1;
	hid_t mt = memtype(code);
	bsp_prepare();
	if (mt < 0) return -1;
	hsize_t dims[1] = {(hsize_t)n};
	if ((sp = H5Screate_simple(1, dims, NULL)) < 0) FAIL;
	if ((pl = H5Pcreate(H5P_DATASET_CREATE)) < 0) FAIL;
	if (n > 0 && chunk > 0) {
		hsize_t cd[1] = {(hsize_t)(chunk < n ? chunk : n)};
		if (H5Pset_chunk(pl, 1, cd) < 0) FAIL;
		if (shuffle && H5Pset_shuffle(pl) < 0) FAIL;
		if (level > 0 && H5Pset_deflate(pl, (unsigned)level) < 0) FAIL;
	}
	if ((ds = H5Dcreate2(loc, name, mt, sp, H5P_DEFAULT, pl, H5P_DEFAULT)) < 0) FAIL;
	if (n > 0 && H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) FAIL;
	rc = 0;
done:
	if (ds >= 0 && H5Dclose(ds) < 0) rc = -1;
	if (pl >= 0) H5Pclose(pl);
	if (sp >= 0) H5Sclose(sp);
	return rc;
}

static int bsp_filter_deflate(void) { return H5Z_FILTER_DEFLATE; }
static int bsp_filter_shuffle(void) { return H5Z_FILTER_SHUFFLE; }
static int bsp_filter_fletcher32(void) { return H5Z_FILTER_FLETCHER32; }
static int bsp_filter_szip(void) { return H5Z_FILTER_SZIP; }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"gonum.org/v1/hdf5"

	"github.com/mlfeed/mlfeed"
)

// Available reports whether this build reads and writes HDF5 files.
const Available = true

// File is an open HDF5 file.
type File struct {
	name string
	f    *hdf5.File
}

// call runs fn on a locked OS thread with libhdf5's error printing off, so that the error
// stack fn leaves behind can be read by errorf.
func call(fn func() error) error {
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

// err returns the recorded error stack as an error wrapping sentinel.
func (e errBuf) err(sentinel error, what string) error {
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
	err := call(func() error {
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

// Create creates (or truncates) an HDF5 file for writing.
func Create(name string) (*File, error) {
	var f *hdf5.File
	err := call(func() error {
		var err error
		if f, err = hdf5.CreateFile(name, hdf5.F_ACC_TRUNC); err != nil {
			return stackErr(errors.New("cannot create HDF5 file"), name)
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
func (f *File) withGroup(path string, create bool, fn func(loc C.hid_t) error) error {
	return call(func() error {
		if path == "" || path == "/" {
			return fn(C.hid_t(f.f.ID()))
		}
		g, err := f.f.OpenGroup(path)
		if err != nil && create {
			g, err = f.createGroups(path)
		}
		if err != nil {
			return stackErr(mlfeed.ErrFormat, fmt.Sprintf("no group %s", path))
		}
		defer g.Close()
		return fn(C.hid_t(g.ID()))
	})
}

// createGroups creates every missing group along path.
func (f *File) createGroups(path string) (*hdf5.Group, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	cur := ""
	var g *hdf5.Group
	for _, p := range parts {
		if p == "" {
			continue
		}
		cur += "/" + p
		if g != nil {
			g.Close()
		}
		var err error
		if g, err = f.f.OpenGroup(cur); err != nil {
			C.bsp_prepare()
			if g, err = f.f.CreateGroup(cur); err != nil {
				return nil, err
			}
		}
	}
	if g == nil {
		return nil, errors.New("empty group path")
	}
	return g, nil
}

// Attr returns the string attribute name of the group at path; ok is false when the group
// has no such attribute.
func (f *File) Attr(path, name string) (value string, ok bool, err error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err = f.withGroup(path, false, func(loc C.hid_t) error {
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

// SetAttr writes value as a variable-length UTF-8 scalar string attribute of the group at
// path, creating the group (and its parents) if needed.
func (f *File) SetAttr(path, name, value string) error {
	cname, cval := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cval))
	return f.withGroup(path, true, func(loc C.hid_t) error {
		eb := newErrBuf()
		if C.bsp_attr_write(loc, cname, cval, eb.c()) < 0 {
			return eb.err(errors.New("writing attribute failed"), name)
		}
		return nil
	})
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

// Info describes a one-dimensional dataset.
type Info struct {
	Type    mlfeed.ElemType // the element type, or Invalid when it is not an integer or float
	Len     int64           // number of elements
	Rank    int             // number of dimensions of the dataspace
	Layout  string          // "contiguous", "chunked", "compact"
	Chunk   int64           // chunk length (chunked layout)
	Filters []string        // "deflate", "shuffle", "fletcher32", "szip", or numbers
}

// Dataset describes the dataset name in the group at path; ok is false when there is none.
func (f *File) Dataset(path, name string) (info Info, ok bool, err error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err = f.withGroup(path, false, func(loc C.hid_t) error {
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
	err := f.withGroup(path, false, func(loc C.hid_t) error {
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

// WriteOptions control how Write stores a dataset.
type WriteOptions struct {
	Chunk   int64 // chunk length in elements; 0 stores the dataset contiguous
	Level   int   // deflate level 1-9; 0 means no compression
	Shuffle bool  // add the shuffle filter before deflate
}

// Write creates the dataset name in the group at path (creating the group if needed) holding
// b's elements.
func (f *File) Write(path, name string, b mlfeed.Buffer, o WriteOptions) error {
	code := typeCode(b.Type)
	if code == 0 {
		return fmt.Errorf("%w: cannot store %s values in HDF5", mlfeed.ErrUnsupported, b.Type)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return f.withGroup(path, true, func(loc C.hid_t) error {
		var p unsafe.Pointer
		if len(b.Bytes) > 0 {
			p = unsafe.Pointer(&b.Bytes[0])
		}
		shuffle := C.int(0)
		if o.Shuffle {
			shuffle = 1
		}
		eb := newErrBuf()
		if C.bsp_dset_write(loc, cname, code, C.longlong(b.Len()), C.longlong(o.Chunk), C.int(o.Level), shuffle, p, eb.c()) < 0 {
			return eb.err(errors.New("writing dataset failed"), name)
		}
		return nil
	})
}
