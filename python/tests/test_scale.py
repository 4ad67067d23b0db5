"""Sharded data sets, conversion as tasks, and object storage from Python."""

import json
import os
import shutil
import socket
import subprocess
import time

import numpy as np
import pytest

import mlfeed
from test_dataset import idx_pair, write_idx  # noqa: F401 (fixture)


def test_shards_tasks_and_merge(tmp_path, idx_pair):  # noqa: F811
    paths, x, y = idx_pair
    one = tmp_path / "one.cbf"
    mlfeed.convert(paths, one, type="float32")
    out = tmp_path / "shards"
    for task in (2, 0, 1):  # tasks run in any order
        mlfeed.convert(one, out, to="cbf", shards=5, task=(task, 3))
    with pytest.raises(mlfeed.Error, match="merge"):
        mlfeed.open(out)
    assert mlfeed.merge(out) == {"shards": 5, "sequences": 1000, "samples": 1000}
    with mlfeed.open(out) as ds, mlfeed.open(one) as whole:
        assert len(ds) == 1000
        a, b = ds.read(), whole.read()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    # A glob of the shards reads the same, in name order; a minibatch sweep over the shards
    # in file order gives every sequence once.
    with mlfeed.open(str(out / "part-*.cbf")) as ds:
        assert len(ds) == 1000
    src = mlfeed.MinibatchSource(str(out), minibatch_size=128, randomize=False, max_sweeps=1)
    labels = np.concatenate([mb["labels"].reshape(-1).copy() for mb in src])
    np.testing.assert_array_equal(labels, y.astype(np.float32))
    with pytest.raises(mlfeed.UsageError):
        mlfeed.convert(one, tmp_path / "bad", to="cbf", task=(3, 3))


def test_shards_outside_and_validate(tmp_path, idx_pair):  # noqa: F811
    """A shard linked to a file outside the data set's directory is refused unless
    outside_shards=True says so; validate checks the manifest against the shards as the CLI
    does (a chunk table the shard does not have)."""
    paths, x, y = idx_pair
    out = tmp_path / "shards"
    mlfeed.convert(paths[1], out, to="idx", shards=2)
    assert mlfeed.validate(out) == []
    elsewhere = tmp_path / "elsewhere.idx"
    shutil.move(str(out / "part-00000.idx"), elsewhere)
    os.symlink(elsewhere, out / "part-00000.idx")
    with pytest.raises(mlfeed.FormatError, match="outside"):
        mlfeed.open(out)
    problems = mlfeed.validate(out)
    assert problems and "outside" in problems[0].message
    with mlfeed.open(out, outside_shards=True) as ds:
        assert len(ds) == len(y)
    assert mlfeed.validate(out, outside_shards=True) == []
    assert mlfeed.info(out, outside_shards=True)["sequences"] == len(y)
    src = mlfeed.MinibatchSource(str(out), minibatch_size=100, randomize=False, max_sweeps=1,
                                 outside_shards=True)
    assert sum(len(mb["labels"]) for mb in src) == len(y)
    with pytest.raises(TypeError):
        mlfeed.open(out, outside_shards="yes")
    m = json.loads((out / "mlfeed.json").read_text())
    m["shards"][1]["chunks"] = 2
    m["shards"][1]["chunk_table"] = [[1, 1], [m["shards"][1]["sequences"] - 1] * 2]
    (out / "mlfeed.json").write_text(json.dumps(m))
    problems = mlfeed.validate(out, outside_shards=True)
    assert problems and "the manifest says" in problems[0].message, problems


def _versitygw():
    exe = shutil.which("versitygw")
    if exe:
        return exe
    if shutil.which("go") is None:
        return None
    gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True).stdout.strip()
    exe = os.path.join(gopath, "bin", "versitygw")
    return exe if os.path.exists(exe) else None


@pytest.fixture
def s3(tmp_path, monkeypatch):
    exe = _versitygw()
    if not exe:
        pytest.skip("versitygw is not installed (scripts/setup.sh installs it)")
    root = tmp_path / "s3"
    (root / "mlfeed-py").mkdir(parents=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "--access", "pykey", "--secret", "pysecret", "--port", f"127.0.0.1:{port}",
                             "posix", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    # The shared library keeps the environment the process started with (Go reads it once), so
    # the test runs in a child process that inherits these.
    env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID="pykey",
               AWS_SECRET_ACCESS_KEY="pysecret", AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")
    yield env
    proc.kill()
    proc.wait()


def _in_child(s3, script, timeout):
    """Runs script in a Python child process with the S3 server's environment (s3, from the
    fixture) and this mlfeed package."""
    env = dict(s3, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(mlfeed.__file__)),
                                                               s3.get("PYTHONPATH")])))
    return subprocess.run(["/usr/bin/python3", "-c", script], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def one_cbf(tmp_path, idx_pair):  # noqa: F811
    """The IDX pair's 1,000 samples as one float32 CBF file, and their labels."""
    paths, x, y = idx_pair
    one = tmp_path / "one.cbf"
    mlfeed.convert(paths, one, type="float32")
    return one, y


def test_object_storage(one_cbf, s3):
    one, _ = one_cbf
    script = f"""
import numpy as np, mlfeed
mlfeed.convert({str(one)!r}, "s3://mlfeed-py/data/one.cbf")
with mlfeed.open("s3://mlfeed-py/data/one.cbf") as ds, mlfeed.open({str(one)!r}) as local:
    a, b = ds.read(), local.read()
    assert len(ds) == 1000
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
try:
    mlfeed.open("s3://mlfeed-py/data/missing.cbf")
except mlfeed.FileNotFound:
    pass
else:
    raise AssertionError("a missing object opened")
print("ok")
"""
    r = _in_child(s3, script, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_node_cache(tmp_path, one_cbf, s3):
    one, y = one_cbf
    cache = tmp_path / "cache"
    script = f"""
import os, numpy as np, mlfeed, torch
from mlfeed.torch import MinibatchDataset
mlfeed.convert({str(one)!r}, "s3://mlfeed-py/shards/", to="cbf", shards=4)
cache = {str(cache)!r} + ":1GB"
def sweep(**kw):
    src = mlfeed.MinibatchSource("s3://mlfeed-py/shards/", minibatch_size=100, randomize=False,
                                 max_sweeps=1, cache=cache, **kw)
    out = np.concatenate([mb["labels"].reshape(-1).copy() for mb in src])
    src.close()
    return out
a = sweep()
s1 = mlfeed.cache_stats(cache)
assert s1["fetched_bytes"] > 0 and s1["fills"] == 5, s1
b = sweep()
s2 = mlfeed.cache_stats(cache)
assert s2["fetched_bytes"] == s1["fetched_bytes"] and s2["hits"] == s1["hits"] + 5, (s1, s2)
np.testing.assert_array_equal(a, b)
with mlfeed.open("s3://mlfeed-py/shards/", cache=cache) as ds:
    assert len(ds) == 1000
print(a.astype(np.int64).tolist() == {y.astype(int).tolist()!r})
# DataLoader workers share a fresh cache: each shard is in it once.
fresh = {str(tmp_path / "fresh")!r}
ds = MinibatchDataset("s3://mlfeed-py/shards/", minibatch_size=50, randomize=False, max_sweeps=1,
                      cache=fresh)
labels = [mb["labels"].reshape(-1) for mb in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                                                    multiprocessing_context="spawn")]
assert sorted(torch.cat(labels).tolist()) == sorted({y.astype(float).tolist()!r})
print(sorted(n.split("-")[-1] for n in os.listdir(os.path.join(fresh, "data"))))
for bad, exc in ((5, TypeError), ("", mlfeed.UsageError), ("/tmp/x:0", mlfeed.UsageError)):
    try:
        mlfeed.MinibatchSource("s3://mlfeed-py/shards/", cache=bad)
    except exc:
        pass
    else:
        raise AssertionError(repr(bad))
with mlfeed.open("s3://mlfeed-py/shards/") as d:
    try:
        mlfeed.MinibatchSource(d, cache=cache)
    except mlfeed.UsageError:
        pass
    else:
        raise AssertionError("cache with an open Dataset")
print("ok")
"""
    r = _in_child(s3, script, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == [
        "True", "['00000.cbf', '00001.cbf', '00002.cbf', '00003.cbf', 'mlfeed.json']", "ok"], r.stdout


def test_cache_checks_at_close(tmp_path, one_cbf, s3):
    """A shard read through the node cache is checked against its manifest once all of it has
    come: a reader of part of it, whose reads may end before the check does, learns of a
    changed shard from the close() that closes the files (Dataset; a MinibatchSource over
    paths, or over a Dataset closed first; mlfeed.dask.close), a FormatError naming the shard."""
    one, _ = one_cbf
    shard = tmp_path / "s3" / "mlfeed-py" / "changed" / "part-00001.cbf"
    script = f"""
import os, mlfeed
url = "s3://mlfeed-py/changed/"
mlfeed.convert({str(one)!r}, url, to="cbf", shards=2, chunk_size=65536)
# Changed behind the service's back after the manifest was written: a value in a chunk
# after the shard's first.
p = {str(shard)!r}
b = bytearray(open(p, "rb").read())
b[len(b) * 3 // 4] ^= 0xff
open(p, "wb").write(bytes(b))
def cache(name):
    return os.path.join({str(tmp_path / "caches")!r}, name)
def changed(what, f):
    try:
        f()
    except mlfeed.FormatError as e:
        assert "part-00001.cbf" in str(e) and "does not match its manifest" in str(e), (what, e)
        print(what)
    else:
        raise AssertionError(what + ": no error")
ds = mlfeed.open(url, cache=cache("open"))
try:
    # The second shard's first sequence: served before the check, or after it an error.
    ds.read(len(ds) // 2, len(ds) // 2 + 1)
except mlfeed.FormatError as e:
    assert "part-00001.cbf" in str(e), e
changed("Dataset.close", ds.close)
ds.close()  # once only
src = mlfeed.MinibatchSource(url, minibatch_size=10, randomize=False, cache=cache("source"))
try:
    for i, mb in enumerate(src):  # up to the second shard's first sequences
        if i == len(ds) // 20:
            break
except mlfeed.FormatError as e:
    assert "part-00001.cbf" in str(e), e
changed("MinibatchSource.close", src.close)
src.close()
# Over a Dataset closed first: the source's close closes the files, and raises.
ds = mlfeed.open(url, cache=cache("over"))
src = mlfeed.MinibatchSource(ds, minibatch_size=10, randomize=False)
try:
    for i, mb in enumerate(src):
        if i == len(ds) // 20:
            break
except mlfeed.FormatError as e:
    assert "part-00001.cbf" in str(e), e
ds.close()  # the source still reads it: nothing is closed yet
changed("MinibatchSource.close over a closed Dataset", src.close)
try:
    import dask, mlfeed.dask
except ImportError:
    print("mlfeed.dask.close")  # nothing to test without dask
else:
    a = mlfeed.dask.read(url, cache=cache("dask"))["labels"]
    try:
        a[len(a) // 2:len(a) // 2 + 1].compute(scheduler="sync")
    except mlfeed.FormatError as e:
        assert "part-00001.cbf" in str(e), e
    changed("mlfeed.dask.close", mlfeed.dask.close)
print("ok")
"""
    r = _in_child(s3, script, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:-1] == ["Dataset.close", "MinibatchSource.close",
                                          "MinibatchSource.close over a closed Dataset",
                                          "mlfeed.dask.close", "ok"], r.stdout


def test_every_reader_takes_cache(tmp_path, one_cbf, s3):
    """Each Python entry that reads data takes cache= and fills the node cache from object
    storage: mlfeed.open, MinibatchSource, mlfeed.torch.MinibatchDataset, mlfeed.cntk's
    MinibatchSource (a keyword beyond CNTK's) and mlfeed.dask.read."""
    one, y = one_cbf
    caches = tmp_path / "caches"
    script = f"""
import os, numpy as np, mlfeed, mlfeed.cntk, torch
from mlfeed.torch import MinibatchDataset
mlfeed.convert({str(one)!r}, "s3://mlfeed-py/every/", to="cbf", shards=3)
mlfeed.convert({str(one)!r}, "s3://mlfeed-py/every1.cbf")
url, obj, y = "s3://mlfeed-py/every/", "s3://mlfeed-py/every1.cbf", np.array({y.astype(float).tolist()!r})
def cache(name):
    return os.path.join({str(caches)!r}, name)
def filled(name, fills):
    s = mlfeed.cache_stats(cache(name))
    assert s is not None and s["fills"] == fills and s["fetched_bytes"] > 0, (name, s)
    assert len(os.listdir(os.path.join(cache(name), "data"))) == fills, (name, os.listdir(os.path.join(cache(name), "data")))
with mlfeed.open(url, cache=cache("open")) as ds:
    np.testing.assert_array_equal(ds.read()["labels"].reshape(-1), y)
filled("open", 4)
src = mlfeed.MinibatchSource(url, minibatch_size=100, randomize=False, max_sweeps=1, cache=cache("source"))
np.testing.assert_array_equal(np.concatenate([mb["labels"].reshape(-1).copy() for mb in src]), y)
src.close()
filled("source", 4)
ds = MinibatchDataset(url, minibatch_size=100, randomize=False, max_sweeps=1, cache=cache("torch"))
np.testing.assert_array_equal(np.sort(torch.cat([mb["labels"].reshape(-1).clone() for mb in ds]).numpy()), np.sort(y))
filled("torch", 4)
c = mlfeed.cntk.MinibatchSource(mlfeed.cntk.CBFDeserializer(obj), randomize=False, max_sweeps=1,
                                cache=cache("cntk"))
mb = c.next_minibatch(1000)
np.testing.assert_array_equal(mb[c.streams.labels].asarray().reshape(-1), y)
filled("cntk", 1)
try:
    import dask, mlfeed.dask
except ImportError:
    print("no dask")
else:
    a = mlfeed.dask.read(url, cache=cache("dask"))
    np.testing.assert_array_equal(a["labels"].compute().reshape(-1), y)
    mlfeed.dask.close()
    filled("dask", 4)
print("ok")
"""
    r = _in_child(s3, script, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "ok", r.stdout
