"""Python's minibatches are exactly those of `mlfeed batches --dump` for the same data and
settings: randomized or not, per worker, after load_state_dict, on real files."""

import json
import math
import os

import numpy as np
import pytest

import mlfeed
from conftest import corpus, run_cli

MNIST = ("mnist", "t10k-images-idx3-ubyte.gz"), ("mnist", "t10k-labels-idx1-ubyte.gz")


def _json_values(v, dtype):
    """A --dump sample's values as an array of dtype (null is NaN)."""
    if dtype.kind == "c":
        return np.array([complex(re, im) for re, im in v], dtype)
    if dtype.kind == "f":
        return np.array([math.nan if x is None else x for x in v], dtype)
    return np.array(v, dtype)


def assert_same_minibatch(mb, line, where):
    """mb (a Minibatch) holds what the --dump line holds."""
    assert mb.sweep == line["sweep"], where
    assert mb.num_sequences == line["sequences"], where
    for st in mb.streams:
        name = st["name"]
        want = line[name]
        got = mb.sequences(name)
        assert len(got) == len(want), (where, name)
        dt = mlfeed._data.DTYPES[st["type"]]
        for q, (g, w) in enumerate(zip(got, want)):
            assert g.shape[0] == len(w), (where, name, q)
            for s, ws in enumerate(w):
                if st["storage"] == "sparse":
                    row = g[s]
                    assert row.indices.tolist() == ws["indices"], (where, name, q, s)
                    np.testing.assert_array_equal(row.data, _json_values(ws["values"], dt), err_msg=str((where, name, q, s)))
                else:
                    np.testing.assert_array_equal(np.asarray(g[s]).ravel(), _json_values(ws, dt), err_msg=str((where, name, q, s)))


def dump(cli, files, *flags):
    out = run_cli(cli, "batches", "--dump", *flags, *files).stdout
    return [json.loads(l) for l in out.splitlines()]


def compare(src, lines):
    n = 0
    for k, mb in enumerate(src):
        assert k < len(lines), "Python gives more minibatches than --dump (%d)" % len(lines)
        assert_same_minibatch(mb, lines[k], "minibatch %d" % k)
        n += 1
    assert n == len(lines)


def mnist():
    return [corpus(*p) for p in MNIST]


@pytest.mark.parametrize("kw,flags", [
    (dict(minibatch_size=256), ["--mb-size", "256"]),
    (dict(minibatch_size=1000, seed=7, window=1, max_sweeps=2), ["--mb-size", "1000", "--seed", "7", "--window", "1", "--sweeps", "2"]),
    (dict(minibatch_size=100, randomize=False, max_samples=2550), ["--mb-size", "100", "--no-randomize", "--max-samples", "2550"]),
    (dict(minibatch_size=300, seed=3, workers=3, rank=1), ["--mb-size", "300", "--seed", "3", "--workers", "3", "--rank", "1"]),
    (dict(minibatch_size=300, seed=3, workers=3, rank=2, cntk_distribution=True), ["--mb-size", "300", "--seed", "3", "--workers", "3", "--rank", "2", "--cntk-distribution"]),
    (dict(minibatch_size=64, sample_window=True, window=500, packers=-1), ["--mb-size", "64", "--sample-window", "--window", "500", "--packers", "-1"]),
    (dict(minibatch_size=200, seed=4, threads=1, memory="64M", keep_in_memory=True), ["--mb-size", "200", "--seed", "4", "--threads", "1", "--memory", "64M", "--keep-in-memory"]),
])
def test_mnist_same_as_dump(cli, kw, flags):
    files = mnist()
    compare(mlfeed.MinibatchSource(files, **kw), dump(cli, files, *flags))


CTF = [
    ("ctf/50x20_jagged_sequences_dense.txt", ["features:dense:3:F0:float64"]),
    ("ctf/50x20_jagged_sequences_sparse.txt", ["features:sparse:100:F0"]),
    ("ctf/20x10_MI_jagged_samples_sparse.txt", ["features1:sparse:2:F0", "features2:sparse:20:F1", "features3:sparse:200:F2"]),
    ("ctf/empty_samples.txt", ["features:dense:10:F0", "labels:sparse:10:F1"]),
    ("ctf/MNIST_dense.txt", ["features:dense:784:F:float64", "labels:dense:10:L:float64"]),
    ("cbf/50x20_jagged_sequences_dense.bin", []),
    ("cbf/50x20_jagged_sequences_sparse.bin", []),
    ("cbf/Simple_jagged_sequence.bin", []),
]


@pytest.mark.parametrize("path,inputs", CTF)
@pytest.mark.parametrize("mb_size,seed", [(7, 0), (30, 5)])
def test_cntk_files_same_as_dump(cli, path, inputs, mb_size, seed):
    f = corpus("cntk", path)
    flags = ["--mb-size", mb_size, "--seed", seed, "--sweeps", 2]
    for i in inputs:
        flags += ["--input", i]
    src = mlfeed.MinibatchSource(f, minibatch_size=mb_size, seed=seed, max_sweeps=2, inputs=inputs)
    compare(src, dump(cli, [f], *flags))


def test_padded_and_mask():
    f = corpus("cntk", "ctf/50x20_jagged_sequences_dense.txt")
    src = mlfeed.MinibatchSource(f, minibatch_size=40, randomize=False, inputs=["features:dense:3:F0:float64"])
    mb = next(iter(src))
    x, m, seqs = mb["features"], mb.mask("features"), mb.sequences("features")
    assert x.shape == (mb.num_sequences, max(len(s) for s in seqs), 3) and x.dtype == np.float64
    assert m.shape == x.shape[:2] and m.sum() == sum(len(s) for s in seqs) == mb.num_samples
    for q, s in enumerate(seqs):
        np.testing.assert_array_equal(x[q, : len(s)], s)
        assert not x[q, len(s):].any()
    assert mb.lengths("features").tolist() == [len(s) for s in seqs]


@pytest.mark.parametrize("after", [1, 13, 39, 40])
def test_state_dict_same_as_cli(cli, tmp_path, after):
    files = mnist()
    flags = ["--mb-size", "256", "--seed", "11", "--sweeps", "2"]
    full = dump(cli, files, *flags)
    st_file = tmp_path / "st.json"
    run_cli(cli, "batches", *flags, "--save-state", st_file, "--after", after, *files)
    src = mlfeed.MinibatchSource(files, minibatch_size=256, seed=11, max_sweeps=2)
    for _ in range(after):
        src.next_minibatch()
    assert src.state_dict() == json.loads(st_file.read_text())
    # A fresh source restored from the CLI's state gives the rest of the run.
    rest = mlfeed.MinibatchSource(files, minibatch_size=256, seed=11, max_sweeps=2)
    rest.load_state_dict(json.loads(st_file.read_text()))
    compare(rest, full[after:])
    # And the CLI restored from Python's state gives the same.
    st2 = tmp_path / "st2.json"
    st2.write_text(json.dumps(src.state_dict()))
    assert dump(cli, files, *flags, "--restore", st2) == full[after:]


def test_restore_per_rank(cli, tmp_path):
    """A state taken with one worker restores on any rank of any worker count."""
    files = mnist()
    src = mlfeed.MinibatchSource(files, minibatch_size=500, seed=2)
    for _ in range(5):
        src.next_minibatch()
    st = src.state_dict()
    (tmp_path / "st.json").write_text(json.dumps(st))
    for rank in range(3):
        r = mlfeed.MinibatchSource(files, minibatch_size=500, seed=2, workers=3, rank=rank)
        r.load_state_dict(st)
        compare(r, dump(cli, files, "--mb-size", 500, "--seed", 2, "--workers", 3, "--rank", rank, "--restore", tmp_path / "st.json"))


def test_restore_midway_and_rewind():
    """load_state_dict works on a source already read from, forwards and backwards."""
    files = mnist()
    src = mlfeed.MinibatchSource(files, minibatch_size=256, seed=1, copy=True)
    first = [src.next_minibatch() for _ in range(3)]
    st = src.state_dict()
    later = [src.next_minibatch() for _ in range(3)]
    src.load_state_dict(st)
    again = [src.next_minibatch() for _ in range(3)]
    for a, b in zip(later, again):
        np.testing.assert_array_equal(a["features"], b["features"])
    src.load_state_dict({"minibatchSourcePosition": 0})
    np.testing.assert_array_equal(src.next_minibatch()["labels"], first[0]["labels"])


def test_env_rank(cli, monkeypatch):
    files = mnist()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    lines = dump(cli, files, "--mb-size", 128, "--workers", 2, "--rank", 1)
    compare(mlfeed.MinibatchSource(files, minibatch_size=128), lines)


def test_cntk_config_with_defines(cli, tmp_path):
    """config= and defines= reach the CNTK config reader as --config and NAME=VALUE do."""
    cfg = tmp_path / "dense.cntk"
    cfg.write_text(open(corpus("cntk", "configs", "CNTKTextFormatReader", "dense.cntk")).read())
    os.symlink(corpus("cntk", "ctf", "MNIST_dense.txt"), tmp_path / "MNIST_dense.txt")
    section = "%s:MNIST" % cfg
    lines = dump(cli, [], "--config", section, "defMBSize=true", "--mb-size", 70, "--sweeps", 2)
    src = mlfeed.MinibatchSource(None, config=section, defines={"defMBSize": "true"},
                                 minibatch_size=70, max_sweeps=2)
    assert [s["type"] for s in src.streams] == ["float64", "float64"]  # precision = "double"
    compare(src, lines)
    assert [s.get("defines_mb_size", False) for s in src.streams] == [False, True]
    with mlfeed.open(config=section, defines={"defMBSize": "false"}) as ds:
        assert len(ds) == 1000
        assert [s.get("defines_mb_size", False) for s in ds.schema] == [False, False]
    with pytest.raises(mlfeed.UsageError):
        mlfeed.open(config=section + "x")  # no such section


def test_cntk_config_reader_type(tmp_path):
    """A file whose format detection cannot tell is read as the config's reader type says."""
    data = tmp_path / "d.cntk.sparse"
    data.write_text("0 |S0 1:1\n1 |S0 3:2\n")
    cfg = tmp_path / "atis.cntk"
    cfg.write_text('reader = [ readerType = "CNTKTextFormatReader" ; file = "$DataDir$/d.cntk.sparse"\n'
                   '  input = [ a = [ alias = "S0" ; dim = 5 ; format = "sparse" ] ] ]\n')
    with pytest.raises(mlfeed.UsageError, match="unknown format"):
        mlfeed.open([str(data)])
    with mlfeed.open([str(data)], config=str(cfg), defines={"DataDir": str(tmp_path)}) as ds:
        a = ds.read()["a"]
        assert a.shape == (2, 5) and a[0, 1] == 1 and a[1, 3] == 2
