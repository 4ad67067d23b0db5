"""TFRecord through the Python package: TFX's files (format/tfrecord/testdata), bytes values as
Python bytes, and a round trip written by mlfeed and parsed by Google's protobuf library when
python3-protobuf is installed."""

import os
import subprocess
import sys

import numpy as np
import pytest

import mlfeed

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "format", "tfrecord", "testdata")


def test_sequence_example_bytes():
    with mlfeed.open(os.path.join(TESTDATA, "seq_eval.tfrecord.gz")) as ds:
        assert len(ds) == 4500
        types = {st["name"]: st["type"] for st in ds.schema}
        assert types == {"f": "float32", "i": "int64", "s": "bytes"}
        got = ds.read(stop=2)
        s = got["s"]  # two scalar samples per record: a list of per-sequence object arrays (samples,)
        assert [x.shape for x in s] == [(2,), (2,)] and s[0].dtype == object
        assert [x.reshape(-1).tolist() for x in s] == [[b"10500", b"10501"], [b"10501", b"10502"]]
        assert all(isinstance(v, bytes) for x in s for v in x.reshape(-1))
        assert len(got["f"][0]) == 0 and got["f"][1].tolist() == [10501.0]


def test_minibatches_of_bytes():
    path = os.path.join(TESTDATA, "seq_eval.tfrecord.gz")
    src = mlfeed.MinibatchSource(path, minibatch_size=8, randomize=False, max_samples=8)
    mb = next(iter(src))
    seqs = mb.sequences("s")
    assert [x.reshape(-1).tolist() for x in seqs[:2]] == [[b"10500", b"10501"], [b"10501", b"10502"]]


def test_penguin_and_round_trip(tmp_path):
    with mlfeed.open(os.path.join(TESTDATA, "penguin_eval.tfrecord.gz")) as ds:
        got = ds.read()
        assert got["species"].dtype == np.int64 and got["species"].shape == (100,)
        assert got["body_mass_g"].dtype == np.float32
    out = tmp_path / "p.tfrecord"
    mlfeed.convert(os.path.join(TESTDATA, "penguin_eval.tfrecord.gz"), str(out))
    with mlfeed.open(str(out)) as ds:
        back = ds.read()
    for k, v in got.items():
        np.testing.assert_array_equal(back[k], v)
    try:
        import google.protobuf  # noqa: F401
        import crc32c  # noqa: F401
    except ImportError:
        pytest.skip("python3-protobuf or python3-crc32c is absent")
    res = subprocess.run([sys.executable, os.path.join(TESTDATA, "pbcheck.py"), "decode", str(out)],
                         check=True, capture_output=True, text=True)
    first = res.stdout.splitlines()[0]
    assert '"species": {"kind": "int64_list", "values": [%d]}' % got["species"][0] in first
