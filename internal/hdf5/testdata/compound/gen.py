"""Writes the compound-datatype test files of this folder and expected.json.

Run with Debian 12's /usr/bin/python3 (h5py 3.7.0, PyTables 3.7.0, HDF5 1.10.8, numpy 1.24):
    cd internal/hdf5/testdata/compound && /usr/bin/python3 gen.py

- types_earliest.h5 (libver earliest: compound datatype messages of version 1, or 2 where a
  member is an array) and types_latest.h5 (libver latest: version 3) each hold
  - `rec`: 10 records, chunks of 4 (a partial edge chunk), gzip + shuffle, of every member type
    the reader reads: int8..uint64 and float16/32/64 in both byte orders, h5py's bool, an enum
    of int16, a fixed-length string (S5), arrays (3,) float64 and (2, 2) int16 and (1,) uint8,
    and members it leaves out: a nested compound `pt` and a variable-length string `vs`;
  - `be`: 7 contiguous records of big-endian members (int32, float64, S3, (2,) uint16);
  - `grid`: a rank-2 compound dataset of 6 x 2 records (int32 `a`, float32 `b`), 5 x 2 chunks;
  - `plain`: 10 int32 beside them (the datasets share their first dimension, except grid's 6,
    so tests name the datasets they read).
- pytables.h5: a PyTables Table `/tbl` of 12 rows (Int32Col, UInt8Col, Float64Col, StringCol(4),
  BoolCol, Float32Col(shape=(3,)), Int16Col(shape=(2, 2))), blosc-free: zlib level 1, 5 rows a
  chunk.

- unreadable.h5: `y`, 5 records of members the reader leaves out only (a nested compound `pt`,
  a variable-length string `vs`): nothing readable.

expected.json maps file -> dataset -> member -> {"sha256": of the little-endian values as
mlfeed gives them (float16 as float32, bool one byte each, enums as their integers)} or
{"hex": the fixed-length strings as h5py gives them (trailing NULs dropped), in hex}.
"""
import hashlib
import json

import h5py
import numpy as np
import tables

N = 10


def rec_dtype():
    enum = h5py.enum_dtype({"LOW": 0, "MID": 5, "HIGH": -3}, basetype="i2")
    return np.dtype([
        ("i1", "<i1"), ("i2", "<i2"), ("i4", "<i4"), ("i8", "<i8"),
        ("u1", "<u1"), ("u2", "<u2"), ("u4", "<u4"), ("u8", "<u8"),
        ("bi2", ">i2"), ("bu4", ">u4"), ("bi8", ">i8"),
        ("f2", "<f2"), ("f4", "<f4"), ("f8", "<f8"),
        ("bf2", ">f2"), ("bf4", ">f4"), ("bf8", ">f8"),
        ("flag", "?"), ("level", enum), ("name", "S5"),
        ("vec", "<f8", (3,)), ("mat", "<i2", (2, 2)), ("one", "u1", (1,)),
        ("pt", [("x", "<f4"), ("y", "<f4")]), ("vs", h5py.string_dtype()),
    ])


def fill(dt, n, seed):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, dt)
    for name in dt.names:
        sub = dt[name]
        if name == "vs":
            a[name] = ["v%d" % i for i in range(n)]
        elif name == "pt":
            a[name]["x"] = np.arange(n)
            a[name]["y"] = -np.arange(n)
        elif name == "level":
            a[name] = rng.choice([0, 5, -3], n)
        elif sub.kind == "S" or (sub.subdtype and sub.subdtype[0].kind == "S"):
            a[name] = [(b"s%d" % i) * (i % 3) for i in range(n)]
        elif sub.kind == "b":
            a[name] = rng.integers(0, 2, n).astype(bool)
        else:
            base = sub.subdtype[0] if sub.subdtype else sub
            if base.kind == "f":
                v = rng.standard_normal(a[name].shape) * 100
                v.flat[0] = np.nan if base.itemsize > 2 else np.inf
            else:
                info = np.iinfo(base)
                v = rng.integers(info.min, info.max, a[name].shape, dtype=base.newbyteorder("="), endpoint=True)
            a[name] = v
    return a


def expect(a):
    out = {}
    for name in a.dtype.names:
        v = a[name]
        base = v.dtype
        if base.kind == "V" or base.kind == "O":
            continue
        if base.kind == "S":
            out[name] = {"hex": [x.hex() for x in v.reshape(-1)]}
            continue
        if base.kind == "f" and base.itemsize == 2:
            v = v.astype("<f4")
        else:
            v = v.astype(base.newbyteorder("<"))
        out[name] = {"sha256": hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()}
    return out


def h5py_file(path, libver):
    exp = {}
    with h5py.File(path, "w", libver=libver) as f:
        a = fill(rec_dtype(), N, 1)
        f.create_dataset("rec", data=a, chunks=(4,), compression="gzip", shuffle=True)
        exp["/rec"] = expect(a)
        be = np.dtype([("i", ">i4"), ("d", ">f8"), ("s", "S3"), ("w", ">u2", (2,))])
        b = fill(be, 7, 2)
        f.create_dataset("be", data=b)
        exp["/be"] = expect(b)
        g = fill(np.dtype([("a", "<i4"), ("b", "<f4")]), 12, 3).reshape(6, 2)
        f.create_dataset("grid", data=g, chunks=(5, 2))
        exp["/grid"] = expect(g)
        f["plain"] = np.arange(N, dtype="i4")
    return exp


def pytables_file(path):
    class Row(tables.IsDescription):
        i = tables.Int32Col(pos=0)
        u = tables.UInt8Col(pos=1)
        d = tables.Float64Col(pos=2)
        s = tables.StringCol(4, pos=3)
        b = tables.BoolCol(pos=4)
        v = tables.Float32Col(shape=(3,), pos=5)
        m = tables.Int16Col(shape=(2, 2), pos=6)
    with tables.open_file(path, "w") as f:
        t = f.create_table("/", "tbl", Row, filters=tables.Filters(complevel=1, complib="zlib"), chunkshape=(5,))
        rows = np.zeros(12, t.dtype)
        for k, name in enumerate(rows.dtype.names):
            if name == "s":
                rows[name] = [(b"t%d" % i)[: i % 5] for i in range(12)]
            elif name == "b":
                rows[name] = np.arange(12) % 3 == 0
            else:
                rows[name] = (np.arange(rows[name].size).reshape(rows[name].shape) * (k + 1) - 7).astype(rows[name].dtype)
        t.append(rows)
    with h5py.File(path, "r") as f:
        return {"/tbl": expect(f["tbl"][()])}


with h5py.File("unreadable.h5", "w") as f:
    f["y"] = fill(np.dtype([("pt", [("x", "<f4"), ("y", "<f4")]), ("vs", h5py.string_dtype())]), 5, 4)

exp = {
    "types_earliest.h5": h5py_file("types_earliest.h5", "earliest"),
    "types_latest.h5": h5py_file("types_latest.h5", "latest"),
    "pytables.h5": pytables_file("pytables.h5"),
}
with open("expected.json", "w") as f:
    json.dump(exp, f, indent=1, sort_keys=True)
    f.write("\n")
