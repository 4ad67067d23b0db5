"""MosaicML MDS through the Python package: data sets written by Streaming's own MDSWriter
(format/mds/testdata), opened as a directory; minibatches and mlfeed.torch over them; a
conversion to MDS and back."""

import json
import os

import numpy as np
import pytest

import mlfeed

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "format", "mds", "testdata")
SCALARS = os.path.join(TESTDATA, "scalars")
ARRAYS = os.path.join(TESTDATA, "arrays")


def expected(name):
    with open(os.path.join(TESTDATA, name + ".expected.json")) as f:
        return json.load(f)["samples"]


def test_open_scalars():
    with mlfeed.open(SCALARS) as ds:
        assert len(ds) == 40
        types = {st["name"]: st["type"] for st in ds.schema}
        assert types["f16"] == "float32" and types["si"] == "int64" and types["sf"] == "float64"
        assert types["b"] == "bytes" and types["s"] == "string" and types["u64"] == "uint64"
        got = ds.read()
    want = expected("scalars")
    assert got["u64"].reshape(-1).tolist() == [s["u64"] for s in want]
    assert got["si"].reshape(-1).tolist() == [s["si"] for s in want]
    assert got["f16"].reshape(-1).tolist() == [float(s["f16"]["float"]) for s in want]
    assert got["sf"].reshape(-1).tolist() == [float(s["sf"]["float"]) for s in want]
    b = got["b"].reshape(-1).tolist()
    assert all(isinstance(x, bytes) for x in b) and b[3] == bytes(range(3))
    assert got["s"].reshape(-1).tolist()[1] == "héllo 1 ✓"
    assert json.loads(got["j"].reshape(-1).tolist()[2]) == {"k": 2, "tags": ["a", "b"]}


def test_arrays_and_lists():
    with mlfeed.open(ARRAYS) as ds:
        got = ds.read(stop=3)
    assert got["fixed"].shape == (3, 4, 3) and got["fixed"].dtype == np.uint8
    # A per-sample shape: the values flat, and the shape beside them.
    assert [x.reshape(-1).tolist() for x in got["dyn"]][2] == [0, 0.25, 0.5, 0.75, 1, 1.25]
    assert [x.reshape(-1).tolist() for x in got["dyn.shape"]][2] == [3, 2]
    # list[jpeg]: as many bytes samples as images (0, 1, 2 for the first three).
    assert [len(x) for x in got["lj"]] == [0, 1, 2]
    assert all(v.startswith(b"\xff\xd8\xff") for x in got["lj"] for v in x.reshape(-1))


def test_minibatches_and_torch(tmp_path):
    src = mlfeed.MinibatchSource(SCALARS, minibatch_size=8, randomize=False, max_samples=8)
    mb = next(iter(src))
    assert mb["i8"].reshape(-1).tolist() == list(range(-100, -92))
    torch = pytest.importorskip("torch")
    from mlfeed.torch import MinibatchDataset
    # torch has no uint16/uint32/uint64 tensors: the streams it takes.
    small = tmp_path / "small"
    mlfeed.convert(SCALARS, str(small), to="mds", streams=["f32", "u8", "b"])
    ds = MinibatchDataset(str(small), minibatch_size=10, seed=1)
    seen = []
    for b in torch.utils.data.DataLoader(ds, batch_size=None):
        assert isinstance(b["f32"], torch.Tensor) and b["f32"].dtype == torch.float32
        seen += b["u8"].reshape(-1).tolist()
    assert sorted(seen) == list(range(216, 256))


def test_convert_round_trip(tmp_path):
    out = tmp_path / "back"
    mlfeed.convert(SCALARS, str(out), to="mds",
                   write_options={"hashes": "sha1,xxh64", "size_limit": "1000", "compression": "zstd",
                                  "encodings": "f16:float16,j:json,si:str_int,sf:str_float,sd:str_decimal,int:int"})
    with open(out / "index.json") as f:
        index = json.load(f)
    with open(os.path.join(SCALARS, "index.json")) as f:
        orig = json.load(f)
    assert index["shards"][0]["column_encodings"] == orig["shards"][0]["column_encodings"]
    assert index["shards"][0]["zip_data"]["basename"] == "shard.00000.mds.zstd"
    with mlfeed.open(SCALARS) as a, mlfeed.open(str(out)) as b:
        x, y = a.read(), b.read()
    for k in x:
        if x[k].dtype == object:
            assert x[k].reshape(-1).tolist() == y[k].reshape(-1).tolist()
        else:
            np.testing.assert_array_equal(x[k], y[k])


def test_pickle_refused():
    with pytest.raises(mlfeed.UsageError, match="pkl"):
        mlfeed.open(os.path.join(TESTDATA, "pickled"))
    with mlfeed.open(os.path.join(TESTDATA, "pickled"), options={"pkl": "bytes"}) as ds:
        assert ds.read()["x"].reshape(-1).tolist() == [0, 1, 2]


def test_streaming_reads_mlfeed_output(tmp_path):
    """Streaming's own MDSReader (testdata/peer.py) reads what mlfeed writes to the same samples
    as it reads from MDSWriter's files. Needs a Streaming source: STREAMING_SRC."""
    import shutil
    import subprocess
    import sys
    if not os.environ.get("STREAMING_SRC"):
        pytest.skip("set STREAMING_SRC to a checkout of github.com/mosaicml/streaming")
    for mod in ["PIL", "zstd", "xxhash", "brotli", "snappy", "typing_extensions"]:
        pytest.importorskip(mod)

    def peer(d):
        return subprocess.run([sys.executable, os.path.join(TESTDATA, "peer.py"), str(d)], check=True,
                              capture_output=True, text=True).stdout

    orig = tmp_path / "orig"
    shutil.copytree(ARRAYS, orig)
    out = tmp_path / "out"
    mlfeed.convert(ARRAYS, str(out), to="mds", write_options={
        "compression": "zstd", "hashes": "sha1,xxh64",
        "encodings": "jpg:jpeg,png:png,pil:pil,lj:list[jpeg],lp:list[png],lpil:list[pil],ja:jpeg_array,"
                     "any:ndarray,half:ndarray:float16:2"})
    want = peer(orig)
    assert want and peer(out) == want
