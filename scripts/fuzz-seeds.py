#!/usr/bin/python3
"""Structure-aware fuzz seeds for issue 28's cases, written as Go corpus files.

Run from the repository root with Debian's python3 (numpy, h5py): `/usr/bin/python3
scripts/fuzz-seeds.py`. It writes, as `go test fuzz v1` files named `seed-*` (kept in git, read
by `go test` as regression inputs and by `go test -fuzz` as seeds):

- shard/testdata/fuzz/FuzzManifest: hostile manifests (paths out of the data set, absolute,
  with NUL or backslashes, formats that name paths, chunk tables that do not sum, counts that
  overflow, duplicate shards and keys, deep nesting, a BOM, trailing data, ...), each a
  variation of a valid manifest of mlfeed_manifest version 2;
- format/npy/testdata/fuzz/FuzzReader: .npz decompression bombs (a deflated member of 4 MiB
  of zeros in 4 kB; one whose zip directory understates its size; one whose header claims far
  more than its stream holds) and zip directories that name one member twice or overlap;
- format/tfrecord/testdata/fuzz/FuzzReader: gzip TFRecord bombs (a record over the target's
  1 MiB limit in 1 kB; one just under it; two gzip members);
- format/hdf5/testdata/fuzz/FuzzReader and internal/hdf5/testdata/fuzz/FuzzReader: gzip chunk
  bombs (16 MiB of zeros in one chunk, over format/hdf5's 8 MiB fuzz budget; 1 MiB, under it),
  and internal/hdf5/testdata/diamond.h5 (kept as a file too, for TestWalkDiamond): 40 levels
  of groups each linking the next twice, 2^40 paths to the bottom dataset.

Parquet's bombs are left to format/parquet's own tests while its reader is being rewritten.
Made here; public domain. h5py files of libver='latest' carry timestamps, so reruns differ.
"""
import gzip
import io
import json
import os
import struct
import sys
import tempfile
import zipfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "hdf5", "testdata"))
import hostile  # noqa: E402 (the HDF5 builders of issue 28's files)


def golit(b):
    """b as the Go literal []byte("...") that Go's corpus files hold."""
    out = []
    for c in b:
        if c == 0x22:
            out.append('\\"')
        elif c == 0x5C:
            out.append("\\\\")
        elif c == 0x0A:
            out.append("\\n")
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return '[]byte("' + "".join(out) + '")'


def write(dir, name, *values):
    os.makedirs(dir, exist_ok=True)
    with open(os.path.join(dir, "seed-" + name), "w") as f:
        f.write("go test fuzz v1\n")
        for v in values:
            f.write(golit(v) + "\n")


# --- manifests -------------------------------------------------------------------------------

# The SHA-256 of the two shards `mlfeed convert` writes of "|x 1 2\n|x 3 4\n|x 5 6\n|x 7 8\n"
# with --input x:dense:2 --to cbf --shards 2 (this manifest's data set).
SHA = ["f0f5b7dd36dc0bfd1a89fbe483b00ad7e497b3455181411e2abce05e7b445179",
       "472ea7d54e4946d26660101230ad8627001efea6fc9318e128d8534701e423d2"]


def manifest(**over):
    shard = lambda i: {"path": "part-%05d.cbf" % i, "index": i, "sequences": 2, "samples": 2, "chunks": 1,
                       "chunk_table": [[2, 2]], "bytes": 95, "sha256": SHA[i]}
    m = {"mlfeed_manifest": 2, "format": "cbf", "has_ids": False,
         "streams": [{"name": "x", "storage": "dense", "type": "float32", "dim": 2}],
         "sequences": 4, "samples": 4, "shards": [shard(0), shard(1)]}
    m.update(over)
    return m


def with_shard(k, **over):
    m = manifest()
    m["shards"][0].update(over)
    return m


def manifests():
    d = "shard/testdata/fuzz/FuzzManifest"
    enc = lambda m: json.dumps(m, indent=1).encode()
    cases = {
        "valid": manifest(),
        "parent": with_shard(0, path="../outside.cbf"),
        "absolute": with_shard(0, path="/etc/passwd"),
        "climb": with_shard(0, path="a/../../x.cbf"),
        "inside-after-clean": with_shard(0, path="sub/../part-00000.cbf"),
        "dot-slash": with_shard(0, path="./part-00000.cbf"),
        "trailing-slash": with_shard(0, path="part-00000.cbf/"),
        "nul": with_shard(0, path="part-00000.cbf\x00../../x"),
        "backslash": with_shard(0, path="..\\..\\x.cbf"),
        "drive": with_shard(0, path="C:\\x.cbf"),
        "empty-path": with_shard(0, path=""),
        "self": with_shard(0, path="mlfeed.json"),
        "dir": with_shard(0, path="."),
        "no-shards": manifest(shards=[], sequences=0, samples=0),
        "format-path": manifest(format="../../x"),
        "format-unknown": manifest(format="nosuch"),
        "format-empty": manifest(format=""),
        "table-short": with_shard(0, chunk_table=[[1, 1]]),
        "table-more": with_shard(0, chunks=1, chunk_table=[[1, 1], [1, 1]]),
        "chunks-huge": with_shard(0, chunks=1 << 62),
        "negative": with_shard(0, sequences=-2, samples=-2, bytes=-1),
        "overflow": manifest(sequences=9223372036854775807, samples=9223372036854775807),
        "sum-overflow": manifest(shards=[dict(manifest()["shards"][0], sequences=9223372036854775807, chunk_table=[[9223372036854775807, 1]]),
                                         dict(manifest()["shards"][1], sequences=9223372036854775807, chunk_table=[[9223372036854775807, 1]])]),
        "totals-wrong": manifest(sequences=5),
        "duplicate-paths": manifest(shards=[manifest()["shards"][0], dict(manifest()["shards"][0], index=1)]),
        "index-gap": with_shard(0, index=7),
        "sha-short": with_shard(0, sha256="00"),
        "sha-nonhex": with_shard(0, sha256="z" * 64),
        "stream-type": manifest(streams=[{"name": "x", "storage": "dense", "type": "float128", "dim": 2}]),
        "stream-dim": manifest(streams=[{"name": "x", "storage": "dense", "type": "float32", "dim": -1}]),
        "stream-dim-huge": manifest(streams=[{"name": "x", "storage": "dense", "type": "float32", "dim": 1 << 40}]),
        "stream-storage": manifest(streams=[{"name": "x", "storage": "packed", "type": "float32", "dim": 2}]),
        "streams-none": manifest(streams=[]),
        "stream-names-twice": manifest(streams=[{"name": "x", "storage": "dense", "type": "float32", "dim": 2}] * 2),
        "version-future": manifest(mlfeed_manifest=999),
        "version-negative": manifest(mlfeed_manifest=-1),
        "task-out-of-range": manifest(task={"index": 3, "count": 3}),
        "task-zero": manifest(task={"index": 0, "count": 0}),
        "many-shards": manifest(shards=[dict(manifest()["shards"][0], path="part-%05d.cbf" % i, index=i) for i in range(300)],
                                sequences=600, samples=600),
    }
    for name, m in cases.items():
        write(d, "manifest-" + name, enc(m))
    base = enc(manifest())
    write(d, "manifest-float-counts", base.replace(b'"sequences": 4', b'"sequences": 4.0e0'))
    write(d, "manifest-number-1e300", base.replace(b'"sequences": 4', b'"sequences": 1e300'))
    write(d, "manifest-duplicate-key", base.replace(b'"format": "cbf"', b'"format": "cbf", "format": "../x"'))
    write(d, "manifest-bom", b"\xef\xbb\xbf" + base)
    write(d, "manifest-trailing", base + b'{"shards": []}')
    write(d, "manifest-deep", b'{"mlfeed_manifest": 2, "x": ' + b"[" * 20000 + b"]" * 20000 + b"}")
    write(d, "manifest-utf16", base.decode().encode("utf-16"))
    write(d, "manifest-null-shard", base.replace(b'"shards": [', b'"shards": [null, ', 1))


# --- npz -------------------------------------------------------------------------------------

def npy_header(shape, descr="<f4"):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % s for s in shape))
    pad = 64 - (10 + len(d) + 1) % 64
    h = d + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()


def npz(members, method=zipfile.ZIP_DEFLATED):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return b.getvalue()


def npzs():
    d = "format/npy/testdata/fuzz/FuzzReader"
    rows = 1024
    big = npy_header((rows, 1024)) + bytes(rows * 1024 * 4)  # 4 MiB of zeros
    write(d, "npz-deflate-bomb", npz([("x.npy", big)]))
    # The directory (and local header) understate the member's size: 128 bytes, where the
    # stream inflates to 4 MiB.
    b = bytearray(npz([("x.npy", big)]))
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = b.find(sig)
        b[at + off:at + off + 4] = struct.pack("<I", 128)
    write(d, "npz-size-understated", bytes(b))
    # A header that claims 2^40 rows, over a stream of 64 bytes.
    write(d, "npz-shape-overclaimed", npz([("x.npy", npy_header((1 << 40, 4)) + bytes(64))]))
    # Two directory entries for one member (two names, one local header), and one member twice.
    small = npy_header((4,)) + struct.pack("<4f", 1, 2, 3, 4)
    b = bytearray(npz([("a.npy", small), ("b.npy", small)], zipfile.ZIP_STORED))
    first = b.find(b"PK\x03\x04")
    cd2 = b.find(b"PK\x01\x02", b.find(b"PK\x01\x02") + 4)
    b[cd2 + 42:cd2 + 46] = struct.pack("<I", first)
    write(d, "npz-shared-member", bytes(b))
    write(d, "npz-name-twice", npz([("a.npy", small), ("a.npy", small)], zipfile.ZIP_STORED))
    # The directory's offset points at the directory itself.
    b = bytearray(npz([("a.npy", small)], zipfile.ZIP_STORED))
    cd = b.find(b"PK\x01\x02")
    b[cd + 42:cd + 46] = struct.pack("<I", cd)
    write(d, "npz-member-at-directory", bytes(b))


# --- tfrecord --------------------------------------------------------------------------------

def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = crc32c_table()


def crc32c(b):
    c = 0xFFFFFFFF
    if not any(b):  # zeros: a fast path for the large records below
        for _ in range(len(b)):
            c = CRC_TABLE[c & 0xFF] ^ (c >> 8)
        return c ^ 0xFFFFFFFF
    for x in b:
        c = CRC_TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(payload):
    n = struct.pack("<Q", len(payload))
    return n + struct.pack("<I", masked(n)) + payload + struct.pack("<I", masked(payload))


def varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append(n & 0x7F | 0x80)
        n >>= 7


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def example_bytes(key, value):
    """A tf.train.Example with one BytesList feature holding value."""
    feature = field(1, field(1, value))  # Feature.bytes_list = BytesList{value: [value]}
    entry = field(1, key.encode()) + field(2, feature)
    return field(1, field(1, entry))  # Example.features.feature[key]


def tfrecords():
    d = "format/tfrecord/testdata/fuzz/FuzzReader"
    gz = lambda b: gzip.compress(b, 9, mtime=0)
    write(d, "gzip-record-over-limit", gz(record(bytes(4 << 20))))
    write(d, "gzip-record-under-limit", gz(record(example_bytes("b", bytes((1 << 20) - 64)))))
    small = record(example_bytes("b", b"xyz"))
    write(d, "gzip-two-members", gz(small) + gz(small))
    write(d, "gzip-length-overclaimed", gz(struct.pack("<Q", 1 << 40) + struct.pack("<I", masked(struct.pack("<Q", 1 << 40)))))


# --- hdf5 ------------------------------------------------------------------------------------

def h5(build, libver="earliest"):
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "x.h5")
        with h5py.File(p, "w", libver=libver) as f:
            build(f)
        with open(p, "rb") as f:
            return f.read()


def bomb(rows, cols):
    def build(f):
        hostile.bomb(f, rows, cols)
        f["y"] = np.arange(rows, dtype="<i4")
    return build


def diamond(f, levels=40):
    g = f.create_group("l0")
    f["top"] = g
    for k in range(1, levels):
        n = f.create_group("l%d" % k)
        g["a"] = n
        g["b"] = n
        g = n
    g["v"] = np.arange(4, dtype="<f4")


def hdf5s():
    for d in ("format/hdf5/testdata/fuzz/FuzzReader", "internal/hdf5/testdata/fuzz/FuzzReader"):
        write(d, "hdf5-chunk-bomb-16MiB", h5(bomb(4096, 1024)))
        write(d, "hdf5-chunk-1MiB", h5(bomb(256, 1024)))
    b = h5(diamond, "latest")
    with open("internal/hdf5/testdata/diamond.h5", "wb") as f:
        f.write(b)


if __name__ == "__main__":
    if not os.path.isfile("go.mod"):
        sys.exit("run from the repository root")
    manifests()
    npzs()
    tfrecords()
    hdf5s()
