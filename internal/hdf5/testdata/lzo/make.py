"""Write HDF5 files whose datasets are compressed with PyTables' LZO filter (305), and the
SHA-256 of what PyTables reads back from each, for internal/hdf5's tests.

Usage: /usr/bin/python3 make.py OUTDIR, with Debian's python3-tables (PyTables 3.7.0, which
links liblzo2 2.10 and registers the filter). Deterministic data (seeded), so reruns write
the same values; the compressed bytes depend on the liblzo2 version.

- arrays.h5: CArrays of int8, int16, int32, float32 and float64, 1-D x 5000 in chunks of
  1200 (the last one partial), complevel 1 to 9 (liblzo2's LZO1X-1 whatever the level),
  with and without byte shuffle: NAME is DTYPE_shuffle or DTYPE_none; a 2-D float64 EArray
  grown in three appends (earray); int32 random bytes that LZO cannot shrink (random_i4:
  PyTables' filter refuses a chunk that does not shrink, and HDF5 stores it unfiltered,
  marked in the chunk's filter mask), and a chunk mostly long runs (runs_u1: long literal
  and match lengths, M4 matches).
- table.h5: a Table (compound: int32, float64, 3-char string, bool, int16 x 2) of 3000 rows
  in chunks of 512 rows, LZO and byte shuffle; and the same without shuffle.
- seed.h5: a small int32 CArray with shuffle, random bytes (a chunk stored unfiltered) and
  a small Table, a fuzzing seed of under 24 KiB.
- big.h5: int32 x 400000 (a slow wave), chunks of 65536, LZO with byte shuffle, for the
  benchmark.

expected.txt: one line per dataset: file, dataset path, numpy dtype, shape (x-separated),
SHA-256 of its values as little-endian bytes (records as PyTables reads them), as read back
here.
"""
import hashlib
import os
import sys

import numpy as np
import tables

out = sys.argv[1]
rng = np.random.default_rng(305)
expected = []


def smooth(n, dt):
    """Compressible values: a slow wave of whole numbers with a little noise, as dt."""
    x = np.round(np.sin(np.arange(n) / 37.0) * 100) + (rng.random(n) < 0.05) * rng.integers(-3, 4, size=n)
    return x.astype(dt)


def record(name, path, arr):
    le = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.byteorder == ">" else arr
    digest = hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()
    shape = "x".join(str(s) for s in arr.shape)
    expected.append(f"{name} {path} {arr.dtype.str} {shape} {digest}")


def readback(name):
    with tables.open_file(os.path.join(out, name)) as f:
        for node in f.walk_nodes("/", "Leaf"):
            record(name, node._v_pathname.lstrip("/"), node.read())


fn = os.path.join(out, "arrays.h5")
with tables.open_file(fn, "w") as f:
    for i, dt in enumerate(["i1", "i2", "i4", "f4", "f8"]):
        for shuffle in (True, False):
            level = 1 + (2 * i + shuffle) % 9
            flt = tables.Filters(complevel=level, complib="lzo", shuffle=shuffle)
            name = f"{dt}_{'shuffle' if shuffle else 'none'}"
            f.create_carray("/", name, obj=smooth(5000, dt), chunkshape=(1200,), filters=flt)
    flt = tables.Filters(complevel=5, complib="lzo", shuffle=True)
    e = f.create_earray("/", "earray", atom=tables.Float64Atom(), shape=(0, 7), chunkshape=(100, 7), filters=flt)
    for n in (130, 250, 45):
        e.append(smooth(n * 7, "f8").reshape(n, 7))
    rnd = np.frombuffer(rng.bytes(4 * 3000), dtype="<i4")
    f.create_carray("/", "random_i4", obj=rnd, chunkshape=(1024,), filters=flt)
    runs = np.repeat(rng.integers(0, 4, size=40).astype("u1"), rng.integers(1, 2000, size=40))
    runs[::997] = 7
    f.create_carray("/", "runs_u1", obj=runs, chunkshape=(30000,), filters=tables.Filters(complevel=9, complib="lzo"))
readback("arrays.h5")


class Rec(tables.IsDescription):
    i = tables.Int32Col(pos=0)
    x = tables.Float64Col(pos=1)
    s = tables.StringCol(3, pos=2)
    b = tables.BoolCol(pos=3)
    v = tables.Int16Col(shape=(2,), pos=4)


fn = os.path.join(out, "table.h5")
with tables.open_file(fn, "w") as f:
    for shuffle in (True, False):
        flt = tables.Filters(complevel=3, complib="lzo", shuffle=shuffle)
        t = f.create_table("/", "shuffle" if shuffle else "none", Rec, filters=flt, chunkshape=(512,))
        r = t.row
        for k in range(3000):
            r["i"] = k * 7 - 1000
            r["x"] = np.sin(k / 50.0)
            r["s"] = b"abc"[k % 3:] + b"z"
            r["b"] = k % 5 == 0
            r["v"] = (k % 100, -k)
            r.append()
        t.flush()
readback("table.h5")

fn = os.path.join(out, "seed.h5")
with tables.open_file(fn, "w") as f:
    flt = tables.Filters(complevel=1, complib="lzo", shuffle=True)
    f.create_carray("/", "i4_shuffle", obj=smooth(600, "i4"), chunkshape=(256,), filters=flt)
    f.create_carray("/", "random_u1", obj=np.frombuffer(rng.bytes(300), dtype="u1"), chunkshape=(200,),
                    filters=tables.Filters(complevel=1, complib="lzo"))
    t = f.create_table("/", "table", Rec, filters=tables.Filters(complevel=1, complib="lzo"), chunkshape=(64,))
    t.append([(k, k / 3.0, b"ab", k % 2 == 0, (k, 2 * k)) for k in range(100)])
readback("seed.h5")

fn = os.path.join(out, "big.h5")
with tables.open_file(fn, "w") as f:
    flt = tables.Filters(complevel=1, complib="lzo", shuffle=True)
    f.create_carray("/", "i4_shuffle", obj=smooth(400000, "i4"), chunkshape=(65536,), filters=flt)
readback("big.h5")

with open(os.path.join(out, "expected.txt"), "w") as fh:
    fh.write("\n".join(expected) + "\n")
