"""Checks a `mlfeed stats --json` result against numpy on the same data (stats/numpy_test.go).

usage: check_numpy.py RESULT.json ARRAY... where each ARRAY is NAME=PATH: a .npy file, or an
IDX file (raw or gzip) read here with numpy alone; NAME is the stream whose figures it holds.
Prints one line per disagreement and exits 1 if there is any.
"""
import gzip
import json
import math
import sys

import numpy as np

IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def load(path):
    if path.endswith(".npy"):
        return np.load(path)
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    code, ndim = raw[2], raw[3]
    dims = np.frombuffer(raw[4:4 + 4 * ndim], ">u4")
    return np.frombuffer(raw[4 + 4 * ndim:], IDX_TYPES[code]).reshape(dims)


def main():
    res = json.load(open(sys.argv[1]))
    streams = {s["name"]: s for s in res["streams"]}
    bad = []

    def expect(what, got, want):
        if got != want:
            bad.append(f"{what}: mlfeed {got!r}, numpy {want!r}")

    def close(what, got, want, rel):
        if not abs(got - want) <= rel * max(1.0, abs(want)):
            bad.append(f"{what}: mlfeed {got!r}, numpy {want!r}")

    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        a = load(path)
        s = streams[name]
        expect(f"{name} samples", s["samples"], a.shape[0])
        x = a.reshape(-1).astype(np.float64)
        fin = x[np.isfinite(x)]
        n = s["numeric"]
        expect(f"{name} count", n["count"], x.size)
        expect(f"{name} finite", n["finite"], fin.size)
        expect(f"{name} nan", n["nan"], int(np.isnan(x).sum()))
        expect(f"{name} pos_inf", n["pos_inf"], int(np.isposinf(x).sum()))
        expect(f"{name} neg_inf", n["neg_inf"], int(np.isneginf(x).sum()))
        expect(f"{name} zeros", n["zeros"], int((fin == 0).sum()))
        # float(): Go writes 1.8e19 as 18000000000000000000, which json reads as an int.
        expect(f"{name} min", float(n["min"]), float(fin.min()))
        expect(f"{name} max", float(n["max"]), float(fin.max()))
        # math.fsum is the correctly rounded sum; mlfeed's compensated sum is that close.
        close(f"{name} mean", n["mean"], math.fsum(fin) / fin.size, 1e-13)
        close(f"{name} std", n["std"], float(np.std(fin)), 1e-9)
        h = n["histogram"]
        counts, _ = np.histogram(fin, bins=np.array(h["edges"]))
        expect(f"{name} histogram", h["counts"], counts.tolist())
        if np.issubdtype(a.dtype, np.integer) and a.ndim == 1 and int(a.max()) - int(a.min()) >= 65536:
            expect(f"{name} has classes", "classes" in s, False)
        elif np.issubdtype(a.dtype, np.integer) and a.ndim == 1:
            vals, cnt = np.unique(a, return_counts=True)
            want = [{"class": int(v), "count": int(c)} for v, c in zip(vals, cnt)]
            expect(f"{name} classes", s["classes"]["counts"], want)
    if bad:
        print("\n".join(bad))
        sys.exit(1)
    print("ok")


main()
