"""Write the small HDF5 test files of format/hdf5 with h5py (deterministic values).

keras_xy.h5: X float32 [50, 4, 3] chunked (8, 4, 3) with gzip + shuffle, y uint8 [50]
  contiguous, and a string attribute, as Keras/h5py data sets are written.
matlab73.h5: a MATLAB v7.3-like file: a 512-byte user block before the superblock, X uint8
  [20, 3, 4, 4], y float64 [20, 1], and a "#refs#" group, which readers skip.
mixed.h5: a [10] and a [7] dataset (no shared first dimension) and a scalar.
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
