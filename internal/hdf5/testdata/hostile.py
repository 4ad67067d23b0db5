"""Write the HDF5 files of issue 28 with h5py: object graphs with cycles, shared groups, soft
and external links, deep chains, datasets mlfeed cannot decode, and a gzip chunk bomb.

Usage: hostile.py OUTDIR [bomb]. Each graph file is written twice, libver='earliest' (old-style
groups: symbol tables, soft links in symbol table entries) and 'latest' (link messages).
scripts/fuzz-seeds.py imports it for its builders (graph, deep, bomb, zeros_chunk).
"""
import os
import sys
import zlib

import h5py
import numpy as np


def graph(f):
    """Cycles of two shapes, a shared group, hard and soft aliases, dangling links."""
    f["X"] = np.arange(30, dtype="<f4").reshape(10, 3)
    f["y"] = np.arange(10, dtype="<i8")
    g = f.create_group("g")
    g["loop"] = g  # a group that holds itself
    f["a/b"] = f  # a group two levels down that holds the root
    g["z"] = np.arange(10, dtype="<u2")
    g["Xalias"] = f["X"]  # a second hard link to X
    sh = f.create_group("shared")
    sh["w"] = np.arange(10, dtype="<f8")
    f["s1"] = sh  # two more paths to one group
    f["a/s2"] = sh
    f["s"] = h5py.SoftLink("/X")  # a soft link to a dataset
    f["sg"] = h5py.SoftLink("/g")  # to a group
    g["rel"] = h5py.SoftLink("z")  # a relative soft link, from the group that holds it
    f["dangle"] = h5py.SoftLink("/nowhere")  # a soft link to nothing
    f["ext"] = h5py.ExternalLink("other.h5", "/X")  # never followed
    f["l1"] = h5py.SoftLink("/l2")  # soft links that name each other
    f["l2"] = h5py.SoftLink("l1")


def deep(f, n):
    """A chain of n nested groups, each also linking back to the root."""
    g = f
    for i in range(n):
        g = g.create_group("d")
        g["up"] = f
    g["v"] = np.arange(10, dtype="<i4")


def zeros_chunk(rows, cols):
    """A zlib stream of rows x cols float32 zeros, compressed in pieces."""
    z = zlib.compressobj(9)
    zero = bytes(cols * 4 * 256)
    parts = [z.compress(zero) for _ in range(rows // 256)]
    parts.append(z.flush())
    return b"".join(parts)


def bomb(f, rows, cols):
    """One gzip chunk of rows x cols float32 zeros as dataset X, written as it is compressed
    (h5py never holds the decompressed chunk)."""
    d = f.create_dataset("X", shape=(rows, cols), dtype="<f4", chunks=(rows, cols), compression="gzip")
    d.id.write_direct_chunk((0, 0), zeros_chunk(rows, cols), filter_mask=0)


def main(out, big_bomb=False):
    for libver in ("earliest", "latest"):
        with h5py.File(os.path.join(out, f"graph_{libver}.h5"), "w", libver=libver) as f:
            graph(f)
        with h5py.File(os.path.join(out, f"deep_{libver}.h5"), "w", libver=libver) as f:
            deep(f, 300 if libver == "latest" else 60)

    # the file, as reported: nothing else in it
    with h5py.File(os.path.join(out, "loops.h5"), "w") as f:
        g = f.create_group("g")
        g["loop"] = g
        f["a/b"] = f
        f["x"] = np.arange(4, dtype="<f4")

    with h5py.File(os.path.join(out, "softlink.h5"), "w") as f:
        f["x"] = np.arange(6, dtype="<f4")
        f["s"] = h5py.SoftLink("/x")

    # datasets mlfeed cannot decode, beside one it can
    with h5py.File(os.path.join(out, "undecodable.h5"), "w") as f:
        f["ok"] = np.arange(100, dtype="<f4")
        # szip (4), which mlfeed reads since: h5py's default, NN with 8 pixels per block
        f.create_dataset("szip", data=np.arange(100, dtype="<f4"), compression="szip")
        f.create_dataset("pair", data=np.zeros(100, dtype=[("a", "<i4"), ("b", "<f4")]))
        # zfp (32013) is registered by hdf5plugin, which Debian lacks: the filter is declared
        # optional-unknown and one chunk is written as stored bytes.
        d = f.create_dataset("zfp", shape=(100,), dtype="<f4", chunks=(100,), compression=32013, allow_unknown_filter=True)
        d.id.write_direct_chunk((0,), np.arange(100, dtype="<f4").tobytes(), filter_mask=0)
        # Blosc (32001), which mlfeed reads since: one chunk, a frame python-blosc (Debian's
        # python3-blosc) wrote, lz4 with byte shuffle, hdf5-blosc's parameters
        import blosc

        frame = blosc.compress(np.arange(100, dtype="<f4").tobytes(), typesize=4, clevel=5, shuffle=blosc.SHUFFLE, cname="lz4")
        d = f.create_dataset("blosc", shape=(100,), dtype="<f4", chunks=(100,), compression=32001,
                             compression_opts=(2, 2, 4, 400, 5, 1, 1), allow_unknown_filter=True)
        d.id.write_direct_chunk((0,), frame, filter_mask=0)

    with h5py.File(os.path.join(out, "nothing_readable.h5"), "w") as f:
        d = f.create_dataset("X", shape=(50, 2), dtype="<f4", chunks=(50, 2), compression=32013, allow_unknown_filter=True)
        d.id.write_direct_chunk((0, 0), np.arange(100, dtype="<f4").tobytes(), filter_mask=0)
        f.create_dataset("y", data=np.zeros(50, dtype=[("a", "<i4"), ("b", "<f4")]))

    # a small bomb, for fuzz seeds: one gzip chunk of 4096 x 1024 float32 zeros (16 MiB) in 16 kB
    with h5py.File(os.path.join(out, "bomb_small.h5"), "w", libver="latest") as f:
        bomb(f, 4096, 1024)

    if big_bomb:
        # one gzip chunk of 65536 x 4096 float32 zeros (1 GiB) in a file of about 1 MB
        with h5py.File(os.path.join(out, "bomb.h5"), "w") as f:
            bomb(f, 65536, 4096)
            f["y"] = np.arange(65536, dtype="<i4")


if __name__ == "__main__":
    main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "bomb")
