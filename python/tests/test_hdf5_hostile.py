"""HDF5 files of issue 28 from Python: object graphs with cycles, soft links, datasets mlfeed
cannot decode, and a gzip chunk bomb (files written by internal/hdf5/testdata/hostile.py)."""

import gzip
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlfeed
from conftest import ROOT

H5 = os.path.join(ROOT, "internal", "hdf5", "testdata")
FH5 = os.path.join(ROOT, "format", "hdf5", "testdata")
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run_py(code, timeout=120):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def test_cycles_finish():
    # g['loop'] = g; f['a/b'] = f kept mlfeed.open busy for 12 s, then failed: in a child
    # process under a timeout, each object once
    p = run_py("""
        import mlfeed
        for name in ("loops.h5", "graph_earliest.h5", "graph_latest.h5", "deep_latest.h5"):
            ds = mlfeed.open("%s/" + name)
            print(name, len(ds), ",".join(s["name"] for s in ds.schema)[:40])
    """ % H5, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "loops.h5 4 x"
    assert lines[1] == "graph_earliest.h5 10 X,a/s2/w,g/z,y"
    assert lines[2] == "graph_latest.h5 10 X,a/s2/w,g/z,y"
    assert lines[3].startswith("deep_latest.h5 10 d/d/d/")


def test_soft_link():
    # f['s'] = h5py.SoftLink('/x') made the file unreadable
    with mlfeed.open(os.path.join(H5, "softlink.h5")) as ds:
        assert [s["name"] for s in ds.schema] == ["x"]
    with mlfeed.open(os.path.join(H5, "softlink.h5"), options={"datasets": "s"}) as ds:
        np.testing.assert_array_equal(ds.read()["s"].ravel(), np.arange(6, dtype=np.float32))
    with pytest.raises(mlfeed.FormatError, match="nowhere"):
        mlfeed.open(os.path.join(H5, "graph_latest.h5"), options={"datasets": "dangle"})
    info = mlfeed.info(os.path.join(H5, "graph_latest.h5"))
    assert [s.split(":")[0] for s in info["details"]["skipped"]] == ["/dangle", "/ext", "/l1", "/l2"]


def test_skipped_listed():
    info = mlfeed.info(os.path.join(FH5, "undecodable.h5"))
    # blosc (a Blosc frame) and szip read since mlfeed decodes Blosc and szip; zfp is the
    # undecodable filter; the compound dataset pair reads since, one stream per field
    assert [s["name"] for s in info["streams"]] == ["blosc", "ok", "pair.a", "pair.b", "szip"]
    skipped = info["details"]["skipped"]
    assert not any(s.startswith(("/blosc", "/szip")) for s in skipped), skipped
    assert len(skipped) == 1 and skipped[0].startswith("/zfp: filter 32013 (zfp)"), skipped
    with mlfeed.open(os.path.join(FH5, "undecodable.h5"), options={"datasets": "szip,ok"}) as ds:
        got = ds.read()
    np.testing.assert_array_equal(got["szip"].ravel(), np.arange(100, dtype=np.float32))
    np.testing.assert_array_equal(got["szip"].ravel(), got["ok"].ravel())


def test_nothing_readable_names_the_filter():
    # (the CLI exits 2; the C ABI maps "unsupported" to FormatError today)
    # nothing_readable.h5's compound dataset y reads since; unreadable.h5's fields do not
    with mlfeed.open(os.path.join(FH5, "nothing_readable.h5")) as ds:
        assert [s["name"] for s in ds.schema] == ["y.a", "y.b"]
    with pytest.raises(mlfeed.Error, match=r'/y: compound datatype of no member this reader reads \(field "pt"'):
        mlfeed.open(os.path.join(H5, "compound", "unreadable.h5"))


def test_bomb_refused_within_budget(tmp_path):
    # one gzip chunk of 65536 x 4096 float32 (1 GiB) in 1.3 MB: 2.1 GB before; now refused
    # under memory="256M" before it is inflated, and the child's peak memory shows it
    bomb = tmp_path / "bomb.h5"
    with gzip.open(os.path.join(FH5, "bomb.h5.gz"), "rb") as src, open(bomb, "wb") as dst:
        shutil.copyfileobj(src, dst)
    p = run_py("""
        import resource, mlfeed
        src = mlfeed.MinibatchSource(%r, minibatch_size=2, randomize=False, memory="256M")
        try:
            next(iter(src))
        except mlfeed.FormatError as e:
            print("refused:", e)
        # VmHWM, the peak of this process's own memory: ru_maxrss would start from the parent's
        # peak (a pytest that imported torch), which fork copies.
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
        print("maxrss_kb", hwm)
    """ % str(bomb))
    assert p.returncode == 0, p.stderr
    assert "refused:" in p.stdout and "1073741824 bytes" in p.stdout and "--memory" in p.stdout, p.stdout
    rss_kb = int(p.stdout.split("maxrss_kb")[1])
    assert rss_kb < 256 * 1024, rss_kb
