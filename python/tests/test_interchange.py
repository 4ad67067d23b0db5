"""The interchange formats (NumPy, LIBSVM, Arrow, Parquet, HDF5) through the Python package,
with numpy, scikit-learn and h5py as the independent writers and readers."""

import os

import numpy as np
import pytest

import mlfeed
from conftest import ROOT


def test_npy_and_npz(tmp_path):
    x = np.arange(60, dtype=np.float32).reshape(5, 3, 4)
    y = np.array([1, 0, 3, 2, 4], dtype=np.int64)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "xy.npz", images=x, labels=y)
    with mlfeed.open(str(tmp_path / "x.npy")) as ds:
        assert len(ds) == 5
        (arr,) = ds.read().values()
        np.testing.assert_array_equal(arr, x)
    with mlfeed.open(str(tmp_path / "xy.npz")) as ds:
        got = ds.read()
        np.testing.assert_array_equal(got["images"], x)
        np.testing.assert_array_equal(got["labels"].reshape(-1), y)
    # Written by mlfeed, read by numpy: the same bytes numpy.save writes.
    mlfeed.convert(str(tmp_path / "xy.npz"), tmp_path / "back.npz")
    with np.load(tmp_path / "back.npz") as z:
        np.testing.assert_array_equal(z["images"], x)
    mlfeed.convert(str(tmp_path / "x.npy"), tmp_path / "back.npy")
    assert (tmp_path / "back.npy").read_bytes() == (tmp_path / "x.npy").read_bytes()


def test_npz_arrays(tmp_path):
    # Keras's mnist.npz layout: two record sets in one archive, read one at a time
    rng = np.random.default_rng(5)
    a = {"x_train": rng.integers(0, 255, (6, 4, 4)).astype(np.uint8), "y_train": np.arange(6, dtype=np.uint8),
         "x_test": rng.integers(0, 255, (3, 4, 4)).astype(np.uint8), "y_test": np.arange(3, dtype=np.uint8)}
    np.savez_compressed(tmp_path / "mnist.npz", **a)
    with pytest.raises(mlfeed.UsageError, match="arrays=NAME"):
        mlfeed.open(str(tmp_path / "mnist.npz"))
    for split in ("train", "test"):
        with mlfeed.open(str(tmp_path / "mnist.npz"), options={"arrays": f"x_{split},y_{split}"}) as ds:
            got = ds.read()
        assert list(got) == [f"x_{split}", f"y_{split}"]
        np.testing.assert_array_equal(got[f"x_{split}"], a[f"x_{split}"])
        np.testing.assert_array_equal(got[f"y_{split}"].reshape(-1), a[f"y_{split}"])
    with pytest.raises(mlfeed.UsageError, match='no array "x"'):
        mlfeed.open(str(tmp_path / "mnist.npz"), options={"arrays": "x"})


def test_npy_float16_as_float32(tmp_path):
    # float16 arrays (embeddings saved to halve their size) read as numpy's astype(float32)
    x = np.random.default_rng(3).standard_normal((9, 4)).astype(np.float16)
    x[0, 0], x[0, 1] = np.nan, -np.inf
    np.save(tmp_path / "h.npy", x.astype(">f2"))
    with mlfeed.open(str(tmp_path / "h.npy")) as ds:
        (arr,) = ds.read().values()
    assert arr.dtype == np.float32
    assert arr.tobytes() == x.astype(np.float32).tobytes()
    assert mlfeed.info(str(tmp_path / "h.npy"))["details"]["float16_read_as_float32"] == ["features"]


def test_parquet_float16_as_float32():
    # parquet-mr's file holds each value as FLOAT and as FLOAT16: the two read the same
    path = os.path.join(ROOT, "format", "parquet", "testdata", "floating_orders_nan_count.parquet")
    with mlfeed.open(path) as ds:
        got = ds.read()
    assert got["float16_ieee754"].dtype == np.float32
    h, f = got["float16_ieee754"], got["float_ieee754"]
    np.testing.assert_array_equal(h, f)  # NaN where NaN (their payloads differ: 16 vs 32 bits)
    np.testing.assert_array_equal(np.signbit(h), np.signbit(f))


def test_parquet_timestamps():
    # Impala's alltypes_plain.parquet: an INT96 timestamp column, datetime ticks (100 ns since
    # 0001-01-01) that the documented expression turns into numpy's datetimes, as DuckDB
    # reads them (2009-01-01 00:00 for id 0, 00:01 for id 1, a month later for each pair)
    path = os.path.join(ROOT, "format", "parquet", "testdata", "alltypes_plain.parquet")
    with mlfeed.open(path) as ds:
        assert {s["name"]: s["type"] for s in ds.schema}["timestamp_col"] == "datetime"
        got = ds.read()
    ticks = got["timestamp_col"].reshape(-1)
    assert ticks.dtype == np.int64
    when = (ticks - 621355968000000000).astype("datetime64[100ns]")
    want = [np.datetime64("2009-%02d-01T00:%02d" % (1 + i // 2, i % 2)) for i in got["id"].reshape(-1)]
    np.testing.assert_array_equal(when, np.array(want, dtype="datetime64[100ns]"))
    # DuckDB's TIME column (check.mjs write-time): durations since midnight
    path = os.path.join(ROOT, "format", "parquet", "testdata", "duckdb-time.parquet")
    with mlfeed.open(path, options={"columns": "t"}) as ds:
        t = ds.read()["t"].reshape(-1).astype("timedelta64[100ns]")
    np.testing.assert_array_equal(t, np.timedelta64(86399999999, "us") - np.arange(5) * np.timedelta64(1, "s"))


def test_times_to_numpy(tmp_path):
    # DuckDB's timestamps and TIME (check.mjs write-time) converted to .npz are numpy's
    # datetime64[100ns] and timedelta64[100ns], the same instants; and read back as ticks
    src = os.path.join(ROOT, "format", "parquet", "testdata", "duckdb-time.parquet")
    out = str(tmp_path / "t.npz")
    mlfeed.convert(src, out, streams=["ts", "tstz", "d_late", "t"])
    z = np.load(out)
    assert z["ts"].dtype == np.dtype("<M8[100ns]") and z["t"].dtype == np.dtype("<m8[100ns]")
    days = np.arange(5)
    np.testing.assert_array_equal(z["ts"].astype("M8[us]"), np.datetime64("2024-01-02T03:04:05.123456") + days * np.timedelta64(1, "D"))
    np.testing.assert_array_equal(z["tstz"].astype("M8[us]"), np.datetime64("2024-01-02T01:04:05.123456") - days * np.timedelta64(1, "h"))
    np.testing.assert_array_equal(z["d_late"].astype("M8[D]"), np.datetime64("9999-12-31") - days * np.timedelta64(1, "D"))
    np.testing.assert_array_equal(z["t"], np.timedelta64(86399999999, "us") - days * np.timedelta64(1, "s"))
    with mlfeed.open(src, options={"columns": "ts"}) as a, mlfeed.open(out, options={"arrays": "ts"}) as b:
        np.testing.assert_array_equal(a.read()["ts"], b.read()["ts"])
    # stats: the exact first and last time, as text too
    times = {s["name"]: s.get("times") for s in mlfeed.stats(out)["streams"]}
    assert times["ts"]["min_text"] == "2024-01-02T03:04:05.123456" and times["ts"]["max_text"] == "2024-01-06T03:04:05.123456"
    assert times["t"]["min_text"] == "23:59:55.999999" and times["t"]["max"] == 863999999990


def test_parquet_columns():
    # the option columns reads the columns named, in that order
    path = os.path.join(ROOT, "format", "parquet", "testdata", "alltypes_plain.parquet")
    with mlfeed.open(path, options={"columns": "id,double_col"}) as ds:
        assert [s["name"] for s in ds.schema] == ["id", "double_col"]
        got = ds.read()
    np.testing.assert_array_equal(got["id"].reshape(-1), [4, 5, 6, 7, 2, 3, 0, 1])  # as DuckDB reads them
    np.testing.assert_array_equal(got["double_col"].reshape(-1), [0, 10.1] * 4)
    with pytest.raises(mlfeed.UsageError, match='no column "nope"'):
        mlfeed.open(path, options={"columns": "id,nope"})
    # a list of names is the same as NAME,NAME
    with mlfeed.open(path, options={"columns": ["double_col", "id"]}) as ds:
        assert [s["name"] for s in ds.schema] == ["double_col", "id"]
    with pytest.raises(TypeError, match="list names"):
        mlfeed.open(path, options={"columns": ["id", 3]})
    with pytest.raises(mlfeed.UsageError, match="comma"):
        mlfeed.open(path, options={"columns": ["id,double_col"]})


def test_parquet_struct_columns():
    # DuckDB's struct columns (check.mjs write-struct): an image {bytes, path} as Hugging Face
    # stores images, a position {x, inner: {y}}; one stream per field, picked by name
    path = os.path.join(ROOT, "format", "parquet", "testdata", "duckdb-struct.parquet")
    with mlfeed.open(path, options={"columns": ["image.bytes", "pos"]}) as ds:
        assert [s["name"] for s in ds.schema] == ["image.bytes", "pos.x", "pos.inner.y"]
        got = ds.read()
    assert list(got["image.bytes"]) == [b"img%d" % i for i in range(5)]
    np.testing.assert_array_equal(got["pos.x"].reshape(-1), np.arange(5) * 1.5)
    np.testing.assert_array_equal(got["pos.inner.y"].reshape(-1), np.arange(5) % 3)
    with mlfeed.open(path) as ds:  # the path of row 2 is null
        with pytest.raises(mlfeed.UsageError, match=r'"image.path", row 2: null'):
            ds.read()


def test_hdf5_strings():
    # datasets of strings read as h5py reads them: bytes for fixed-length and ASCII ones, text
    # for UTF-8 (h5py's asstr()); a string dataset of other rows (class names) left out, warned
    h5py = pytest.importorskip("h5py")
    path = os.path.join(ROOT, "format", "hdf5", "testdata", "strings.h5")
    with pytest.warns(mlfeed.DataWarning, match="names: 3 strings"):
        with mlfeed.open(path) as ds:
            got = ds.read()
    with h5py.File(path) as f:
        assert list(got["text"]) == list(f["text"].asstr()[()])
        assert got["grid"].tolist() == f["grid"].asstr()[()].tolist()
        assert list(got["ascii"]) == list(f["ascii"][()])
        assert list(got["fixed"]) == list(f["fixed"][()])
        np.testing.assert_array_equal(got["X"], f["X"][()])


def test_arrow_big_endian():
    # The Arrow project's big-endian integration file reads as its little-endian twin (a mapped
    # big-endian file killed the interpreter: arrow-go swaps its bytes in place)
    d = os.path.join(ROOT, "format", "arrow", "testdata")
    cols = {"columns": "int16_nonnullable,uint64_nonnullable,float64_nonnullable,utf8_nonnullable"}
    with mlfeed.open(os.path.join(d, "integration-le-primitive.arrow"), options=cols) as ds:
        le = ds.read()
    for name in ("integration-be-primitive.arrow", "integration-be-primitive.stream"):
        with mlfeed.open(os.path.join(d, name), options=cols) as ds:
            be = ds.read()
        assert list(be) == list(le)
        for k in le:
            np.testing.assert_array_equal(be[k], le[k])
        assert be["int16_nonnullable"].dtype == np.int16


@pytest.mark.parametrize("shuffle", [False, True])
def test_hdf5_lzf_with_h5py(tmp_path, shuffle):
    # h5py's own compression filter, LZF: random floats (chunks it cannot shrink are stored
    # as they are), a ramp, edge chunks
    h5py = pytest.importorskip("h5py")
    x = np.random.default_rng(2).standard_normal((70, 6, 5)).astype(np.float32)
    y = np.arange(70 * 3, dtype=np.int16).reshape(70, 3)
    path = tmp_path / "lzf.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("X", data=x, chunks=(16, 6, 5), compression="lzf", shuffle=shuffle)
        f.create_dataset("y", data=y, chunks=(9, 2), compression="lzf", shuffle=shuffle)
        f["valid"] = x[:, 0, 0] > 0  # a bool: h5py stores an enum of int8, FALSE and TRUE
        f["half"] = x[:, 0].astype(np.float16)
    with mlfeed.open(str(path)) as ds:
        assert len(ds) == 70
        got = ds.read()
        np.testing.assert_array_equal(got["X"], x)
        np.testing.assert_array_equal(got["y"], y)
        assert got["valid"].dtype == np.bool_  # as h5py reads it
        np.testing.assert_array_equal(got["valid"].reshape(-1), x[:, 0, 0] > 0)
        assert got["half"].dtype == np.float32
        assert got["half"].tobytes() == x[:, 0].astype(np.float16).astype(np.float32).tobytes()
    assert "lzf" in mlfeed.info(str(path))["details"]["datasets"]["/X"]


def test_libsvm_with_sklearn(tmp_path):
    datasets = pytest.importorskip("sklearn.datasets")
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(1)
    dense = rng.random((40, 12)) * (rng.random((40, 12)) < 0.3)
    X = scipy_sparse.csr_matrix(dense)
    y = rng.integers(0, 3, size=40).astype(np.float64)
    datasets.dump_svmlight_file(X, y, tmp_path / "a.svm", zero_based=False)
    # sklearn writes 16 significant digits: compare with what its own reader makes of the file.
    Xa, ya = datasets.load_svmlight_file(str(tmp_path / "a.svm"), n_features=12)
    with mlfeed.open(str(tmp_path / "a.svm"), options={"dim": 12}) as ds:
        got = ds.read()
        np.testing.assert_array_equal(got["features"].toarray(), Xa.toarray())
        np.testing.assert_array_equal(got["labels"].reshape(-1), ya)
    mlfeed.convert(str(tmp_path / "a.svm"), tmp_path / "b.svm", options={"dim": 12})
    Xb, yb = datasets.load_svmlight_file(str(tmp_path / "b.svm"), n_features=12)
    np.testing.assert_array_equal(Xb.toarray(), Xa.toarray())
    np.testing.assert_array_equal(yb, ya)


@pytest.mark.parametrize("ext", [".arrow", ".parquet"])
def test_arrow_and_parquet_round_trip(tmp_path, ext):
    x = np.arange(24, dtype=np.float32).reshape(6, 2, 2)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / ("x" + ext)
    mlfeed.convert(str(tmp_path / "x.npy"), out)
    with mlfeed.open(str(out)) as ds:
        (arr,) = ds.read().values()
        np.testing.assert_array_equal(arr, x)
    with mlfeed.open(str(out)) as ds:
        name = ds.schema[0]["name"]
    src = mlfeed.MinibatchSource(str(out), minibatch_size=4, randomize=False, max_sweeps=1)
    seen = np.concatenate([mb[name].copy() for mb in src])
    np.testing.assert_array_equal(seen, x)
