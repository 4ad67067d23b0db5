"""mlfeed in a Python process: Ctrl-C, fork, garbage collection, bad handles."""

import gc
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mlfeed
from mlfeed import _lib
from test_dataset import write_idx

PY = [sys.executable, "-c"]
# Child processes import the mlfeed under test: the checkout's, or the installed one.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(mlfeed.__file__)),
                                                                os.environ.get("PYTHONPATH")])))


def run_py(code, timeout=120):
    return subprocess.run(PY + [textwrap.dedent(code)], capture_output=True, text=True, env=ENV, timeout=timeout)


@pytest.fixture(scope="module")
def big_idx(tmp_path_factory):
    """An IDX file whose conversion to CTF text takes seconds."""
    p = tmp_path_factory.mktemp("big") / "big.idx"
    write_idx(p, np.random.default_rng(1).random((20000, 784), np.float32))
    return str(p)


def test_ctrl_c_stops_a_long_call(big_idx, tmp_path):
    out = tmp_path / "out.ctf"
    p = run_py("""
        import os, signal, threading, time, mlfeed
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        t = time.time()
        try:
            mlfeed.convert(%r, %r, input=None)
            print("finished", time.time() - t)
        except KeyboardInterrupt:
            print("interrupted", time.time() - t)
        # The library still works after the interruption.
        print(mlfeed.info(%r)["sequences"])
    """ % (big_idx, str(out), big_idx))
    assert p.returncode == 0, p.stderr
    word, secs = p.stdout.split()[:2]
    assert word == "interrupted" and float(secs) < 3, p.stdout
    assert p.stdout.split()[2] == "20000"
    assert not out.exists()  # nothing left half-written


def test_ctrl_c_during_iteration_loses_nothing(big_idx):
    # Interrupt the loop, then go on: the minibatches are those of an uninterrupted run.
    p = run_py("""
        import os, signal, threading, mlfeed, numpy as np
        def labels(src):
            return [float(mb["features"][0, 0]) for mb in src]
        want = labels(mlfeed.MinibatchSource(%r, minibatch_size=100, seed=4, max_sweeps=10))
        src = mlfeed.MinibatchSource(%r, minibatch_size=100, seed=4, max_sweeps=10)
        got, stops = [], 0
        timer = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        while True:
            try:
                mb = src.next_minibatch()
            except KeyboardInterrupt:
                stops += 1
                continue
            if mb is None:
                break
            got.append(float(mb["features"][0, 0]))
        print(got == want, len(got), stops)
    """ % (big_idx, big_idx))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "2000", "1"], p.stdout + p.stderr


def test_forked_child_gets_an_error_not_a_hang(big_idx):
    p = run_py("""
        import os, mlfeed
        n = mlfeed.info(%r)["sequences"]
        src = mlfeed.MinibatchSource(%r, minibatch_size=64)
        next(src)
        pid = os.fork()
        if pid == 0:
            try:
                mlfeed.info(%r)
                os._exit(1)
            except mlfeed.ForkError as e:
                try:
                    next(src)
                    os._exit(2)
                except mlfeed.ForkError:
                    os._exit(7)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), next(src).num_sequences)
    """ % (big_idx, big_idx, big_idx), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["7", "64"]


def test_fork_before_first_use_works(big_idx):
    p = run_py("""
        import os, mlfeed
        pid = os.fork()
        if pid == 0:
            os._exit(0 if mlfeed.info(%r)["sequences"] == 20000 else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), mlfeed.info(%r)["sequences"])
    """ % (big_idx, big_idx), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0", "20000"]


def goroutines():
    return _lib.lib().mlfeed_goroutines()


def test_goroutines_stop_when_closed_or_collected(big_idx):
    mlfeed.info(big_idx)
    base = goroutines()
    srcs = [mlfeed.MinibatchSource(big_idx, minibatch_size=128, seed=i) for i in range(8)]
    for s in srcs:
        next(s)
    assert goroutines() > base
    for s in srcs[:4]:
        s.close()
    del srcs, s
    gc.collect()
    for _ in range(50):
        if goroutines() <= base:
            break
        time.sleep(0.05)
    assert goroutines() <= base
    with mlfeed.open(big_idx) as ds:
        src = mlfeed.MinibatchSource(ds, minibatch_size=500)
        next(src)
        del src
        gc.collect()
    for _ in range(50):
        if goroutines() <= base:
            break
        time.sleep(0.05)
    assert goroutines() <= base


def test_bad_handles_raise_not_crash():
    l = _lib.lib()
    e = _lib.new_error()
    meta = (_lib.ctypes.c_int64 * 9)()
    for h in (0, 1, 12345678, 2**40):
        assert l.mlfeed_next(h, 0, 10, meta, 9, _lib.ctypes.byref(e)) == -1
        with pytest.raises(mlfeed.UsageError):
            _lib.check(e)
        assert l.mlfeed_wait(h, 0) == -1
        l.mlfeed_free(h)
        l.mlfeed_cancel(h)
    with pytest.raises(mlfeed.UsageError):
        _lib.call("nosuchop", {})
    with pytest.raises(mlfeed.UsageError):
        _lib.call("info", {"paths": ["x"], "bogus": 1})
