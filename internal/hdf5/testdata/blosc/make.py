"""Write HDF5 files whose datasets are compressed with the Blosc filter (32001), and the
SHA-256 of what PyTables and h5py read back from each, for internal/hdf5's tests.

Usage: /usr/bin/python3 make.py OUTDIR, with Debian's python3-tables (PyTables, which links
c-blosc and registers the filter), python3-h5py and python3-blosc (python-blosc, the same
c-blosc). Deterministic data (seeded), so reruns write the same values; the frames depend on
the c-blosc version (1.21.3 here).

- codecs.h5 (PyTables): float32 x 1000 in chunks of 300 (the last one partial), for every
  compressor PyTables offers (blosclz, lz4, lz4hc, snappy, zlib, zstd) with no shuffle, byte
  shuffle and bit shuffle: NAME is CODEC_none, CODEC_shuffle or CODEC_bitshuffle.
- dtypes.h5 (PyTables): int8, int16, float32, float64, int64 and 24-byte
  strings, 2-D 100 x 90 in chunks of 33 x 41 (partial chunks on both edges), with blosclz and
  byte shuffle (split streams) and with lz4 and bit shuffle.
- big.h5 (PyTables): chunks of a few hundred KB that Blosc cuts into several blocks, the
  last one short: uint8 x 700000 in chunks of 300000 (blosclz), int16 x 400000 in chunks of
  150000 (blosclz, byte shuffle: split blocks, then a short block not split), float64 x
  100000 in chunks of 65536 (zstd, and lz4 with bit shuffle).
- direct.h5 (h5py, chunks written as frames python-blosc made, with write_direct_chunk):
  frames PyTables never writes: one stored as it is (clevel 0, flagged memcpyed), frames
  forced into many small blocks (blosc.set_blocksize, which splittable compressors enlarge),
  some whose element count is not a multiple of 8 (bit shuffle leaves them as they are),
  32-byte elements (never split), big-endian int32, snappy, zlib with bit shuffle.
- seed.h5 (PyTables): three small datasets, a fuzzing seed of under 24 KiB.

expected.txt: one line per dataset: file, dataset path, numpy dtype, shape (x-separated),
SHA-256 of its values as little-endian bytes (strings as stored), as read back here.
"""
import hashlib
import os
import sys

import numpy as np
import tables  # registers the Blosc filter with the HDF5 library h5py also uses
import h5py
import blosc

out = sys.argv[1]
rng = np.random.default_rng(32001)
expected = []

# hdf5-blosc's compressor numbers (cd_values[6]) and shuffle modes (cd_values[5])
COMPCODE = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "snappy": 3, "zlib": 4, "zstd": 5}


def smooth(n, dt):
    """Compressible values: a slow wave of whole numbers with a little noise, as dt."""
    x = np.round(np.sin(np.arange(n) / 37.0) * 100) + (rng.random(n) < 0.05) * rng.integers(-3, 4, size=n)
    return x.astype(dt)


def record(name, path, arr):
    le = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.byteorder == ">" else arr
    digest = hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()
    shape = "x".join(str(s) for s in arr.shape)
    expected.append(f"{name} {path} {arr.dtype.str} {shape} {digest}")


def pytables_file(name, datasets):
    """datasets: (path, array, chunkshape, complib, shuffle, bitshuffle)."""
    fn = os.path.join(out, name)
    with tables.open_file(fn, "w") as f:
        for path, arr, chunks, complib, shuffle, bitshuffle in datasets:
            filters = tables.Filters(complevel=5, complib=complib, shuffle=shuffle, bitshuffle=bitshuffle)
            f.create_carray("/", path, obj=arr, chunkshape=chunks, filters=filters)
    with tables.open_file(fn) as f:
        for path, arr, *_ in datasets:
            got = f.get_node("/" + path).read()
            # PyTables reads big-endian data as native: the values, and the element size
            assert got.dtype.itemsize == arr.dtype.itemsize and np.array_equal(got, arr), (name, path)
            record(name, path, got)


def frame_summary(name):
    """Print the first chunk's Blosc header of every dataset of name."""
    with h5py.File(os.path.join(out, name)) as f:
        for path in f:
            d = f[path]
            mask, b = d.id.read_direct_chunk((0,) * d.ndim)
            if mask:
                print(f"{name} {path}: first chunk stored unfiltered")
                continue
            flags, typesize = b[2], b[3]
            nbytes, bsize, cbytes = (int.from_bytes(b[i:i + 4], "little") for i in (4, 8, 12))
            print(f"{name} {path}: flags {flags:#04x} typesize {typesize} nbytes {nbytes} "
                  f"blocksize {bsize} ({-(-nbytes // bsize)} blocks) cbytes {cbytes}")


# codecs.h5
ds = []
for complib in COMPCODE:
    for mode in ("none", "shuffle", "bitshuffle"):
        ds.append((f"{complib}_{mode}", smooth(1000, "f4"), (300,), "blosc:" + complib,
                   mode == "shuffle", mode == "bitshuffle"))
pytables_file("codecs.h5", ds)

# dtypes.h5
ds = []
for dt in ("i1", "i2", "f4", "f8", "i8"):
    arr = smooth(100 * 90, dt).reshape(100, 90)
    ds.append((f"{dt}_blosclz", arr, (33, 41), "blosc:blosclz", True, False))
    ds.append((f"{dt}_lz4_bitshuffle", arr, (33, 41), "blosc:lz4", False, True))
words = np.array([f"word {i % 97:03d} of {i // 97}".encode() for i in range(9000)], dtype="S24").reshape(100, 90)
ds.append(("s24_blosclz", words, (33, 41), "blosc:blosclz", True, False))
pytables_file("dtypes.h5", ds)

# big.h5
runs = np.repeat(rng.integers(0, 256, size=7000), rng.integers(50, 150, size=7000))[:700000]
ds = [
    ("u1_blosclz", runs.astype("u1"), (300000,), "blosc:blosclz", False, False),
    ("i2_blosclz", smooth(400000, "i2"), (150000,), "blosc:blosclz", True, False),
    ("f8_zstd", smooth(100000, "f8"), (65536,), "blosc:zstd", True, False),
    ("f8_lz4_bitshuffle", smooth(100000, "f8"), (65536,), "blosc:lz4", False, True),
]
pytables_file("big.h5", ds)

# direct.h5: frames from python-blosc, written as the chunks of datasets whose pipeline is
# the Blosc filter alone
fn = os.path.join(out, "direct.h5")
direct = [
    # path, array, chunk rows, typesize, clevel, shuffle, compressor, forced blocksize
    ("memcpyed_u1", rng.integers(0, 256, size=3000, dtype="u1"), 1000, 1, 0, blosc.NOSHUFFLE, "blosclz", 0),
    ("blocks_f8_blosclz", smooth(6000, "f8"), 2500, 8, 5, blosc.SHUFFLE, "blosclz", 1000),
    ("blocks_i4_zstd_bitshuffle", smooth(6000, "i4"), 2500, 4, 5, blosc.BITSHUFFLE, "zstd", 1000),
    ("blocks_i4_zstd_bitshuffle2048", smooth(6000, "i4"), 2500, 4, 5, blosc.BITSHUFFLE, "zstd", 2048),
    ("i2_snappy", smooth(6000, "i2"), 2500, 2, 5, blosc.SHUFFLE, "snappy", 0),
    ("f4_zlib_bitshuffle", smooth(6000, "f4"), 2500, 4, 5, blosc.BITSHUFFLE, "zlib", 0),
    ("be_i4_lz4", smooth(6000, ">i4"), 2500, 4, 5, blosc.SHUFFLE, "lz4", 0),
    ("s32_blosclz", np.array([f"{i % 89:02d} times {i % 7}, line {i // 89:04d} of 1000".encode() for i in range(1000)], dtype="S32"),
     500, 32, 5, blosc.SHUFFLE, "blosclz", 0),
]
with h5py.File(fn, "w") as f:
    for path, arr, rows, typesize, clevel, shuffle, cname, bsize in direct:
        chunk_bytes = rows * arr.dtype.itemsize
        opts = (2, 2, typesize, chunk_bytes, clevel, shuffle, COMPCODE[cname])
        d = f.create_dataset(path, shape=arr.shape, dtype=arr.dtype, chunks=(rows,),
                             compression=32001, compression_opts=opts)
        blosc.set_blocksize(bsize)
        for lo in range(0, len(arr), rows):
            part = np.zeros(rows, dtype=arr.dtype)
            part[:len(arr[lo:lo + rows])] = arr[lo:lo + rows]
            frame = blosc.compress(part.tobytes(), typesize=typesize, clevel=clevel, shuffle=shuffle, cname=cname)
            d.id.write_direct_chunk((lo,), frame)
        blosc.set_blocksize(0)
with h5py.File(fn) as f:
    for path, arr, *_ in direct:
        got = f[path][()]
        assert np.array_equal(got, arr), path
        record("direct.h5", path, got)

# seed.h5
pytables_file("seed.h5", [
    ("blosclz_shuffle", smooth(600, "f8"), (256,), "blosc:blosclz", True, False),
    ("zstd_bitshuffle", smooth(500, "i4"), (200,), "blosc:zstd", False, True),
    ("lz4_none", smooth(300, "i2"), (128,), "blosc:lz4", False, False),
])

for name in ("codecs.h5", "dtypes.h5", "big.h5", "direct.h5", "seed.h5"):
    frame_summary(name)
with open(os.path.join(out, "expected.txt"), "w") as f:
    f.write("\n".join(expected) + "\n")
