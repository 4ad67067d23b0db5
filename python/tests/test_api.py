"""A Python API that checks and explains (issue 29): arguments checked when objects are made,
Python's own exceptions, no Go or JSON text, KeyError listing the streams, schemas, stored
shapes, the exception classes the CLI's exit statuses map to, types (mypy --strict), and
docs/python.md's examples run as written."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import mlfeed
from conftest import ROOT, corpus
from test_dataset import write_idx

GO_WORDS = re.compile(r"json|Go struct|unmarshal|strconv|uint64|\*main\.|goroutine|panic")


@pytest.fixture(scope="module")
def idx_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    x = np.arange(200 * 6, dtype=np.uint8).reshape(200, 2, 3)
    y = (np.arange(200) % 10).astype(np.uint8)
    write_idx(d / "x.idx", x)
    write_idx(d / "y.idx", y)
    return [str(d / "x.idx"), str(d / "y.idx")], x, y


def no_go_text(e):
    assert not GO_WORDS.search(str(e)), str(e)


@pytest.mark.parametrize("kw, cls, words", [
    (dict(seed=-5), ValueError, ["seed=-5", "0 to 2**64-1"]),
    (dict(seed=2**64), ValueError, ["seed=", "0 to 2**64-1"]),
    (dict(seed="1"), TypeError, ["seed", "int", "str"]),
    (dict(minibatch_size=1.5), TypeError, ["minibatch_size", "int", "float"]),
    (dict(minibatch_size=0), ValueError, ["minibatch_size=0", "1 to 2**31-1"]),
    (dict(minibatch_size=True), TypeError, ["minibatch_size", "bool"]),
    (dict(window=-1), ValueError, ["window=-1"]),
    (dict(max_sweeps=-1), ValueError, ["max_sweeps=-1", "INFINITELY_REPEAT"]),
    (dict(max_sweeps=1.5), TypeError, ["max_sweeps"]),
    (dict(workers=2, rank=2), ValueError, ["rank=2", "0 to 1"]),
    (dict(threads=-2), ValueError, ["threads=-2", "every core"]),
    (dict(packers=5000), ValueError, ["packers=5000"]),
    (dict(memory="lots"), ValueError, ["memory='lots'", "2G"]),
    (dict(memory=1.5), TypeError, ["memory"]),
    (dict(randomize="yes"), TypeError, ["randomize", "True or False"]),
    (dict(copy=1), TypeError, ["copy"]),
    (dict(options=["precision"]), TypeError, ["options", "dict"]),
    (dict(batch_size=4), TypeError, ["batch_size"]),
    (dict(shuffle=True), TypeError, ["shuffle"]),
])
def test_source_arguments_checked_at_construction(idx_files, kw, cls, words):
    paths, _, _ = idx_files
    with pytest.raises(cls) as e:
        mlfeed.MinibatchSource(paths, **kw)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    no_go_text(e.value)
    if cls is ValueError:
        assert isinstance(e.value, mlfeed.UsageError)


def test_torch_dataset_arguments_checked_at_construction(idx_files):
    pytest.importorskip("torch")
    from mlfeed.torch import MinibatchDataset
    paths, _, _ = idx_files
    # Before: accepted, and the failure came at the first iteration, in a loader worker.
    with pytest.raises(TypeError, match="batch_size"):
        MinibatchDataset(paths, batch_size=4, shuffle=True)
    with pytest.raises(ValueError, match="seed=-5"):
        MinibatchDataset(paths, seed=-5)
    with pytest.raises(TypeError, match="minibatch_size"):
        MinibatchDataset(paths, minibatch_size=1.5)
    with pytest.raises(TypeError, match="masks"):
        MinibatchDataset(paths, masks="no")


def test_open_arguments(idx_files, tmp_path):
    paths, _, _ = idx_files
    with pytest.raises(TypeError, match="paths must be a path"):
        mlfeed.open(3)
    with pytest.raises(TypeError, match=r"paths\[1\]"):
        mlfeed.open([paths[0], 3])
    with pytest.raises(TypeError, match="unexpected keyword"):
        mlfeed.open(paths, fmt="idx")
    with pytest.raises(TypeError, match="format must be a str"):
        mlfeed.open(paths, format=1)
    with pytest.raises(TypeError):
        mlfeed.info(paths, bogus=1)
    with pytest.raises(ValueError, match="max_problems=0"):
        mlfeed.validate(paths, max_problems=0)
    with pytest.raises(TypeError, match="chunk_size"):
        mlfeed.convert(paths, str(tmp_path / "o.npz"), chunk_size="big")
    with pytest.raises(ValueError, match="task"):
        mlfeed.convert(paths, str(tmp_path / "o"), to="npz", task=(2, 2))
    with mlfeed.open(paths) as ds:
        with pytest.raises(TypeError, match="index"):
            ds[1.5]
        with pytest.raises(TypeError, match="start"):
            ds.read("0")
        with pytest.raises(IndexError):
            ds[200]


def test_missing_streams_raise_key_error_listing_them(idx_files):
    paths, _, _ = idx_files
    mb = next(mlfeed.MinibatchSource(paths, minibatch_size=10))
    with pytest.raises(KeyError) as e:
        mb["images"]
    assert "'images'" in str(e.value) and "'features', 'labels'" in str(e.value)
    with pytest.raises(KeyError, match="'features', 'labels'"):
        mb.mask("images")
    with mlfeed.open(paths) as ds:
        with pytest.raises(KeyError, match="'features', 'labels'"):
            ds.read(streams=["images"])
        assert list(ds.read(0, 2, streams="labels")) == ["labels"]


def test_torch_batches_raise_key_error_listing_streams(idx_files):
    pytest.importorskip("torch")
    from mlfeed.torch import MinibatchDataset
    paths, _, _ = idx_files
    b = next(iter(MinibatchDataset(paths, minibatch_size=10)))
    with pytest.raises(KeyError, match="'features', 'labels'"):
        b["images"]


def test_schemas(idx_files):
    paths, _, _ = idx_files
    with mlfeed.open(paths) as ds:
        want = ds.schema
    src = mlfeed.MinibatchSource(paths, minibatch_size=10)
    assert src.schema == want and src.streams == want
    assert next(src).schema == want
    assert [(s["name"], s["shape"]) for s in want] == [("features", [2, 3]), ("labels", [])]


def test_torch_dataset_schema_leaves_forked_workers_working(idx_files, tmp_path):
    pytest.importorskip("torch")
    code = """
import os, sys, mlfeed._lib as L
from torch.utils.data import DataLoader
from mlfeed.torch import MinibatchDataset
ds = MinibatchDataset(sys.argv[1:], minibatch_size=50, seed=1)
print([(s["name"], s["shape"]) for s in ds.schema])
assert not L.usable()   # read in a child: this process has not loaded the library
n = sum(len(b["labels"]) for b in DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork"))
print(n)
"""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-c", code] + idx_files[0], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:2] == ["[('features', [2, 3]), ('labels', [])]", "200"]


def test_arrays_keep_the_stored_shape(idx_files, tmp_path):
    paths, x, y = idx_files
    with mlfeed.open(paths[1]) as ds:
        assert ds.read()["labels"].shape == (200,)     # rank-1 IDX: (N,), not (N, 1)
    np.save(tmp_path / "v.npy", y.astype(np.int32))
    np.save(tmp_path / "c.npy", y.astype(np.int32).reshape(200, 1))
    with mlfeed.open(tmp_path / "v.npy") as ds:
        assert ds.read()["labels"].shape == (200,)     # 1-D npy
        np.testing.assert_array_equal(ds.read()["labels"], y)
    with mlfeed.open(tmp_path / "c.npy") as ds:
        assert ds.read()["features"].shape == (200, 1)  # N x 1 stays N x 1
    for mb in mlfeed.MinibatchSource(tmp_path / "v.npy", minibatch_size=64):
        assert mb["labels"].shape == (mb.num_sequences,)


def test_unsupported_requests_are_usage_errors_as_in_the_cli(idx_files, tmp_path, cli):
    # CBF holds float32 and float64 only: the CLI says exit 2; Python said FormatError.
    paths, _, _ = idx_files
    out = tmp_path / "t.cbf"
    p = subprocess.run([cli, "convert", paths[0], paths[1], str(out)], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    with pytest.raises(mlfeed.UsageError) as e:
        mlfeed.convert(paths, str(out))
    assert not isinstance(e.value, mlfeed.FormatError)
    mlfeed.convert(paths, str(out), type="float32")


def test_directory_without_a_data_set(tmp_path):
    d = tmp_path / "junk"
    d.mkdir()
    (d / "notes.log").write_text("not data\n")
    (d / "x.sh").write_text("echo\n")
    for call in (mlfeed.open, mlfeed.info, lambda p: mlfeed.MinibatchSource(p)):
        with pytest.raises(mlfeed.Error) as e:
            call(str(d))
        assert str(e.value).startswith("%s: the directory holds no mlfeed data set" % d), str(e.value)
        assert e.value.file == str(d)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(mlfeed.Error, match="holds no mlfeed data set"):
        mlfeed.open(str(empty))


def test_help_texts_name_the_streams_of_the_data():
    # help(mlfeed) spoke of an "images" stream that the MNIST files do not have.
    import mlfeed.torch
    for doc in (mlfeed.__doc__, mlfeed.torch.__doc__, mlfeed.MinibatchSource.__doc__):
        assert 'mb["images"]' not in doc
    assert '"features"' in mlfeed.__doc__ and '"labels"' in mlfeed.__doc__
    assert "(10,)" in mlfeed.__doc__  # rank-1 labels read as (N,)


def test_typed(tmp_path):
    if shutil.which("mypy") is None:
        pytest.skip("mypy is not installed (Debian: apt-get install mypy)")
    assert os.path.exists(os.path.join(ROOT, "python", "mlfeed", "py.typed"))
    pkg = os.path.join(ROOT, "python", "mlfeed")
    # Every module of the package, subpackages (mlfeed.cntk) included.
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(pkg) for f in names
                   if f.endswith(".py"))
    assert os.path.join(pkg, "cntk", "io.py") in files
    files += [os.path.join(ROOT, "python", "examples", f) for f in os.listdir(os.path.join(ROOT, "python", "examples")) if f.endswith(".py")]
    p = subprocess.run(["mypy", "--strict", "--cache-dir", str(tmp_path / "cache")] + files,
                       capture_output=True, text=True, cwd=os.path.join(ROOT, "python"), timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr


def doc_blocks():
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    return re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)


@pytest.mark.parametrize("k", range(len(doc_blocks())))
def test_docs_examples_run_as_written(k, tmp_path):
    """Each ```python block of docs/python.md runs, in a directory holding the files it names
    (MNIST from the shared corpus, a small CNTK text file)."""
    code = doc_blocks()[k]
    if "torch" in code:
        pytest.importorskip("torch")
    if "dask" in code:
        pytest.importorskip("dask", reason="Dask is not installed (Debian: apt-get install python3-dask)")
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        os.symlink(corpus("mnist", name), tmp_path / name)
    rng = np.random.default_rng(1)
    with open(tmp_path / "Train-28x28_cntk_text.txt", "w") as f:
        for i in range(200):
            lab = " ".join("1" if j == i % 10 else "0" for j in range(10))
            f.write("|labels %s |features %s\n" % (lab, " ".join(str(v) for v in rng.integers(0, 256, 784))))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=600)
    assert p.returncode == 0, "docs/python.md block %d:\n%s\n%s" % (k, code, p.stderr[-3000:])


def test_stream_and_state_errors_speak_python(idx_files, tmp_path):
    paths, _, _ = idx_files
    with pytest.raises(KeyError, match="'features', 'labels'"):
        mlfeed.convert(paths, str(tmp_path / "o.npz"), streams=["images"])
    src = mlfeed.MinibatchSource(paths, minibatch_size=10)
    with pytest.raises(TypeError, match="minibatchSourcePosition") as e:
        src.load_state_dict({"minibatchSourcePosition": "x"})   # was: "json: cannot unmarshal ..."
    no_go_text(e.value)
    with pytest.raises(ValueError, match="minibatchSourcePosition"):
        src.load_state_dict({"minibatchSourcePosition": -5})
    with pytest.raises(KeyError, match="defines_mb_size='images'.*'features', 'labels'"):
        mlfeed.MinibatchSource(paths, defines_mb_size="images")
    with mlfeed.open(paths) as ds:
        with pytest.raises(KeyError, match="'features', 'labels'"):
            mlfeed.MinibatchSource(ds, defines_mb_size="images")
    with pytest.raises(TypeError, match="state must be a dict"):
        src.load_state_dict([1])
