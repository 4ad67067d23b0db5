"""Write the small HDF5 test files of format/hdf5 with h5py (deterministic values).

keras_xy.h5: X float32 [50, 4, 3] chunked (8, 4, 3) with gzip + shuffle, y uint8 [50]
  contiguous, and a string attribute, as Keras/h5py data sets are written.
matlab73.h5: a MATLAB v7.3-like file: a 512-byte user block before the superblock, X uint8
  [20, 3, 4, 4], y float64 [20, 1], and a "#refs#" group, which readers skip.
mixed.h5: a [10] and a [7] dataset (no shared first dimension) and a scalar.
strings.h5: X float32 [6, 2] beside string datasets of its 6 rows: text (variable-length
  UTF-8, with non-ASCII and empty strings), ascii (variable-length ASCII), fixed (numpy S5,
  some shorter than 5), grid ([6, 2] UTF-8), ztext (as text, chunked in 4 rows with gzip),
  and names (3 UTF-8 strings: not the data set's rows).
"""
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(3)
with h5py.File(f"{out}/keras_xy.h5", "w") as f:
    f.create_dataset("X", data=rng.standard_normal((50, 4, 3)).astype("<f4"), chunks=(8, 4, 3), compression="gzip", shuffle=True)
    f.create_dataset("y", data=rng.integers(0, 10, 50).astype("u1"))
    f.attrs["description"] = "test data"
with h5py.File(f"{out}/matlab73.h5", "w", userblock_size=512, libver="latest") as f:
    f.create_dataset("X", data=rng.integers(0, 255, (20, 3, 4, 4)).astype("u1"), chunks=(5, 3, 4, 4), compression="gzip")
    f.create_dataset("y", data=rng.integers(1, 11, (20, 1)).astype("<f8"))
    f.create_group("#refs#").create_dataset("a", data=np.arange(3))
with h5py.File(f"{out}/mixed.h5", "w") as f:
    f.create_dataset("a", data=np.arange(10, dtype=">i4"))
    f.create_dataset("b", data=np.arange(7, dtype="<i2"))
    f.create_dataset("s", data=1.5)
text = ["cat", "dög", "", "日本語", "a longer label, with a comma", "z"]
with h5py.File(f"{out}/strings.h5", "w") as f:
    f.create_dataset("X", data=np.arange(12, dtype="<f4").reshape(6, 2))
    f.create_dataset("text", data=text, dtype=h5py.string_dtype("utf-8"))
    f.create_dataset("ascii", data=[b"a", b"bb", b"", b"dddd", b"e", b"ffffff"], dtype=h5py.string_dtype("ascii"))
    f.create_dataset("fixed", data=np.array([b"one", b"two", b"three", b"", b"fives", b"x"], dtype="S5"))
    f.create_dataset("grid", data=[[t, t.upper()] for t in text], dtype=h5py.string_dtype("utf-8"))
    f.create_dataset("ztext", data=text, dtype=h5py.string_dtype("utf-8"), chunks=(4,), compression="gzip")
    f.create_dataset("names", data=["red", "green", "blue"], dtype=h5py.string_dtype("utf-8"))
