"""mlfeed.torch.MinibatchDataset: the same minibatches as MinibatchSource (hence --dump),
epochs, checkpoints, torchrun's environment, and DataLoader workers."""

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

import mlfeed  # noqa: E402
from mlfeed.torch import MinibatchDataset  # noqa: E402
from test_dataset import write_idx  # noqa: E402
from test_safety import ENV  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("torchdata")
    rng = np.random.default_rng(3)
    x = rng.random((3000, 7), np.float32)
    y = rng.integers(0, 10, 3000).astype(np.uint8)
    write_idx(d / "x.idx", x)
    write_idx(d / "y.idx", y)
    return [str(d / "x.idx"), str(d / "y.idx")]


def source_batches(paths, **kw):
    return [{k: v for k, v in mb.copy().items()} for mb in mlfeed.MinibatchSource(paths, **kw)]


def loader_batches(ds, n=None, **kw):
    out = []
    for b in DataLoader(ds, batch_size=None, **kw):
        out.append({k: v.clone() for k, v in b.items()})
        if n is not None and len(out) == n:
            break
    return out


def assert_same(tb, nb):
    assert len(tb) == len(nb)
    for t, n in zip(tb, nb):
        assert t.keys() == n.keys()
        for k in t:
            assert isinstance(t[k], torch.Tensor)
            np.testing.assert_array_equal(t[k].numpy(), n[k])


def test_epochs_are_sweeps(data):
    ds = MinibatchDataset(data, minibatch_size=128, seed=5)
    e0, e1 = loader_batches(ds), loader_batches(ds)
    want = source_batches(data, minibatch_size=128, seed=5, max_sweeps=2)
    assert_same(e0 + e1, want)
    assert e0[0]["features"].dtype == torch.float32 and e0[0]["features"].shape == (128, 7)
    assert e0[0]["labels"].dtype == torch.uint8


def test_tensors_share_memory(data):
    it = iter(MinibatchDataset(data, minibatch_size=100, randomize=False, threads=3, packers=2))
    a = next(it)["features"]
    first = a.clone()
    later = [next(it)["features"] for _ in range(13)]
    # No allocation or copy per minibatch: the engine's packers write into the buffer sets of
    # its batches (packers + 4 of them), which take turns, and each set's tensor is made once.
    ptrs = [t.data_ptr() for t in [a] + later]
    assert len(set(ptrs)) == 6 and ptrs[6:] == ptrs[:8]
    assert later[5] is a and later[11] is a
    assert not torch.equal(a, first)
    it2 = iter(MinibatchDataset(data, minibatch_size=100, randomize=False, copy=True))
    a2 = next(it2)["features"]
    for _ in range(5):
        next(it2)
    assert torch.equal(a2, first)


def test_reused_tensor_changed_in_place(data):
    """A tensor the loop changed in place (shape, requires_grad) is not handed out again."""
    ds = MinibatchDataset(data, minibatch_size=100, randomize=False, threads=3, packers=2)
    want = source_batches(data, minibatch_size=100, randomize=False, max_samples=1200)
    got = []
    for k, mb in zip(range(12), ds):
        x = mb["features"]
        got.append({"features": x.clone(), "labels": mb["labels"].clone()})
        if k == 1:
            x.unsqueeze_(0)
        if k == 2:
            x.requires_grad_()
    assert_same(got, want)


def test_state_dict(data):
    ds = MinibatchDataset(data, minibatch_size=200, seed=1, max_sweeps=3)
    it = iter(DataLoader(ds, batch_size=None))
    for _ in range(20):
        next(it)
    st = ds.state_dict()
    rest = [{k: v.clone() for k, v in b.items()} for b in it]
    ds2 = MinibatchDataset(data, minibatch_size=200, seed=1, max_sweeps=3)
    ds2.load_state_dict(st)
    assert_same(loader_batches(ds2), [{k: v.numpy() for k, v in b.items()} for b in rest])
    assert len(rest) == 45 - 20


def test_rank_from_environment(data, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "2")
    got = loader_batches(MinibatchDataset(data, minibatch_size=300, seed=4))
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.delenv("RANK")
    assert_same(got, source_batches(data, minibatch_size=300, seed=4, workers=3, rank=2))


SCRIPT = """
import sys, numpy as np, torch
from torch.utils.data import DataLoader
sys.path.insert(0, %(py)r)
import mlfeed
from mlfeed.torch import MinibatchDataset

def main():
    paths = %(paths)r
    if %(touch)r:
        mlfeed.info(paths)  # the parent uses mlfeed before forking its workers
    ds = MinibatchDataset(paths, minibatch_size=300, seed=2)
    parts = [b["labels"].clone() for b in DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=%(ctx)r)]
    want = [mb["labels"].copy() for mb in mlfeed.MinibatchSource(paths, minibatch_size=300, seed=2)]
    # Loader worker k reads rank k of 2 of each minibatch; the loader alternates workers.
    joined = [np.sort(np.concatenate([parts[2 * i].numpy(), parts[2 * i + 1].numpy()]), axis=0) for i in range(len(parts) // 2)]
    ok = len(parts) == 2 * len(want) and all((j == np.sort(w, axis=0)).all() for j, w in zip(joined, want))
    print("OK" if ok else "MISMATCH %%d %%d" %% (len(parts), len(want)))

if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("ctx,touch,expect", [("fork", False, "OK"), ("spawn", True, "OK"), ("fork", True, "ForkError")])
def test_dataloader_workers(data, tmp_path, ctx, touch, expect):
    script = tmp_path / "loader.py"
    script.write_text(SCRIPT % dict(py=os.path.dirname(os.path.dirname(mlfeed.__file__)), paths=data, ctx=ctx, touch=touch))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=ENV, timeout=300)
    if expect == "OK":
        assert p.returncode == 0 and p.stdout.strip() == "OK", p.stdout + p.stderr
    else:
        assert p.returncode != 0 and "ForkError" in p.stderr and "spawn" in p.stderr, p.stderr[-2000:]
