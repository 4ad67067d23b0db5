"""Writes written.tar and written.tar.gz with webdataset's own TarWriter (webdataset at
commit e0953f9, its src/ on PYTHONPATH, and a one-line stand-in for the braceexpand module,
which TarWriter does not use). Run: PYTHONPATH=webdataset/src:stub python3 make_written.py"""
import io

import numpy as np
import webdataset as wds

rng = np.random.default_rng(31)
for name in ["written.tar", "written.tar.gz"]:
    with wds.TarWriter(name) as sink:
        for i in range(12):
            s = {
                "__key__": "sample%04d" % i,
                "cls": i % 5,
                "txt": "caption %d: héllo" % i,
                "json": {"i": i, "tags": ["a", "b"][: i % 3]},
                "f32.npy": rng.standard_normal((3, 4)).astype(np.float32),
                "f64.npy": rng.standard_normal(5),
                "be.npy": np.arange(i, i + 3, dtype=">i4"),
                "fortran.npy": np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3) + i),
                "vec.npy": np.arange(i % 4 + 1, dtype=np.uint8),
                "jpg": bytes(rng.integers(0, 256, 40 + i, dtype=np.uint8)),
            }
            if i % 4 == 3:
                del s["txt"]  # a sample lacking a member others have
            sink.write(s)
