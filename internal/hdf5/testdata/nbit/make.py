"""Write HDF5 files whose datasets use HDF5's n-bit (5) and scale-offset (6) filters, and the
SHA-256 of what h5py reads back from each, for internal/hdf5's tests.

Usage: /usr/bin/python3 make.py OUTDIR, with Debian 12's python3-h5py (h5py 3.7.0, HDF5
1.10.8). Deterministic data (seeded); HDF5 fills in the filters' parameters (cd_values) when
it creates each dataset. Datasets are made with h5py's low-level API where the high-level one
cannot say it: integer types of fewer bits than their bytes (precision and bit offset), the
n-bit filter, no fill value defined (H5Pset_fill_value with NULL, through ctypes on the
libhdf5 h5py loaded).

- nbit.h5, the n-bit filter: integers of 1, 2, 4 and 8 bytes, signed and unsigned, both byte
  orders, of several precisions and bit offsets, some of whole bytes (NAME:
  DTYPE_pPREC_oOFFSET; values outside
  the precision are clipped by HDF5 when written), a 2-D one in 7 x 11 chunks, float32 and
  big-endian float64 of full precision (HDF5 marks them as stored unpacked), n-bit then gzip,
  5-byte strings (stored unpacked), a fill value in chunks never written (fill), the same
  narrow integers contiguous without a filter (contig), and a compound (cmpd) of a narrow
  int32, a float64, an array of 3 narrow big-endian uint16, a 5-byte string, a nested
  compound (narrow int8, float32), a narrow big-endian int64 and padding between members.
  f4_p20 is a 4-byte float of 20 bits (HDF5's own n-bit test type: sign at bit 26, exponent
  of 6 bits at 20, bias 31, mantissa of 13 bits at 7): mlfeed refuses its datatype, not
  listed.
- scaleoffset.h5, the scale-offset filter: integers with the minimum bits found per chunk
  (scaleoffset=0) or fixed (i2_min6, lossy where a chunk spans more), with h5py's default
  fill value (0, defined), a fill value of their own, or none defined (_nofill), negative
  values, constant chunks (0 minimum bits without a fill value), chunks of only the fill
  value, chunks spanning their type's whole range (stored at full bits), minimum bits set to
  the type's (i4_min32: chunks stored as they are); floats scaled by 10^D (D-scaling: lossy
  when written, so the values are what h5py reads back) for several D, both byte orders, with
  and without fill values, at full bits (a range 10^D times over 2^31 or 2^63) and constant;
  a 2-D float64; scale-offset then gzip.

expected.txt: one line per dataset: file, dataset path, numpy dtype, shape (x-separated),
SHA-256 of its values as little-endian bytes, as h5py reads them back here. For the compound,
its records (path cmpd, dtype |V..) as HDF5 gives them in the file's own type, and each
member of the types mlfeed reads (cmpd.NAME; an array member's shape ends with its own).
"""
import ctypes
import hashlib
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(56)
expected = []
h5t, h5p, h5s, h5d, h5z = h5py.h5t, h5py.h5p, h5py.h5s, h5py.h5d, h5py.h5z
ALL = h5s.ALL

lib = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libhdf5" in l and "_hl" not in l})
libhdf5 = ctypes.CDLL(lib[0])


def record(name, path, arr):
    le = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.byteorder == ">" else arr
    digest = hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()
    shape = "x".join(str(s) for s in arr.shape)
    expected.append(f"{name} {path} {arr.dtype.str} {shape} {digest}")


def narrow(base, prec, off):
    t = base.copy()
    t.set_precision(prec)
    t.set_offset(off)
    return t


def create(f, name, tid, data, chunks=None, filters=(), fill=None, nofill=False, select=None):
    """A dataset of type tid holding data (written through h5py's conversion from its numpy
    type), chunked as chunks with filters ('nbit', ('so', scale type, factor), 'gzip'), a fill
    value (numpy scalar of data's type) or none defined; select writes only that slice."""
    space = h5s.create_simple(data.shape)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    if chunks:
        dcpl.set_chunk(chunks)
    for flt in filters:
        if flt == "nbit":
            dcpl.set_filter(h5z.FILTER_NBIT)
        elif flt == "gzip":
            dcpl.set_deflate(4)
        else:
            dcpl.set_scaleoffset(flt[1], flt[2])
    if fill is not None:
        dcpl.set_fill_value(np.array(fill, dtype=data.dtype))
    if nofill:
        if libhdf5.H5Pset_fill_value(ctypes.c_int64(dcpl.id), ctypes.c_int64(tid.id), None) < 0:
            raise RuntimeError("H5Pset_fill_value")
    ds = h5d.create(f.id, name.encode(), tid, space, dcpl)
    if select is None:
        ds.write(ALL, ALL, np.ascontiguousarray(data))
    else:
        part = np.ascontiguousarray(data[select])
        fs = ds.get_space()
        fs.select_hyperslab((select.start,), (select.stop - select.start,))
        ds.write(h5s.create_simple(part.shape), fs, part)
    return ds


def wide(n, dt, lo, hi):
    return rng.integers(lo, hi, size=n, dtype=np.dtype(dt.lstrip("<>|")), endpoint=True).astype(dt)


def readback(name):
    with h5py.File(os.path.join(out, name), "r") as f:
        for k in sorted(f):
            ds = f[k]
            if ds.dtype.names:
                raw = np.zeros(ds.shape, dtype=np.dtype((np.void, ds.dtype.itemsize)))
                ds.id.read(ALL, ALL, raw, mtype=ds.id.get_type())
                record(name, k, raw)
                for m in ("a", "b", "c", "d"):
                    record(name, f"{k}.{m}", ds[m])
            elif k != "f4_p20":
                record(name, k, ds[()])


# ---- n-bit
with h5py.File(os.path.join(out, "nbit.h5"), "w", libver="latest") as f:
    n = 1000
    for base, dt, prec, off in [
        (h5t.STD_I32LE, "<i4", 12, 4), (h5t.STD_U32LE, "<u4", 12, 4), (h5t.STD_I16BE, ">i2", 9, 3),
        (h5t.STD_U16BE, ">u2", 5, 11), (h5t.STD_I8LE, "i1", 3, 2), (h5t.STD_U8LE, "u1", 7, 0),
        (h5t.STD_I64LE, "<i8", 40, 7), (h5t.STD_I64BE, ">i8", 37, 20), (h5t.STD_U64LE, "<u8", 63, 1),
        (h5t.STD_I32LE, "<i4", 1, 31), (h5t.STD_U16LE, "<u2", 8, 8), (h5t.STD_I32BE, ">i4", 16, 8),
    ]:
        info = np.iinfo(dt)
        span = 1 << (prec + 1)  # some values outside the precision: clipped
        lo, hi = (-span, span) if info.min < 0 else (0, 2 * span)
        data = wide(n, dt, max(lo, int(info.min)), min(hi, int(info.max)))
        name = f"{np.dtype(dt).kind}{np.dtype(dt).itemsize}{'be' if dt[0] == '>' else ''}_p{prec}_o{off}"
        create(f, name, narrow(base, prec, off), data, (300,), ["nbit"])
    create(f, "i4_p17_o9_2d", narrow(h5t.STD_I32LE, 17, 9), wide(30 * 50, "<i4", -70000, 70000).reshape(30, 50), (7, 11), ["nbit"])
    create(f, "f4", h5t.IEEE_F32LE, rng.standard_normal(n).astype("<f4"), (300,), ["nbit"])
    create(f, "f8be", h5t.IEEE_F64BE, rng.standard_normal(n).astype(">f8"), (300,), ["nbit"])
    create(f, "i4_p12_o4_gzip", narrow(h5t.STD_I32LE, 12, 4), wide(n, "<i4", -2048, 2047) // 16, (300,), ["nbit", "gzip"])
    s5 = h5t.C_S1.copy()
    s5.set_size(5)
    create(f, "s5", s5, np.array([b"s%d" % i for i in range(n)], dtype="S5"), (300,), ["nbit"])
    create(f, "fill", narrow(h5t.STD_I32LE, 12, 4), wide(n, "<i4", -2048, 2047), (100,), ["nbit"],
           fill=np.int32(-7), select=slice(250, 420))
    create(f, "contig", narrow(h5t.STD_I16LE, 10, 3), wide(n, "<i2", -600, 600))
    # a compound of 48 bytes: members at their offsets, gaps between some
    inner = h5t.create(h5t.COMPOUND, 8)
    inner.insert(b"x", 0, narrow(h5t.STD_I8LE, 4, 2))
    inner.insert(b"y", 4, h5t.IEEE_F32LE)
    ct = h5t.create(h5t.COMPOUND, 48)
    ct.insert(b"a", 0, narrow(h5t.STD_I32LE, 12, 4))
    ct.insert(b"b", 8, h5t.IEEE_F64LE)
    ct.insert(b"c", 16, h5t.array_create(narrow(h5t.STD_U16BE, 10, 2), (3,)))
    ct.insert(b"s", 22, s5)
    ct.insert(b"n", 28, inner)
    ct.insert(b"d", 40, narrow(h5t.STD_I64BE, 33, 0))
    mt = np.dtype({"names": ["a", "b", "c", "s", "n", "d"],
                   "formats": ["<i4", "<f8", ("<u2", (3,)), "S5", [("x", "i1"), ("y", "<f4")], "<i8"],
                   "offsets": [0, 8, 16, 22, 28, 40], "itemsize": 48})
    rec = np.zeros(700, dtype=mt)
    rec["a"] = wide(700, "<i4", -3000, 3000)
    rec["b"] = rng.standard_normal(700)
    rec["c"] = rng.integers(0, 1500, size=(700, 3))
    rec["s"] = [b"r%d" % i for i in range(700)]
    rec["n"]["x"] = wide(700, "i1", -10, 10)
    rec["n"]["y"] = rng.standard_normal(700)
    rec["d"] = wide(700, "<i8", -(1 << 33), 1 << 33)
    create(f, "cmpd", ct, rec, (128,), ["nbit"])
    # HDF5's own n-bit float test type: refused by mlfeed
    ft = h5t.IEEE_F32LE.copy()
    ft.set_fields(26, 20, 6, 7, 13)
    ft.set_offset(7)
    ft.set_precision(20)
    ft.set_size(4)
    ft.set_ebias(31)
    create(f, "f4_p20", ft, rng.standard_normal(100).astype("<f4"), (50,), ["nbit"])
readback("nbit.h5")

# ---- scale-offset
SO_INT, SO_D = h5z.SO_INT, h5z.SO_FLOAT_DSCALE
with h5py.File(os.path.join(out, "scaleoffset.h5"), "w", libver="latest") as f:
    n = 1000
    some = wide(n, "<i4", -1000, 5000)
    some[::7] = 0  # h5py's default fill value: stored as the marker
    create(f, "i4_auto", h5t.STD_I32LE, some, (300,), [("so", SO_INT, 0)])
    create(f, "i4_auto_nofill", h5t.STD_I32LE, some, (300,), [("so", SO_INT, 0)], nofill=True)
    create(f, "i2_min6", h5t.STD_I16LE, wide(n, "<i2", -40, 40), (300,), [("so", SO_INT, 6)])
    create(f, "i1_neg_nofill", h5t.STD_I8LE, wide(n, "i1", -128, -100), (300,), [("so", SO_INT, 0)], nofill=True)
    big = wide(n, ">i8", -(1 << 41), 1 << 40)
    big[::5] = -5
    create(f, "i8be_fill", h5t.STD_I64BE, big, (300,), [("so", SO_INT, 0)], fill=np.int64(-5))
    create(f, "u8_full", h5t.STD_U64LE, wide(n, "<u8", 0, (1 << 64) - 1), (300,), [("so", SO_INT, 0)])
    create(f, "u1_full", h5t.STD_U8LE, np.arange(n, dtype="u1"), (300,), [("so", SO_INT, 0)])
    create(f, "u2_const_nofill", h5t.STD_U16LE, np.full(n, 777, dtype="<u2"), (300,), [("so", SO_INT, 0)], nofill=True)
    create(f, "u2_const", h5t.STD_U16LE, np.full(n, 777, dtype="<u2"), (300,), [("so", SO_INT, 0)])
    create(f, "i4_allfill", h5t.STD_I32LE, np.zeros(n, dtype="<i4"), (300,), [("so", SO_INT, 0)])
    create(f, "i4_min32", h5t.STD_I32LE, some, (300,), [("so", SO_INT, 32)])
    create(f, "u4be_auto", h5t.STD_U32BE, wide(n, ">u4", 1 << 31, (1 << 31) + 100000), (300,), [("so", SO_INT, 0)])
    x = (rng.standard_normal(n) * 100).astype("<f4")
    for d in (0, 1, 3, 6):
        create(f, f"f4_d{d}", h5t.IEEE_F32LE, x, (300,), [("so", SO_D, d)])
    create(f, "f4be_d2", h5t.IEEE_F32BE, x.astype(">f4"), (300,), [("so", SO_D, 2)])
    xf = x.copy()
    xf[::6] = -999.0
    create(f, "f4_d2_fill", h5t.IEEE_F32LE, xf, (300,), [("so", SO_D, 2)], fill=np.float32(-999.0))
    create(f, "f4_d2_nofill", h5t.IEEE_F32LE, xf, (300,), [("so", SO_D, 2)], nofill=True)
    y = rng.standard_normal(n) * 1000
    for d in (0, 2, 4, 10):
        create(f, f"f8_d{d}", h5t.IEEE_F64LE, y, (300,), [("so", SO_D, d)])
    create(f, "f8be_d3", h5t.IEEE_F64BE, y.astype(">f8"), (300,), [("so", SO_D, 3)])
    create(f, "f8_full", h5t.IEEE_F64LE, rng.standard_normal(n) * 1e17, (300,), [("so", SO_D, 3)])
    create(f, "f4_full", h5t.IEEE_F32LE, (rng.standard_normal(n) * 1e10).astype("<f4"), (300,), [("so", SO_D, 3)])
    create(f, "f4_const_nofill", h5t.IEEE_F32LE, np.full(n, 3.25, dtype="<f4"), (300,), [("so", SO_D, 2)], nofill=True)
    create(f, "f8_d2_2d", h5t.IEEE_F64LE, (rng.standard_normal((30, 50)) * 50), (7, 11), [("so", SO_D, 2)])
    create(f, "i4_auto_gzip", h5t.STD_I32LE, some, (300,), [("so", SO_INT, 0), "gzip"])
readback("scaleoffset.h5")

with open(os.path.join(out, "expected.txt"), "w") as fh:
    fh.write("\n".join(expected) + "\n")
