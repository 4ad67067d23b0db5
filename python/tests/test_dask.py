"""mlfeed.dask on a distributed.LocalCluster of two worker processes: dask arrays read on the
workers, one block per chunk (dense, sparse as CSR blocks, sequences of several samples), and
conversion as Dask tasks, byte for byte that of one mlfeed.convert."""

import os

import numpy as np
import pytest

import mlfeed
from test_dataset import idx_pair, write_idx  # noqa: F401 (fixture)

dask = pytest.importorskip("dask", reason="Dask is not installed (Debian: apt-get install python3-dask python3-distributed)")
distributed = pytest.importorskip("distributed", reason="Dask's distributed is not installed (Debian: apt-get install python3-distributed)")
scipy_sparse = pytest.importorskip("scipy.sparse")
import mlfeed.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # Two worker processes (spawned: the library is loaded in each), one thread each.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def opened_on_workers(client):
    """Per worker, the data sets mlfeed.dask opened in it."""
    def opened():
        import mlfeed.dask
        return sorted(mlfeed.dask._opened)
    return client.run(opened)


def test_read_dense_on_the_workers(tmp_path, idx_pair, client):  # noqa: F811
    paths, x, y = idx_pair
    one = tmp_path / "one.cbf"
    mlfeed.convert(paths, one, type="float32", chunk_size=4096)  # many chunks
    info = mlfeed.info(str(one), chunks=True)
    assert info["chunks"] > 5
    arrays = mlfeed.dask.read(str(one))
    assert sorted(arrays) == ["features", "labels"]
    f, lab = arrays["features"], arrays["labels"]
    assert f.shape == (1000, 12) and f.dtype == np.float32 and lab.shape == (1000,)  # CBF: flat
    assert f.numblocks[0] == info["chunks"]
    assert list(f.chunks[0]) == [c["sequences"] for c in info["chunk_table"]]
    fx, ly = dask.compute(f, lab)
    np.testing.assert_array_equal(fx, x.reshape(1000, 12).astype(np.float32))
    np.testing.assert_array_equal(ly, y.astype(np.float32))
    # Dask operations over the blocks: a reduction, a slice across chunk boundaries.
    np.testing.assert_allclose(f.mean(axis=0).compute(), x.reshape(1000, 12).astype(np.float64).mean(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(lab[95:905].compute(), y[95:905].astype(np.float32))
    # Read on the workers, not here: each worker process opened the file itself.
    seen = opened_on_workers(client)
    assert len(seen) == 2 and all(any(str(one) in s for s in v) for v in seen.values()), seen
    # close() releases them on every worker; the next block opens the file again.
    assert sum(client.run(mlfeed.dask.close).values()) >= 2
    assert all(v == [] for v in opened_on_workers(client).values())
    np.testing.assert_array_equal(lab[:10].compute(), y[:10].astype(np.float32))
    # streams= selects; an unknown stream names those there are.
    assert list(mlfeed.dask.read(str(one), streams="labels")) == ["labels"]
    with pytest.raises(KeyError, match="'features', 'labels'"):
        mlfeed.dask.read(str(one), streams=["nope"])


def write_ctf(path, rng, sequences, max_len, dim):
    """A CTF file of sequences of 1 to max_len samples: a sparse stream x of dim and a dense
    stream y of 2 values. Returns the samples as a dense x (samples, dim) and y (samples, 2)."""
    xs, ys = [], []
    with open(path, "w") as f:
        for s in range(sequences):
            for _ in range(int(rng.integers(1, max_len + 1))):
                idx = sorted(rng.choice(dim, size=int(rng.integers(0, 4)), replace=False).tolist())
                row = np.zeros(dim, np.float32)
                vals = [float(rng.integers(1, 100)) for _ in idx]
                row[idx] = vals
                yv = [float(rng.integers(-9, 10)), float(rng.integers(-9, 10))]
                xs.append(row)
                ys.append(yv)
                f.write("%d |x %s |y %s\n" % (s, " ".join("%d:%g" % iv for iv in zip(idx, vals)),
                                             " ".join("%g" % v for v in yv)))
    return np.array(xs, np.float32), np.array(ys, np.float32)


def test_read_sparse_blocks_are_csr(tmp_path, client):
    rng = np.random.default_rng(3)
    ctf = tmp_path / "s.ctf"
    dense_x, y = write_ctf(ctf, rng, 600, 1, 50)
    cbf = tmp_path / "s.cbf"
    mlfeed.convert(str(ctf), cbf, input=["x:sparse:50", "y:dense:2"], chunk_size=2048)
    arrays = mlfeed.dask.read(str(cbf))
    x = arrays["x"]
    assert x.shape == (600, 50) and x.dtype == np.float32 and x.numblocks[0] > 3
    assert isinstance(x._meta, scipy_sparse.csr_matrix)
    b = x.blocks[1].compute()
    assert isinstance(b, scipy_sparse.csr_matrix)
    whole = x.compute()
    assert scipy_sparse.issparse(whole)
    np.testing.assert_array_equal(whole.toarray(), dense_x)
    with mlfeed.open(str(cbf)) as ds:
        d = ds.read()
        assert (d["x"] != whole).nnz == 0
    # What works on CSR blocks: row slices, map_blocks (here a product with a dense matrix),
    # and sums along the rows of each block.
    np.testing.assert_array_equal(x[100:350].compute().toarray(), dense_x[100:350])
    w = rng.standard_normal((50, 3)).astype(np.float32)
    prod = x.map_blocks(lambda m: m @ w, dtype=np.float32, chunks=(x.chunks[0], (3,)),
                        meta=np.empty((0, 3), np.float32)).compute()
    np.testing.assert_allclose(prod, dense_x @ w, rtol=1e-5)
    nnz = x.map_blocks(lambda m: np.asarray(m.getnnz(axis=1)), dtype=np.int64, drop_axis=1,
                       meta=np.empty(0, np.int64)).compute()
    np.testing.assert_array_equal(nnz, (dense_x != 0).sum(axis=1))
    np.testing.assert_array_equal(arrays["y"].compute(), y)


def test_read_sequences_of_several_samples(tmp_path, client):
    rng = np.random.default_rng(4)
    ctf = tmp_path / "j.ctf"
    dense_x, y = write_ctf(ctf, rng, 300, 5, 20)
    cbf = tmp_path / "j.cbf"
    mlfeed.convert(str(ctf), cbf, input=["x:sparse:20", "y:dense:2"], chunk_size=2048)
    arrays = mlfeed.dask.read(str(cbf))
    x, yy = arrays["x"], arrays["y"]
    # One row per sample; how many a chunk holds per stream is known once read.
    assert np.isnan(x.shape[0]) and x.numblocks[0] == mlfeed.info(str(cbf))["chunks"]
    x.compute_chunk_sizes()
    assert x.shape == dense_x.shape
    np.testing.assert_array_equal(x.compute().toarray(), dense_x)
    np.testing.assert_array_equal(yy.compute(), y)


def test_convert_as_tasks_is_byte_identical(tmp_path, idx_pair, client):  # noqa: F811
    paths, x, y = idx_pair
    one = tmp_path / "one"
    mlfeed.convert(paths, one, to="cbf", type="float32", shards=5)
    out = tmp_path / "dask"
    res = mlfeed.dask.convert(paths, out, to="cbf", type="float32", shards=5, tasks=3, client=client)
    assert res == {"shards": 5, "sequences": 1000, "samples": 1000}
    assert sorted(os.listdir(one)) == sorted(os.listdir(out))
    assert "mlfeed.json" in os.listdir(out) and len(os.listdir(out)) == 6
    for name in os.listdir(one):
        assert (one / name).read_bytes() == (out / name).read_bytes(), name
    # The shards read back as one data set: one block per chunk, across the shards.
    arrays = mlfeed.dask.read(str(out))
    assert arrays["features"].numblocks[0] == mlfeed.info(str(out))["chunks"] >= 5
    np.testing.assert_array_equal(arrays["features"].compute(), x.reshape(1000, 12).astype(np.float32))
    np.testing.assert_array_equal(arrays["labels"].compute(), y.astype(np.float32))
    # Without shards=, one shard per task, as mlfeed.convert(shards=tasks) in one process;
    # without client=, on Dask's current scheduler (the client above).
    one2, out2 = tmp_path / "one2", tmp_path / "dask2"
    mlfeed.convert(paths, one2, to="npz", shards=2)
    assert mlfeed.dask.convert(paths, out2, to="npz", tasks=2)["shards"] == 2
    for name in os.listdir(one2):
        assert (one2 / name).read_bytes() == (out2 / name).read_bytes(), name
    # The workers' errors come back as raised there.
    with pytest.raises(mlfeed.UsageError):
        mlfeed.dask.convert(paths, tmp_path / "bad", to="cbf", tasks=2, client=client)  # uint8
    with pytest.raises(mlfeed.UsageError, match="task="):
        mlfeed.dask.convert(paths, tmp_path / "bad2", to="cbf", task=(0, 2), client=client)
