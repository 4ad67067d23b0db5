"""Mixtures of data sets: MinibatchSource(mix=...) and MinibatchDataset draw each sequence's
data set by the weights (shares within binomial bounds), give exactly the minibatches of
`mlfeed batches --mix`, and state_dict/load_state_dict restore them exactly, with another
number of workers too, across a change of weights."""

import collections
import json
import math
import os

import numpy as np
import pytest

import mlfeed
from conftest import run_cli

INPUT = "x:dense:1"


@pytest.fixture
def files(tmp_path):
    """a.ctf: 3000 sequences 0..2999; b.ctf: 1000 sequences 100000..100999."""
    a, b = tmp_path / "a.ctf", tmp_path / "b.ctf"
    a.write_text("".join("|x %d\n" % i for i in range(3000)))
    b.write_text("".join("|x %d\n" % (100000 + i) for i in range(1000)))
    return str(a), str(b)


def values(src, n=None):
    """Each minibatch's values, as lists, up to n minibatches."""
    out = []
    for mb in src:
        out.append(mb["x"].ravel().astype(int).tolist())
        if n is not None and len(out) == n:
            break
    return out


def test_shares_within_binomial_bounds(files):
    a, b = files
    src = mlfeed.MinibatchSource(mix=[(0.7, a), (0.3, b)], inputs=INPUT, stop="never",
                                 max_samples=32000, minibatch_size=32, seed=5)
    mbs = values(src)
    assert len(mbs) == 1000
    n = sum(len(m) for m in mbs)
    from_b = sum(v >= 100000 for m in mbs for v in m)
    sigma = math.sqrt(n * 0.3 * 0.7)
    print("b.ctf: %d of %d (%.4f), expected %.0f, 4 sigma %.0f" % (from_b, n, from_b / n, 0.3 * n, 4 * sigma))
    assert abs(from_b - 0.3 * n) <= 4 * sigma
    # Within a data set's sweep no sequence comes twice.
    seq_b = [v for m in mbs for v in m if v >= 100000]
    for s in range(0, len(seq_b), 1000):
        sweep = seq_b[s:s + 1000]
        assert len(set(sweep)) == len(sweep)


def test_same_as_cli_and_forms(cli, files):
    a, b = files
    out = run_cli(cli, "batches", "--dump", "--mix", "0.7=" + a, "--mix", "0.3=" + b, "--input", INPUT,
                  "--mb-size", "50", "--seed", "2").stdout
    want = [[int(s[0][0]) for s in json.loads(l)["x"]] for l in out.splitlines()]
    for mix in ([(0.7, a), (0.3, b)], [{"weight": 0.7, "path": a}, {"weight": 0.3, "paths": [b], "name": "code"}]):
        got = values(mlfeed.MinibatchSource(mix=mix, inputs=INPUT, minibatch_size=50, seed=2))
        assert got == want
    # The mixture as the first argument, as the data sets are given elsewhere.
    got = values(mlfeed.MinibatchSource([(0.7, a), (0.3, b)], inputs=INPUT, minibatch_size=50, seed=2))
    assert got == want
    # A state moves between Python and `batches --restore`.
    src = mlfeed.MinibatchSource(mix=[(0.7, a), (0.3, b)], inputs=INPUT, minibatch_size=50, seed=2)
    values(src, 17)
    st = os.path.join(os.path.dirname(a), "st.json")
    with open(st, "w") as f:
        json.dump(src.state_dict(), f)
    out = run_cli(cli, "batches", "--dump", "--mix", "0.7=" + a, "--mix", "0.3=" + b, "--input", INPUT,
                  "--mb-size", "50", "--seed", "2", "--restore", st).stdout
    assert [[int(s[0][0]) for s in json.loads(l)["x"]] for l in out.splitlines()] == want[17:]


def test_restore_every_step_and_workers(files):
    a, b = files
    kw = dict(mix=[(0.5, a), (0.5, b)], schedule=[(300, [0.1, 0.9])], stop="all_exhausted",
              inputs=INPUT, minibatch_size=20, seed=7, max_samples=800)
    full = values(mlfeed.MinibatchSource(**kw))
    assert len(full) == 40
    for k in range(len(full) + 1):
        src = mlfeed.MinibatchSource(**kw)
        values(src, k) if k else None
        st = json.loads(json.dumps(src.state_dict()))
        assert st["mix"]["taken"] == [sum(v < 100000 for m in full[:k] for v in m),
                                      sum(v >= 100000 for m in full[:k] for v in m)]
        for workers in (1, 2, 3):
            parts = []
            for rank in range(workers):
                r = mlfeed.MinibatchSource(workers=workers, rank=rank, **kw)
                r.load_state_dict(st)
                parts.append(values(r))
            rest = [sorted(sum((p[q] for p in parts), [])) for q in range(len(parts[0]))]
            assert rest == [sorted(m) for m in full[k:]], (k, workers)
            if workers == 1:
                assert parts[0] == full[k:]


def test_torch_dataset_sweeps(files):
    torch = pytest.importorskip("torch")
    from mlfeed.torch import MinibatchDataset
    a, b = files
    ds = MinibatchDataset(mix=[(1, a), (3, b)], stop="all_exhausted", inputs=INPUT, minibatch_size=100, seed=1)
    assert ds.schema[0]["name"] == "x"
    seen = collections.Counter()
    for mb in ds:  # one mixture sweep: every sequence of each data set at least once
        seen.update(mb["x"].reshape(-1).to(torch.int64).tolist())
    assert len(seen) == 4000
    st = ds.state_dict()
    assert st["mix"]["sweep"] == 0 and st["mix"]["taken"][1] >= 1000
    second = [mb["x"].reshape(-1).tolist() for mb in ds]
    ds2 = MinibatchDataset(mix=[(1, a), (3, b)], stop="all_exhausted", inputs=INPUT, minibatch_size=100, seed=1)
    ds2.load_state_dict(st)
    assert [mb["x"].reshape(-1).tolist() for mb in ds2] == second


def test_errors(files, tmp_path):
    a, b = files
    wide = tmp_path / "wide.ctf"
    wide.write_text("|x 1 2\n|x 3 4\n")
    with pytest.raises(mlfeed.UsageError, match="wide.ctf"):
        mlfeed.MinibatchSource(mix=[(1, a), (1, str(wide))])
    for bad, exc in [(dict(mix=[]), mlfeed.UsageError), (dict(mix=a), TypeError),
                     (dict(mix=[(1, a)], stop="sometimes"), mlfeed.UsageError),
                     (dict(mix=[(1, a)], stop=1), TypeError),
                     (dict(mix=[(float("nan"), a)]), mlfeed.UsageError),
                     (dict(mix=[("1", a)]), TypeError),
                     (dict(mix=[{"weight": 1, "path": a, "wieght": 2}]), TypeError),
                     (dict(mix=[{"path": a}]), mlfeed.UsageError),
                     (dict(mix=[(1, a)], schedule=[(0, [1])]), mlfeed.UsageError),
                     (dict(mix=[(1, a)], schedule=[(10, [1, 2])]), mlfeed.UsageError),
                     (dict(stop="never"), mlfeed.UsageError)]:
        with pytest.raises(exc):
            mlfeed.MinibatchSource(**bad)
    with pytest.raises(mlfeed.UsageError):
        mlfeed.MinibatchSource(a, mix=[(1, a)])
    src = mlfeed.MinibatchSource(mix=[(1, a), (1, b)], inputs=INPUT)
    single = mlfeed.MinibatchSource(a, inputs=INPUT)
    with pytest.raises(mlfeed.Error, match="mixture"):
        single.load_state_dict(src.state_dict())
