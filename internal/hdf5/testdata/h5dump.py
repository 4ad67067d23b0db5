"""Print what h5py reads from HDF5 files, as JSON, for the Go tests to compare with.

Usage: h5dump.py FILE...   One JSON object per file: {"path": {...}} for every group and
dataset. A dataset: dtype (numpy str, little-endian normalised), shape, sha256 of its C-order
little-endian bytes. A group or dataset: attrs, string attributes' values.
"""
import hashlib
import json
import sys

import h5py
import numpy as np


def attrs(obj):
    out = {}
    for k in obj.attrs:
        try:
            v = obj.attrs[k]
        except Exception as e:  # noqa: BLE001 - report, do not fail the dump
            out[k] = {"error": str(e)}
            continue
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if isinstance(v, np.ndarray) and v.size == 1 and v.dtype.kind in "OSU":
            v = v.reshape(-1)[0]
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
        if isinstance(v, str):
            out[k] = {"str": v}
        else:
            out[k] = {"other": str(np.asarray(v).dtype)}
    return out


def dump(name):
    res = {}

    def visit(path, obj):
        entry = {"attrs": attrs(obj)}
        if isinstance(obj, h5py.Dataset):
            entry["shape"] = list(obj.shape)
            dt = obj.dtype
            entry["dtype"] = dt.newbyteorder("<").str.replace("|", "<") if dt.kind in "iufb" else dt.str
            if dt.kind in "iufb":
                a = np.ascontiguousarray(obj[()]).astype(dt.newbyteorder("<"))
                entry["sha256"] = hashlib.sha256(a.tobytes()).hexdigest()
            entry["chunks"] = list(obj.chunks) if obj.chunks else None
        else:
            entry["group"] = True
        res["/" + path if path else "/"] = entry

    with h5py.File(name, "r") as f:
        visit("", f)
        f.visititems(visit)
    return res


if __name__ == "__main__":
    print(json.dumps({n: dump(n) for n in sys.argv[1:]}))
