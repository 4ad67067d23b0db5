"""mlfeed.stats: the document of `mlfeed stats --json`, checked against numpy on the same data."""

import json
import math
import os
import subprocess

import numpy as np
import pytest

import mlfeed
from conftest import corpus


def _write(tmp_path):
    r = np.random.default_rng(5)
    x = r.normal(2, 3, (3000, 4)).astype(np.float32)
    x[r.random((3000, 4)) < 0.02] = np.nan
    x[0, 0] = np.inf
    y = r.integers(0, 5, 3000).astype(np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return [str(tmp_path / "x.npy"), str(tmp_path / "y.npy")], x, y


def test_stats_equals_numpy(tmp_path):
    paths, x, y = _write(tmp_path)
    res = mlfeed.stats(paths, bins=16)
    assert res["sequences"] == res["total_sequences"] == 3000
    xs, ys = res["streams"]
    fin = x[np.isfinite(x)].astype(np.float64)
    n = xs["numeric"]
    assert n["count"] == x.size and n["finite"] == fin.size
    assert n["nan"] == int(np.isnan(x).sum()) and n["pos_inf"] == 1 and n["neg_inf"] == 0
    assert n["min"] == fin.min() and n["max"] == fin.max()
    assert math.isclose(n["mean"], math.fsum(fin) / fin.size, rel_tol=1e-13)
    assert math.isclose(n["std"], float(np.std(fin)), rel_tol=1e-9)
    counts, _ = np.histogram(fin, bins=np.array(n["histogram"]["edges"]))
    assert n["histogram"]["counts"] == counts.tolist()
    assert len(n["histogram"]["counts"]) <= 16
    vals, cnt = np.unique(y, return_counts=True)
    assert ys["classes"]["kind"] == "integer"
    assert ys["classes"]["counts"] == [{"class": int(v), "count": int(c)} for v, c in zip(vals, cnt)]


def test_limit_and_sample(tmp_path):
    paths, x, y = _write(tmp_path)
    first = mlfeed.stats(paths, limit=100)
    assert first["sequences"] == 100 and first["limit"] == 100
    assert first["streams"][1]["numeric"]["mean"] == pytest.approx(y[:100].mean(), rel=1e-15)
    a = mlfeed.stats(paths, sample=50, seed=3)
    b = mlfeed.stats(paths, sample=50, seed=3)
    c = mlfeed.stats(paths, sample=50, seed=4)
    assert a == b and a["sequences"] == 50 and a["seed"] == 3
    assert a["streams"][1]["numeric"] != c["streams"][1]["numeric"]


def test_same_as_cli(tmp_path, cli):
    paths, _, _ = _write(tmp_path)
    out = subprocess.run([cli, "stats", "--json", "--bins", "7", "--top", "3"] + paths,
                         check=True, capture_output=True, text=True).stdout
    assert mlfeed.stats(paths, bins=7, top=3) == json.loads(out)


def test_mnist_labels():
    labels = corpus("mnist", "t10k-labels-idx1-ubyte.gz")
    res = mlfeed.stats(labels)
    counts = [c["count"] for c in res["streams"][0]["classes"]["counts"]]
    assert counts == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_errors(tmp_path):
    paths, _, _ = _write(tmp_path)
    with pytest.raises(mlfeed.UsageError):
        mlfeed.stats(paths, limit=-1)
    with pytest.raises(mlfeed.UsageError):
        mlfeed.stats(paths, bins=100000)
    with pytest.raises(mlfeed.FileNotFound):
        mlfeed.stats(str(tmp_path / "absent.npy"))
    bad = tmp_path / "bad.npy"
    bad.write_bytes(open(paths[0], "rb").read()[:200])
    with pytest.raises(mlfeed.FormatError):
        mlfeed.stats(str(bad))
