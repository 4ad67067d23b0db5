"""mlfeed.open / read / info / convert / validate and the errors, against the CLI and numpy."""

import gzip
import json
import os
import struct

import numpy as np
import pytest

import mlfeed
from conftest import ROOT, corpus, run_cli


def write_idx(path, arr):
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}
    code = codes[arr.dtype.type]
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, code, arr.ndim))
        f.write(struct.pack(">" + "I" * arr.ndim, *arr.shape))
        f.write(arr.astype(arr.dtype.newbyteorder(">")).tobytes())


@pytest.fixture
def idx_pair(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(1000, 4, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=1000).astype(np.uint8)
    px, py = tmp_path / "x.idx", tmp_path / "y.idx"
    write_idx(px, x)
    write_idx(py, y)
    return [str(px), str(py)], x, y


def test_read_idx(idx_pair):
    paths, x, y = idx_pair
    with mlfeed.open(paths) as ds:
        assert len(ds) == 1000 and ds.format == "idx"
        assert [(s["name"], s["type"], s["shape"]) for s in ds.schema] == [("features", "uint8", [4, 3]), ("labels", "uint8", [])]
        d = ds.read()
        np.testing.assert_array_equal(d["features"], x)
        np.testing.assert_array_equal(d["labels"], y)
        part = ds.read(17, 230, streams=["labels"])
        assert list(part) == ["labels"]
        np.testing.assert_array_equal(part["labels"], y[17:230])
        np.testing.assert_array_equal(ds[5]["features"][0], x[5])
        np.testing.assert_array_equal(ds[-3:]["features"], x[-3:])
        assert ds.read(10, 10)["features"].shape == (0, 4, 3)
        with pytest.raises(KeyError, match="'features', 'labels'"):
            ds.read(streams=["nope"])
    with pytest.raises(mlfeed.UsageError):
        ds.read()


def test_read_mnist_matches_numpy():
    p = corpus("mnist", "t10k-images-idx3-ubyte.gz")
    raw = gzip.open(p).read()
    want = np.frombuffer(raw[16:], np.uint8).reshape(10000, 28, 28)
    with mlfeed.open(p) as ds:
        np.testing.assert_array_equal(ds.read(9000, 10000)["features"], want[9000:])


def test_info_same_as_cli(cli):
    f = corpus("cntk", "cbf", "50x20_jagged_sequences_sparse.bin")
    want = json.loads(run_cli(cli, "info", "--json", f).stdout)
    assert mlfeed.info(f) == want
    with mlfeed.open(f) as ds:
        assert ds.info() == want


def test_read_sparse_and_sequences():
    f = corpus("cntk", "ctf", "50x20_jagged_sequences_sparse.txt")
    with mlfeed.open(f, inputs=[dict(name="features", storage="sparse", dim=100, alias="F0")]) as ds:
        seqs = ds.read()["features"]
        assert isinstance(seqs, list) and len(seqs) == len(ds) == 50
        assert sum(s.shape[0] for s in seqs) == ds.num_samples
        assert all(s.shape[1] == 100 and s.format == "csr" for s in seqs)


def test_convert_roundtrip(tmp_path, idx_pair, cli):
    paths, x, y = idx_pair
    out = tmp_path / "out.cbf"
    assert mlfeed.convert(paths, out, type="float32") == str(out)
    with mlfeed.open(out) as ds:
        d = ds.read()
        np.testing.assert_array_equal(d["features"], x.reshape(1000, -1).astype(np.float32))
    assert run_cli(cli, "cat", "--json", "-n", 2, out).stdout.splitlines()[1] == \
        run_cli(cli, "cat", "--json", "-n", 2, paths[0], paths[1]).stdout.splitlines()[1].replace(".0", "")
    # Lossless or loud: uint8 pixels do not fit int8.
    with pytest.raises(mlfeed.FormatError, match="int8"):
        mlfeed.convert(paths[0], tmp_path / "bad.idx", type="int8")
    assert not os.path.exists(tmp_path / "bad.idx")
    # Two streams into IDX, which holds one: unsupported, as the CLI's exit status 2.
    with pytest.raises(mlfeed.UsageError, match=r"write each stream to its own file \(hint: choose the streams with streams=\[\.\.\.\]"):
        mlfeed.convert(paths, tmp_path / "bad.idx", type="int8")
    # What would let the writer take the data, in Python's words (the CLI names its flags)
    sparse = os.path.join(ROOT, "testdata", "cntk", "cbf", "10x10_sparse.bin")
    with pytest.raises(mlfeed.UsageError, match=r"\(hint: convert with densify=True") as e:
        mlfeed.convert(sparse, tmp_path / "s.npy")
    assert "--densify" not in str(e.value)
    with pytest.raises(mlfeed.UsageError, match=r'\(hint: convert with type="\.\.\."'):
        mlfeed.convert(paths[1], tmp_path / "u8.cbf")
    with pytest.raises(mlfeed.UsageError):
        mlfeed.convert(paths, tmp_path / "x.unknown")


def test_validate_and_errors(tmp_path, idx_pair):
    paths, x, y = idx_pair
    assert mlfeed.validate(paths) == []
    bad = tmp_path / "trunc.idx"
    bad.write_bytes(open(paths[0], "rb").read()[:5000])
    problems = mlfeed.validate(bad)
    assert len(problems) == 1
    e = problems[0]
    assert isinstance(e, mlfeed.FormatError) and isinstance(e, ValueError)
    assert e.file == str(bad) and e.offset is not None and e.line is None
    with pytest.raises(mlfeed.FormatError) as ei:
        with mlfeed.open(bad) as ds:
            ds.read()
    assert ei.value.file == str(bad) and "trunc.idx" in str(ei.value)
    with pytest.raises(mlfeed.FileNotFound) as ei:
        mlfeed.open(tmp_path / "missing.idx")
    assert isinstance(ei.value, FileNotFoundError)
    # a directory without a manifest: each of its files, as `mlfeed validate DIR` checks them
    assert [p.file for p in mlfeed.validate(tmp_path)] == [str(bad)]
    notdir = str(tmp_path / "x.idx") + "/"  # a file named as a directory
    with pytest.raises(mlfeed.FileError) as ei:
        mlfeed.validate(notdir)
    assert isinstance(ei.value, OSError) and ei.value.file == notdir
    with pytest.raises(mlfeed.UsageError):
        mlfeed.open(paths, format="nosuchformat")


def test_text_error_has_line_and_column(tmp_path):
    f = tmp_path / "bad.ctf"
    f.write_text("|x 1 2 3\n|x 1 zz 3\n")
    with pytest.raises(mlfeed.FormatError) as ei:
        with mlfeed.open(f, inputs=["x:dense:3"]) as ds:
            ds.read()
    e = ei.value
    assert (e.file, e.line) == (str(f), 2) and e.column is not None and e.offset is None
    problems = mlfeed.validate(f, inputs=["x:dense:3"])
    assert problems and problems[0].line == 2


def test_minibatch_views_and_copy(idx_pair):
    paths, x, y = idx_pair
    src = mlfeed.MinibatchSource(paths, minibatch_size=100, randomize=False)
    a = next(src)
    xa = a["features"]
    kept = a.copy()
    assert not xa.flags.owndata and xa.base is not None
    np.testing.assert_array_equal(xa, x[:100])
    b = next(src)
    np.testing.assert_array_equal(b["features"], x[100:200])
    # Using the first Minibatch now is an error, never a crash; its arrays are overwritten by
    # a later minibatch, never dangling: the engine's packers write into one set of buffers
    # per minibatch they pack ahead, so the first set takes a later minibatch (when a packer
    # gets to it) at the latest by the time that minibatch is handed out.
    with pytest.raises(mlfeed.UsageError):
        a["features"]
    c = next(src)
    np.testing.assert_array_equal(c["features"], x[200:300])
    overwritten = False
    for _ in src:  # the rest of the sweep: 7 more minibatches
        overwritten = overwritten or not np.array_equal(xa, x[:100])
    assert overwritten
    np.testing.assert_array_equal(kept["features"], x[:100])
    src2 = mlfeed.MinibatchSource(paths, minibatch_size=100, randomize=False, copy=True)
    m1, m2 = next(src2), next(src2)
    np.testing.assert_array_equal(m1["features"], x[:100])
    assert dict(m1.items()).keys() == {"features", "labels"}
    src.close()
    with pytest.raises(mlfeed.UsageError):
        next(src)


def test_source_from_dataset_and_usage_errors(idx_pair):
    paths, x, y = idx_pair
    with mlfeed.open(paths) as ds:
        got = np.concatenate([mb["labels"].copy() for mb in mlfeed.MinibatchSource(ds, minibatch_size=64, randomize=False)])
        np.testing.assert_array_equal(got, y)
        # Randomized, a sweep is a permutation of the data.
        got = np.concatenate([mb["labels"].copy() for mb in mlfeed.MinibatchSource(ds, minibatch_size=64, seed=9)])
        assert sorted(got.tolist()) == sorted(y.tolist()) and got.tolist() != y.tolist()
    for bad in [dict(minibatch_size=0), dict(rank=1), dict(workers=2, rank=2), dict(max_sweeps=-1),
                dict(threads=-2), dict(memory="lots"), dict(packers=5000)]:
        with pytest.raises(mlfeed.UsageError):
            mlfeed.MinibatchSource(paths, **bad)
    src = mlfeed.MinibatchSource(paths)
    with pytest.raises(mlfeed.UsageError):
        src.load_state_dict({"minibatchSourcePosition": 5, "sequences": 3, "samples": 3, "chunks": 1})


def _jsonable(v):
    """A numpy element as `cat --json` writes it."""
    if isinstance(v, np.void):  # datetimeoffset (ticks, offset, pad) or rowid (low, high)
        return [int(v[0]), int(v[1])]
    if isinstance(v, (complex, np.complexfloating)):
        return [float(v.real), float(v.imag)]
    if isinstance(v, (np.floating, float)):
        return None if np.isnan(v) or np.isinf(v) else float(v)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    return v


def test_idv_types_same_as_cat(cli):
    f = corpus("idv", "datatypes.idv")
    want = [json.loads(l) for l in run_cli(cli, "cat", "--json", f).stdout.splitlines()]
    with mlfeed.open(f) as ds:
        d = ds.read()
        assert len(want) == len(ds) == 5
        assert d["tx"].dtype == object and d["dto"].dtype.names[:2] == ("ticks", "offset_minutes")
        for q, line in enumerate(want):
            for name, samples in line.items():
                got = [[_jsonable(v) for v in np.asarray(d[name][q]).ravel()]]
                assert got == samples, (q, name)
