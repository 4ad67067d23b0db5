// C helpers of package h5, included by its cgo files: libhdf5 calls that check every return
// value and record libhdf5's error stack before cleanup calls clear it.

#ifndef BSP_H5_H
#define BSP_H5_H
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

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
static int bsp_attr_exists_(hid_t loc, const char *name, char *err) {
	bsp_prepare();
	htri_t r = H5Aexists(loc, name);
	if (r < 0) { bsp_error(err, ERRLEN); return -1; }
	return (int)r;
}

// bsp_attr_read reads a string attribute of one element (scalar or one-element simple
// dataspace; fixed or variable length) into a malloc'd buffer. Returns 0 on success, -1 on a
// libhdf5 error, -2 when the attribute is not a single string, -3 when it is too long.
static int bsp_attr_read_(hid_t loc, const char *name, char **out, size_t *outlen, char *err) {
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
	int bigendian;  // 1 when the stored byte order is big-endian
} dsinfo;

// bsp_dset_info describes the dataset name in loc. Returns 1 if found, 0 if absent, -1 on error,
// -2 when name is not a dataset.
static int bsp_dset_info_(hid_t loc, const char *name, dsinfo *info, char *err) {
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
	if (c == H5T_INTEGER || c == H5T_FLOAT) info->bigendian = H5Tget_order(t) == H5T_ORDER_BE;
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
static int bsp_dset_read_(hid_t loc, const char *name, int code, long long off, long long n, long long total, void *buf, char *err) {
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

// bsp_dset_create creates the chunked one-dimensional dataset name of n elements (growable
// without limit when extendable), in chunks of chunk elements, shuffled and deflated as asked
// (level 0: unfiltered), for direct chunk writes; returns its id or -1.
static hid_t bsp_dset_create(hid_t loc, const char *name, int code, long long n, long long chunk, int level, int shuffle, int extendable, char *err) {
	hid_t sp = -1, pl = -1, ds = -1;
	hid_t mt = memtype(code);
	bsp_prepare();
	if (mt < 0) return -1;
	hsize_t dims[1] = {(hsize_t)n}, cd[1] = {(hsize_t)chunk}, maxdims[1] = {H5S_UNLIMITED};
	if ((sp = H5Screate_simple(1, dims, extendable ? maxdims : NULL)) < 0) FAIL;
	if ((pl = H5Pcreate(H5P_DATASET_CREATE)) < 0) FAIL;
	if (H5Pset_chunk(pl, 1, cd) < 0) FAIL;
	if (level > 0 && shuffle && H5Pset_shuffle(pl) < 0) FAIL;
	if (level > 0 && H5Pset_deflate(pl, (unsigned)level) < 0) FAIL;
	if ((ds = H5Dcreate2(loc, name, mt, sp, H5P_DEFAULT, pl, H5P_DEFAULT)) < 0) FAIL;
done:
	if (pl >= 0) H5Pclose(pl);
	if (sp >= 0) H5Sclose(sp);
	return ds;
}

// bsp_dset_extend sets the length of an extendable dataset.
static int bsp_dset_extend(hid_t ds, long long n, char *err) {
	bsp_prepare();
	hsize_t d[1] = {(hsize_t)n};
	if (H5Dset_extent(ds, d) < 0) { bsp_error(err, ERRLEN); return -1; }
	return 0;
}

// bsp_chunk_write stores the filtered chunk at element offset off.
static int bsp_chunk_write(hid_t ds, long long off, const void *buf, size_t size, char *err) {
	bsp_prepare();
	hsize_t o[1] = {(hsize_t)off};
	if (H5Dwrite_chunk(ds, H5P_DEFAULT, 0, o, size, buf) < 0) { bsp_error(err, ERRLEN); return -1; }
	return 0;
}

static hid_t bsp_dset_open_(hid_t loc, const char *name, char *err) {
	bsp_prepare();
	hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
	if (ds < 0) bsp_error(err, ERRLEN);
	return ds;
}

static int bsp_dset_close_(hid_t ds, char *err) {
	bsp_prepare();
	if (H5Dclose(ds) < 0) { bsp_error(err, ERRLEN); return -1; }
	return 0;
}

// bsp_chunk_size returns the stored size of the chunk at element offset off (0 when it was
// never written), or -1.
static long long bsp_chunk_size_(hid_t ds, long long off, char *err) {
	bsp_prepare();
	hsize_t o[1] = {(hsize_t)off}, size = 0;
	if (H5Dget_chunk_storage_size(ds, o, &size) < 0) { bsp_error(err, ERRLEN); return -1; }
	return (long long)size;
}

// bsp_chunk_read reads the stored (filtered) chunk at element offset off into buf and sets
// *mask to the filters that were skipped when it was written.
static int bsp_chunk_read_(hid_t ds, long long off, void *buf, unsigned *mask, char *err) {
	bsp_prepare();
	hsize_t o[1] = {(hsize_t)off};
	uint32_t m = 0;
	if (H5Dread_chunk(ds, H5P_DEFAULT, o, &m, buf) < 0) { bsp_error(err, ERRLEN); return -1; }
	*mask = m;
	return 0;
}

static int bsp_filter_deflate(void) { return H5Z_FILTER_DEFLATE; }
static int bsp_filter_shuffle(void) { return H5Z_FILTER_SHUFFLE; }
static int bsp_filter_fletcher32(void) { return H5Z_FILTER_FLETCHER32; }
static int bsp_filter_szip(void) { return H5Z_FILTER_SZIP; }

// bsp_inflate inflates the zlib stream src into dst; returns the inflated length, or a
// negative zlib error code.
static long long bsp_inflate(void *dst, size_t dstlen, const void *src, size_t srclen) {
	uLongf n = dstlen;
	int rc = uncompress((Bytef *)dst, &n, (const Bytef *)src, (uLong)srclen);
	if (rc != Z_OK) return rc < 0 ? rc : -100;
	return (long long)n;
}

// Crash guard. libhdf5 1.10 can crash on corrupt files (a bit-flipped global heap makes
// H5HG_read copy out of bounds; h5py and h5dump crash the same way). Every call that reads
// file data runs guarded: a SIGSEGV, SIGBUS or SIGFPE on the calling thread while it is inside
// libhdf5 jumps back to the wrapper, which returns BSP_CRASHED and marks the library unusable
// (its global lock and state are left behind, so nothing may call it again). Signals on other
// threads go to the handlers that were installed before (Go's). Calls are serialized by the
// Go side, so one guard is active at a time.
#include <setjmp.h>
#include <signal.h>
#include <pthread.h>

#define BSP_CRASHED (-9)

static sigjmp_buf bsp_jmp;
static volatile sig_atomic_t bsp_guarded;
static pthread_t bsp_guard_thread;
static volatile int bsp_crashed;
static struct sigaction bsp_old[3];
static const int bsp_sigs[3] = {SIGSEGV, SIGBUS, SIGFPE};

static void bsp_on_signal(int sig, siginfo_t *si, void *uc) {
	if (bsp_guarded && pthread_equal(pthread_self(), bsp_guard_thread)) {
		bsp_guarded = 0;
		siglongjmp(bsp_jmp, sig);
	}
	for (int i = 0; i < 3; i++) {
		if (bsp_sigs[i] != sig) continue;
		struct sigaction *old = &bsp_old[i];
		if (old->sa_flags & SA_SIGINFO) { old->sa_sigaction(sig, si, uc); return; }
		if (old->sa_handler == SIG_IGN) return;
		if (old->sa_handler != SIG_DFL) { old->sa_handler(sig); return; }
		sigaction(sig, old, NULL);
		raise(sig);
	}
}

static void bsp_guard_install(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = bsp_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) sigaction(bsp_sigs[i], &sa, &bsp_old[i]);
}

static void bsp_guard_remove(void) {
	for (int i = 0; i < 3; i++) sigaction(bsp_sigs[i], &bsp_old[i], NULL);
}

static int bsp_is_crashed(void) { return bsp_crashed; }

#define BSP_GUARDED(ret_t, name, params, args) \
	static ret_t name params { \
		if (bsp_crashed) return BSP_CRASHED; \
		bsp_guard_install(); \
		if (sigsetjmp(bsp_jmp, 1)) { \
			bsp_guard_remove(); \
			bsp_crashed = 1; \
			return BSP_CRASHED; \
		} \
		bsp_guard_thread = pthread_self(); \
		bsp_guarded = 1; \
		ret_t r = name##_ args; \
		bsp_guarded = 0; \
		bsp_guard_remove(); \
		return r; \
	}

BSP_GUARDED(int, bsp_attr_exists, (hid_t loc, const char *name, char *err), (loc, name, err))
BSP_GUARDED(int, bsp_attr_read, (hid_t loc, const char *name, char **out, size_t *outlen, char *err), (loc, name, out, outlen, err))
BSP_GUARDED(int, bsp_dset_info, (hid_t loc, const char *name, dsinfo *info, char *err), (loc, name, info, err))
BSP_GUARDED(int, bsp_dset_read, (hid_t loc, const char *name, int code, long long off, long long n, long long total, void *buf, char *err), (loc, name, code, off, n, total, buf, err))
BSP_GUARDED(hid_t, bsp_dset_open, (hid_t loc, const char *name, char *err), (loc, name, err))
BSP_GUARDED(int, bsp_dset_close, (hid_t ds, char *err), (ds, err))
BSP_GUARDED(long long, bsp_chunk_size, (hid_t ds, long long off, char *err), (ds, off, err))
BSP_GUARDED(int, bsp_chunk_read, (hid_t ds, long long off, void *buf, unsigned *mask, char *err), (ds, off, buf, mask, err))

// bsp_probe opens and closes the file name, guarded, and walks every object it links to, so
// that a file on which libhdf5 crashes is caught before gonum's unguarded calls touch it.
static herr_t bsp_probe_visit(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
	(void)obj; (void)name; (void)info; (void)data;
	return 0;
}

static int bsp_probe_(const char *name, char *err) {
	bsp_prepare();
	hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) { bsp_error(err, ERRLEN); return -1; }
	int rc = 0;
	if (H5Ovisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, bsp_probe_visit, NULL) < 0) { bsp_error(err, ERRLEN); rc = -1; }
	if (H5Fclose(f) < 0 && rc == 0) { bsp_error(err, ERRLEN); rc = -1; }
	return rc;
}
BSP_GUARDED(int, bsp_probe, (const char *name, char *err), (name, err))

#endif
