"""WebDataset shards through the Python package: webdataset's own shards
(format/webdataset/testdata), checked against Python's tarfile and numpy; bytes as Python
bytes, a missing member as an empty sequence, minibatches, mlfeed.torch, and a round trip."""

import io
import os
import tarfile
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

import mlfeed

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "format", "webdataset", "testdata")


def members(path: str) -> Dict[str, Dict[str, bytes]]:
    """{key: {ext: bytes}} as tarfile reads the shard."""
    out: Dict[str, Dict[str, bytes]] = {}
    with tarfile.open(path) as t:
        for m in t:
            if m.isreg():
                base = os.path.basename(m.name)
                key = m.name[: len(m.name) - len(base)] + base.split(".", 1)[0]
                out.setdefault(key, {})[base.split(".", 1)[1].lower()] = t.extractfile(m).read()  # type: ignore[union-attr]
    return out


@pytest.mark.parametrize("name", ["written.tar", "written.tar.gz"])
def test_written_by_webdataset(name: str) -> None:
    path = os.path.join(TESTDATA, name)
    want = members(path)
    with mlfeed.open(path) as ds:
        assert len(ds) == 12
        types = {st["name"]: st["type"] for st in ds.schema}
        assert types == {"be.npy": "int32", "cls": "int64", "f32.npy": "float32", "f64.npy": "float64",
                         "fortran.npy": "int16", "jpg": "bytes", "json": "string", "txt": "string",
                         "vec.npy": "uint8"}
        got = ds.read()
    keys = got["id"]
    assert keys == sorted(want)
    for ext in ["be.npy", "f32.npy", "f64.npy", "fortran.npy"]:
        ref = np.stack([np.load(io.BytesIO(want[k][ext])) for k in keys])
        assert got[ext].dtype == ref.dtype.newbyteorder("=") and got[ext].shape == ref.shape
        np.testing.assert_array_equal(got[ext], ref)
    for q, k in enumerate(keys):
        np.testing.assert_array_equal(got["vec.npy"][q], np.load(io.BytesIO(want[k]["vec.npy"])))
        assert got["cls"][q] == int(want[k]["cls"])
        assert got["jpg"][q] == want[k]["jpg"] and isinstance(got["jpg"][q], bytes)
        assert got["json"][q] == want[k]["json"].decode()
        txt = got["txt"][q].tolist()  # a sample without a txt member: an empty sequence
        assert txt == ([want[k]["txt"].decode()] if "txt" in want[k] else [])


def test_minibatches_and_torch() -> None:
    path = os.path.join(TESTDATA, "sample.tgz")
    want = members(path)
    src = mlfeed.MinibatchSource(path, minibatch_size=8, randomize=False, max_samples=8)
    mb = next(iter(src))
    keys = list(want)[:8]
    assert mb["cls"].tolist() == [int(want[k]["cls"]) for k in keys]
    assert mb["png"].dtype == object and list(mb["png"]) == [want[k]["png"] for k in keys]
    torch = pytest.importorskip("torch")
    from mlfeed.torch import MinibatchDataset

    ds = MinibatchDataset(path, minibatch_size=8, randomize=False, max_samples=8)
    b = next(iter(ds))
    assert isinstance(b["cls"], torch.Tensor) and b["cls"].tolist() == mb["cls"].tolist()
    assert list(b["png"]) == list(mb["png"])


def test_convert_round_trip(tmp_path: Path) -> None:
    src = os.path.join(TESTDATA, "written.tar")
    out = tmp_path / "w.tar.gz"
    mlfeed.convert(src, str(out))
    pq = tmp_path / "w.parquet"
    mlfeed.convert(str(out), str(pq))
    back = tmp_path / "back.tar"
    mlfeed.convert(str(pq), str(back), to="webdataset")
    with mlfeed.open(src) as a, mlfeed.open(str(back)) as b:
        ga, gb = a.read(), b.read()
    assert ga["id"] == gb["id"]
    for k in ga:
        if isinstance(ga[k], list) and k != "id":
            assert all(np.array_equal(x, y) for x, y in zip(ga[k], gb[k]))
        elif k != "id":
            np.testing.assert_array_equal(ga[k], gb[k])
    assert members(str(back)).keys() == members(src).keys()


def test_broken_shard(tmp_path: Path) -> None:
    data = bytearray(open(os.path.join(TESTDATA, "mpdata-20.tar"), "rb").read())
    data[1024 + 3] ^= 1
    bad = tmp_path / "bad.tar"
    bad.write_bytes(bytes(data))
    with pytest.raises(mlfeed.FormatError) as e:
        with mlfeed.open(str(bad)) as ds:
            ds.read()
    assert e.value.offset == 1024
