"""Write HDF5 files whose datasets are compressed with the szip filter (HDF5's filter 4),
and the SHA-256 of what h5py reads back from each, for internal/hdf5's tests.

Usage: /usr/bin/python3 make.py OUTDIR, with Debian 12's python3-h5py 3.7.0 (HDF5 1.10.8,
whose szip filter is libaec 1.0.6's szip-compatible libsz) and hdf5-tools (h5repack).
Deterministic data (seeded), so reruns write the same values and, libaec being
deterministic, the same streams.

- dtypes.h5: 40 x 50 arrays in chunks of 16 x 20 (partial chunks on both edges; a scanline of
  20 pixels is not a whole number of blocks, so libaec pads each one), a smooth field with a
  little noise, as int8 to int64, uint8 to uint64, float32 and float64 (32- and 64-bit pixels
  are coded as byte planes), little-endian with the NN preprocessor and 16 pixels per block
  (NAME_nn), some also with EC (no preprocessor, NAME_ec), big-endian int16, uint32, int64
  and float64 (NAME_be_nn, NAME_be_ec).
- options.h5: 1-D and 2-D data meant to reach every coding option: constant data (runs of
  zero blocks, to the end of a 64-block segment or of the reference sample interval), zeros
  without the preprocessor, slow steps (second extension, zero blocks), smooth waves (split
  samples, k from 0 to 13), noise (blocks stored as they are; chunks szip cannot shrink are
  stored unfiltered), noise in bursts (uncompressed blocks among compressed ones), 8, 16 and
  32 pixels per block, scanlines longer than 128 blocks (cut to 128), chunks whose scanline
  is shorter than a block (HDF5 then takes the chunk's elements as one scanline), signed
  bytes, and shuffle before szip.
- repack.h5: h5repack's szip (-f SZIP=8,NN and -f SZIP=32,EC) over plain int16 and
  big-endian uint16.
- precision.h5: chunks of integers whose precision is less than their size, which HDF5 codes with
  as many bits per pixel (5 in uint8, 12 in uint16, 20 in big-endian uint32) and mlfeed does
  not read as datasets: for each, NAME/chunk (uint8) is the chunk as h5py's read_direct_chunk
  returns it, NAME/cd_values (uint32) the filter's parameters, and NAME/want (uint8) the
  bytes it decodes to (the values h5py read back, of the datatype's size and byte order).

expected.txt: one line per dataset: file, dataset path, numpy dtype, shape (x-separated),
SHA-256 of its values as little-endian bytes, as h5py read them back. make.py prints, for
each dataset, its szip parameters and how many chunks are stored unfiltered.
"""
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np
import h5py
from h5py import h5d, h5p, h5s, h5t, h5z

out = sys.argv[1]
rng = np.random.default_rng(4)
expected = []


def record(name, path, arr):
    le = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.byteorder == ">" else arr
    digest = hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()
    shape = "x".join(str(s) for s in arr.shape)
    expected.append(f"{name} {path} {arr.dtype.str} {shape} {digest}")


def check(name):
    """Read every dataset of name back, compare with what was written (the attribute
    written is not kept: the arrays are passed in), record it and print its filters."""
    with h5py.File(os.path.join(out, name)) as f:
        for path in sorted(f):
            d = f[path]
            if not isinstance(d, h5py.Dataset):
                continue
            got = d[...]
            record(name, path, got)
            pl = d.id.get_create_plist()
            filters = [pl.get_filter(i) for i in range(pl.get_nfilters())]
            sz = [fl[2] for fl in filters if fl[0] == 4]
            chunks = d.id.get_num_chunks()
            raw = sum(1 for i in range(chunks) if d.id.get_chunk_info(i).filter_mask)
            print(name, path, d.dtype.str, d.shape, d.chunks, "szip", sz, f"{raw}/{chunks} chunks unfiltered")


def smooth2d(rows, cols, scale, noise):
    i, j = np.indices((rows, cols))
    x = np.sin(i / 15.0) * np.cos(j / 25.0) * scale + rng.normal(0, noise, (rows, cols))
    return x


def dtypes():
    fn = os.path.join(out, "dtypes.h5")
    # whole numbers that change by a few units along a scanline, over an offset that leaves
    # the high bytes constant (zero blocks in their planes)
    base = np.round(smooth2d(40, 50, 60.0, 0.3))
    offset = {1: 0, 2: 3000, 4: 3 << 20, 8: 5 << 40}
    with h5py.File(fn, "w", libver="latest") as f:
        for dt in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
            t = np.dtype("<" + dt)
            if t.kind == "f":
                a = (base / 8 + 1000).astype(t)
            elif t.kind == "u":
                a = (base + 64 + offset[t.itemsize]).astype(t)
            else:
                a = (base - offset[t.itemsize]).astype(t)
            f.create_dataset(dt + "_nn", data=a, chunks=(16, 20), compression="szip", compression_opts=("nn", 16))
            if dt in ("i1", "u2", "f4", "u8"):
                f.create_dataset(dt + "_ec", data=a, chunks=(16, 20), compression="szip", compression_opts=("ec", 16))
            if dt in ("i2", "u4", "f8"):
                b = a.astype(t.newbyteorder(">"))
                f.create_dataset(dt + "_be_nn", data=b, chunks=(16, 20), compression="szip", compression_opts=("nn", 16))
                f.create_dataset(dt + "_be_ec", data=b, chunks=(16, 20), compression="szip", compression_opts=("ec", 8))
    check("dtypes.h5")


def options():
    fn = os.path.join(out, "options.h5")
    n = 6000
    t = np.arange(n)
    with h5py.File(fn, "w", libver="latest") as f:
        def put(name, a, chunks, mode, ppb, **kw):
            f.create_dataset(name, data=a, chunks=chunks, compression="szip", compression_opts=(mode, ppb), **kw)

        # constant: zero blocks to the end of a 64-block segment and of the RSI (128 blocks)
        put("const_u2_nn16", np.full(n, 1234, "<u2"), (5000,), "nn", 16)
        # zeros with a few ones: zero-block runs of every length, no preprocessor
        z = np.zeros(n, "u1")
        z[[7, 100, 101, 333, 900, 2000, 2100, 4000, 5999]] = 1
        put("zeros_u1_ec8", z, (3000,), "ec", 8)
        # slow steps: second extension and zero blocks
        put("steps_i2_nn32", (t // 37 % 5 - 2).astype("<i2"), (3000,), "nn", 32)
        put("steps_u1_ec16", (t // 9 % 3).astype("u1"), (3000,), "ec", 16)
        # smooth waves of several amplitudes: split samples with k from 0 to 13
        for amp, ppb, mode in [(3, 8, "nn"), (300, 16, "nn"), (9000, 32, "nn"), (30000, 16, "ec"), (100, 8, "ec")]:
            a = np.round(np.sin(t / 50.0) * amp + rng.normal(0, amp / 30 + 0.3, n)) + (32768 if mode == "nn" else amp + 20)
            put(f"wave{amp}_u2_{mode}{ppb}", a.astype("<u2"), (2500,), mode, ppb)
        # 14 bits of noise in 16: k = 13
        put("k13_u2_ec8", rng.integers(0, 1 << 14, 2000).astype("<u2"), (2000,), "ec", 8)
        put("k13_u2_nn8", (rng.integers(0, 1 << 13, 2000) + 20000).astype("<u2"), (2000,), "nn", 8)
        # noise in bursts: uncompressed blocks among compressed ones
        burst = np.round(np.sin(t / 40.0) * 50 + 1000).astype("<u2")
        for s in range(0, n, 700):
            burst[s:s + 40] = rng.integers(0, 1 << 16, 40)
        put("bursts_u2_nn16", burst, (3000,), "nn", 16)
        put("bursts_u2_ec32", burst, (3000,), "ec", 32)
        # noise: the chunk szip cannot shrink is stored unfiltered
        put("noise_u1_nn8", rng.integers(0, 256, 500).astype("u1"), (500,), "nn", 8)
        # signed bytes, both signs (libaec codes them as unsigned)
        put("signed_i1_nn8", np.round(np.sin(t / 20.0) * 120).astype("i1"), (1500,), "nn", 8)
        # a scanline longer than 128 blocks: HDF5 cuts it to 128 blocks (1024 pixels of 8)
        put("long_i4_nn8", (t * 7 + np.round(rng.normal(0, 3, n))).astype("<i4"), (6000,), "nn", 8)
        # a chunk whose scanline (5) is shorter than a block: one scanline of 20 pixels
        put("short_f4_nn16", (np.arange(12 * 10).reshape(12, 10) / 8).astype("<f4"), (4, 5), "nn", 16)
        # a scanline of 64 pixels of 8 bytes: whole blocks, no padding
        put("lines_f8_nn32", np.round(smooth2d(30, 64, 500.0, 0.3)) / 4, (10, 64), "nn", 32)
        # shuffle first, then szip
        put("shuffled_i4_nn16", (t[:3000] * 1000 + 5).astype("<i4"), (1000,), "nn", 16, shuffle=True)
    check("options.h5")


def repack():
    fn = os.path.join(out, "repack.h5")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "plain.h5")
        with h5py.File(src, "w") as f:
            i, j = np.indices((64, 48))
            f.create_dataset("nn8_i2", data=(i * 100 - j * j).astype("<i2"), chunks=(32, 24))
            f.create_dataset("ec32_u2", data=(i % 7 + j // 5).astype(">u2"), chunks=(64, 48))
        mid = os.path.join(tmp, "mid.h5")
        subprocess.run(["h5repack", "-f", "nn8_i2:SZIP=8,NN", src, mid], check=True)
        subprocess.run(["h5repack", "-f", "ec32_u2:SZIP=32,EC", mid, fn], check=True)
    check("repack.h5")


def precision():
    fn = os.path.join(out, "precision.h5")
    with tempfile.TemporaryDirectory() as tmp, h5py.File(os.path.join(tmp, "nbit.h5"), "w") as src, \
            h5py.File(fn, "w", libver="latest") as f:
        for name, base, prec, ppb, nn, n in [("u5", h5t.STD_U8LE, 5, 8, True, 900),
                                              ("u12", h5t.STD_U16LE, 12, 16, True, 1000),
                                              ("u12ec", h5t.STD_U16LE, 12, 32, False, 1000),
                                              ("u20be", h5t.STD_U32BE, 20, 16, True, 700)]:
            t = base.copy()
            t.set_precision(prec)
            dcpl = h5p.create(h5p.DATASET_CREATE)
            dcpl.set_chunk((n,))
            dcpl.set_szip(h5z.SZIP_NN_OPTION_MASK if nn else h5z.SZIP_EC_OPTION_MASK, ppb)
            h5d.create(src.id, name.encode(), t, h5s.create_simple((n,)), dcpl=dcpl)
            d = src[name]
            k = np.arange(n)
            v = np.round((np.sin(k / 23.0) + 1) / 2 * ((1 << prec) - 1) * 0.9 + rng.integers(0, 3, n)) % (1 << prec)
            v = v.astype(d.dtype)
            d[...] = v
            assert np.array_equal(d[...], v)
            mask, chunk = d.id.read_direct_chunk((0,))
            cd = d.id.get_create_plist().get_filter(0)[2]
            assert mask == 0, name
            g = f.create_group(name)
            g["chunk"] = np.frombuffer(chunk, "u1")
            g["cd_values"] = np.array(cd, "<u4")
            g["want"] = np.frombuffer(v.tobytes(), "u1")
            print("precision.h5", name, d.dtype.str, "precision", prec, "szip", cd, len(chunk), "bytes")


dtypes()
options()
repack()
precision()
with open(os.path.join(out, "expected.txt"), "w") as w:
    w.write("\n".join(expected) + "\n")
