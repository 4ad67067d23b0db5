"""Write HDF5 files with h5py that exercise every feature the Go reader supports.

Usage: gen.py OUTDIR. Deterministic data (seeded), so reruns write the same values.
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)


def ints(dt, shape):
    dt = np.dtype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)


def floats(dt, shape):
    return rng.standard_normal(shape).astype(dt)


for libver in ("earliest", "latest"):
    with h5py.File(os.path.join(out, f"types_{libver}.h5"), "w", libver=libver) as f:
        for order in "<>":
            for k in "iu":
                for size in (1, 2, 4, 8):
                    dt = np.dtype(f"{order}{k}{size}")
                    f.create_dataset(f"{k}{size}{'le' if order == '<' else 'be'}", data=ints(dt, (37, 3)), dtype=dt)
            for size in (4, 8):
                dt = np.dtype(f"{order}f{size}")
                f.create_dataset(f"f{size}{'le' if order == '<' else 'be'}", data=floats(dt, (50,)), dtype=dt)
        f.create_dataset("scalar", data=np.float64(3.5))
        f.create_dataset("empty", shape=(0, 4), dtype="i4")
        f.attrs["vlen"] = "héllo wörld"
        f.attrs.create("fixed", np.bytes_(b"fixed-ascii"))
        f.attrs["one"] = np.array(["in an array"], dtype=h5py.string_dtype())
        f.attrs["num"] = 42

    with h5py.File(os.path.join(out, f"layouts_{libver}.h5"), "w", libver=libver) as f:
        a = floats("<f8", (1000, 7))
        b = ints("<i4", (5000,))
        f.create_dataset("contiguous", data=a)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        small = a[:10]
        sid = h5py.h5s.create_simple(small.shape)
        dsid = h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F64LE, sid, dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, small)
        f.create_dataset("chunked", data=a, chunks=(64, 3))
        f.create_dataset("gzip", data=a, chunks=(100, 7), compression="gzip", compression_opts=4)
        f.create_dataset("gzip_shuffle", data=b, chunks=(333,), compression="gzip", shuffle=True)
        f.create_dataset("fletcher", data=b, chunks=(700,), fletcher32=True)
        f.create_dataset("all_filters", data=a, chunks=(128, 2), compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("single", data=b, chunks=(5000,))
        f.create_dataset("single_gzip", data=b, chunks=(5000,), compression="gzip")
        f.create_dataset("unlimited", data=b, chunks=(100,), maxshape=(None,))
        f.create_dataset("unlimited_gzip", data=a, chunks=(10, 7), maxshape=(None, 7), compression="gzip")
        f.create_dataset("unlimited2", data=a, chunks=(100, 3), maxshape=(None, None), compression="gzip")
        f.create_dataset("many_chunks", data=b, chunks=(3,), maxshape=(None,))
        f.create_dataset("many_fixed", data=b, chunks=(2,))
        f.create_dataset("many_fixed_gzip", data=b, chunks=(2,), compression="gzip")
        f.create_dataset("partial", shape=(1000,), chunks=(10,), dtype="i2", fillvalue=-7)
        f["partial"][100:150] = np.arange(50)
        f.create_dataset("fill_only", shape=(20, 2), dtype="f4", fillvalue=1.25)
        f.create_dataset("be_gzip", data=a, dtype=">i8", chunks=(30, 7), compression="gzip")
        f.create_dataset("be_partial", shape=(60, 5), chunks=(7, 2), dtype=">f8", fillvalue=-2.5)
        f["be_partial"][10:20, 1:3] = 3.75
        f.create_dataset("maxbig", data=b[:100], chunks=(10,), maxshape=(1000,))
        f.create_dataset("bt2_plain", data=a, chunks=(50, 2), maxshape=(None, None))
        f.create_dataset("bt2_deep", data=a, chunks=(4, 2), maxshape=(None, None), compression="gzip")
        f.create_dataset("ea_paged", data=np.arange(40000, dtype="<i2"), chunks=(1,), maxshape=(None,))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((30, 7))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        sid = h5py.h5s.create_simple(a.shape)
        dsid = h5py.h5d.create(f.id, b"implicit", h5py.h5t.IEEE_F64LE, sid, dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, a)
        g = f.create_group("grp/sub")
        g.create_dataset("x", data=np.arange(10, dtype="u2"))
        for i in range(20):
            f.attrs[f"attr{i:02d}"] = f"value {i}"
        for i in range(20):
            f.create_group(f"many/g{i:02d}")
        big = f.create_group("bigattrs")
        big.attrs["large"] = "x" * 70000
        big.attrs["small"] = "y"

# A dataset ML code writes: X and y sharing a first dimension.
with h5py.File(os.path.join(out, "xy.h5"), "w") as f:
    f.create_dataset("X", data=floats("<f4", (300, 8, 8)), chunks=(32, 8, 8), compression="gzip")
    f.create_dataset("y", data=ints("<i8", (300,)))

# h5py's LZF filter (32000), each dataset beside a copy without filters (NAME_plain): random
# floats LZF cannot shrink (their chunks are stored as they are, the filter's bit set in the
# chunk's mask), ramps it can, shuffle before LZF, and edge chunks.
with h5py.File(os.path.join(out, "lzf.h5"), "w") as f:
    data = {
        "noise": (floats("<f4", (100, 30)), (16, 30), False),
        "ramp": (np.arange(5000, dtype=">i2").reshape(50, 100), (7, 33), False),
        "shuffled": (np.linspace(0, 1, 3000).reshape(300, 10), (64, 10), True),
        "bytes": (ints("u1", (40, 9, 9)) // 16, (8, 4, 4), False),
    }
    for name, (d, chunks, shuffle) in data.items():
        ds = f.create_dataset(name, data=d, chunks=chunks, compression="lzf", shuffle=shuffle)
        f.create_dataset(name + "_plain", data=d)
        masks = {ds.id.get_chunk_info(i).filter_mask for i in range(ds.id.get_num_chunks())}
        print(f"lzf.h5 {name}: chunk filter masks {sorted(masks)}")

# Enumerations and bitfields, which h5py reads as their integers: numpy bools (h5py stores
# them as an enum of int8, FALSE 0 and TRUE 1), an enum of big-endian int16 with names, and
# bitfields of 8 and 32 bits (written through h5py's low-level API). NAME_int holds the
# integers h5py reads from NAME.
with h5py.File(os.path.join(out, "enum.h5"), "w") as f:
    mask = rng.random(60) < 0.3
    f["mask"] = mask
    f["mask_int"] = mask.astype("i1")
    colours = rng.integers(-2, 3, size=(60, 2)).astype(">i2")
    f.create_dataset("colour", data=colours, dtype=h5py.enum_dtype({"RED": -2, "GREEN": 0, "BLUE": 2, "X": -1, "Y": 1}, basetype=">i2"))
    f["colour_int"] = colours
    for name, tid, dt in (("bits8", h5py.h5t.STD_B8LE, "u1"), ("bits32", h5py.h5t.STD_B32BE, ">u4")):
        vals = ints(dt, (60,))
        space = h5py.h5s.create_simple((60,))
        d = h5py.h5d.create(f.id, name.encode(), tid, space)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, vals, mtype=tid)
        f[name + "_int"] = vals
    assert f["mask"].id.get_type().get_class() == h5py.h5t.ENUM
    assert f["bits8"].id.get_type().get_class() == h5py.h5t.BITFIELD

# float16 (read as float32): little-endian contiguous, big-endian chunked with gzip, special
# values (NaN with a payload, infinities, subnormals, -0); NAME_f4 holds numpy's astype(float32).
with h5py.File(os.path.join(out, "half.h5"), "w") as f:
    x = rng.standard_normal((40, 3)).astype("<f2")
    x[0] = np.array([0x7e01, 0xfc00, 0x0001], dtype="<u2").view("<f2")
    x[1] = np.array([0x8000, 0x7c00, 0x83ff], dtype="<u2").view("<f2")
    f["x"] = x
    f["x_f4"] = x.astype("<f4")
    f.create_dataset("xbe", data=x.astype(">f2"), chunks=(16, 3), compression="gzip")
    f["xbe_f4"] = x.astype("<f4")
