"""Write bitshuffle_zstd.h5: datasets through the bitshuffle filter (32008) with Zstandard
(compression 3), each beside NAME_plain, the same values without filters; and
bitshuffle_zstd_seed.h5, a fuzzing seed of under 24 KiB: zstd_i8_block64, zstd_u1 and
zstd_u2_tiny alone.

Usage: HDF5_PLUGIN_PATH=DIR /usr/bin/python3 bshuf_zstd.py OUTDIR (plugins/ here), where DIR holds the HDF
Group's bitshuffle plugin (BSHUF/src of github.com/HDFGroup/hdf5_plugins) built with
-DZSTD_SUPPORT and linked with libzstd (see README.md); Debian's python3-hdf5plugin ships no
plugins, only the option helpers used here (hdf5plugin.Bitshuffle: cd_values block size,
3 = Zstandard, level, after the plugin's three: version, version, element size). Deterministic
data (seeded), so reruns write the same values; the frames depend on the libzstd version.

- zstd_f4: float32 120 x 37 in chunks of 100 x 37 (3700 elements: a full block of the
  default 2048, a short block of 1648, 4 elements left over), level 3 (hdf5plugin's default).
- zstd_i2be: big-endian int16 4 x 1300 in chunks of 4 x 1251 (5004 elements: a block of
  4096, one of 904, 4 left over; the dataset's last chunk crosses its edge), level 1.
- zstd_i8_block64: int64 30 x 7 in one chunk (210 elements: blocks of 64, 64, 64, 16, 2 left
  over), level 5.
- zstd_u1: uint8 50 x 13 in chunks of 9 x 13 (117 elements: a block of 112, 5 left over).
- zstd_u2_tiny: uint16 x 5 in one chunk: fewer than 8 elements, no block, all left over.
- zstd_f8_levelN (N = 0, 22): float64 32 x 64 in one chunk (two blocks of the default 1024
  elements), a random walk in quarters, at zstd level N (0: libzstd's default; 22 its most).
"""
import os
import sys

import h5py
import hdf5plugin
import numpy as np

rng = np.random.default_rng(32008)


def pair(f, name, data, chunks, nelems=0, clevel=3, plain=True):
    f.create_dataset(name, data=data, chunks=chunks, **hdf5plugin.Bitshuffle(nelems=nelems, cname="zstd", clevel=clevel))
    if plain:
        f.create_dataset(name + "_plain", data=data)


small = [
    ("zstd_i8_block64", (rng.integers(0, 1 << 20, size=(30, 7)) << 30).astype("i8"), (30, 7), 64, 5),
    ("zstd_u1", rng.integers(0, 16, size=(50, 13)).astype("u1"), (9, 13), 0, 3),
    ("zstd_u2_tiny", np.array([1, 2, 65535, 4, 5], dtype="u2"), (5,), 0, 3),
]

with h5py.File(os.path.join(sys.argv[1], "bitshuffle_zstd_seed.h5"), "w") as f:
    for name, data, chunks, nelems, clevel in small:
        pair(f, name, data, chunks, nelems, clevel, plain=False)

with h5py.File(os.path.join(sys.argv[1], "bitshuffle_zstd.h5"), "w") as f:
    x = np.cumsum(np.round(rng.standard_normal((120, 37)) * 8) / 8, axis=0).astype("f4")
    pair(f, "zstd_f4", x, (100, 37))
    pair(f, "zstd_i2be", rng.integers(-20, 20, size=(4, 1300)).astype(">i2"), (4, 1251), clevel=1)
    for name, data, chunks, nelems, clevel in small:
        pair(f, name, data, chunks, nelems, clevel)
    walk = np.cumsum(np.round(rng.standard_normal((32, 64)) * 4) / 4, axis=1)
    for level in (0, 22):
        pair(f, f"zstd_f8_level{level}", walk, (32, 64), clevel=level)
    for name in f:
        if not name.endswith("_plain"):
            d = f[name]
            back = d[()]
            assert np.array_equal(back, f[name + "_plain"][()]), name
            print(name, d.dtype, d.shape, d.chunks, d._filters, d.id.get_storage_size())
