"""Warnings the formats log reach Python as mlfeed.DataWarning, as the CLI prints them."""

import os
import warnings

import pytest

import mlfeed


def test_ctf_rounding_warns(tmp_path: "os.PathLike[str]") -> None:
    # Values as Python writes them (17 significant digits): declared streams are float32, as
    # in CNTK, and the rounding is said once per stream.
    path = os.path.join(str(tmp_path), "py.ctf")
    with open(path, "w") as f:
        for i in range(20):
            f.write("|x %r %r\n" % (0.1 * i + 0.07670275135766862, 1.0 / (i + 3)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mlfeed.open(path, inputs=["x:dense:2"]) as ds:
            x = ds.read()["x"]
    assert x.dtype.name == "float32" and x.shape == (20, 2)
    msgs = [str(w.message) for w in caught if issubclass(w.category, mlfeed.DataWarning)]
    assert any("rounded to float32" in m and "py.ctf" in m for m in msgs), msgs


def test_validate_warning_is_not_a_problem(tmp_path: "os.PathLike[str]") -> None:
    path = os.path.join(str(tmp_path), "py.ctf")
    with open(path, "w") as f:
        f.write("|x %r\n" % 0.07670275135766862)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problems = mlfeed.validate(path, inputs=["x:dense:1"])
    assert problems == []
    assert any(issubclass(w.category, mlfeed.DataWarning) for w in caught)


def test_no_warning_for_exact_data() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    labels = os.path.join(here, "..", "..", "testdata", "mnist", "t10k-labels-idx1-ubyte")
    if not os.path.exists(labels):
        pytest.skip("the repository's testdata is not here (an installed package's tests)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", mlfeed.DataWarning)
        with mlfeed.open(labels) as ds:
            ds.read(0, 10)


def test_minibatch_source_warns_at_the_end_of_a_sweep(tmp_path: "os.PathLike[str]") -> None:
    # CTF gives its rounding notice once every chunk is read: a MinibatchSource raises it at
    # the end of the sweep, as `mlfeed batches` prints it.
    path = os.path.join(str(tmp_path), "py.ctf")
    with open(path, "w") as f:
        for i in range(50):
            f.write("|x %r\n" % (0.1 * i + 0.07670275135766862))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        src = mlfeed.MinibatchSource(path, inputs=["x:dense:1"], minibatch_size=8, max_sweeps=1)
        n = sum(mb.num_samples for mb in src)
    assert n == 50
    msgs = [str(w.message) for w in caught if issubclass(w.category, mlfeed.DataWarning)]
    assert any("rounded to float32" in m for m in msgs), msgs
