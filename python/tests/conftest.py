"""Shared fixtures: the mlfeed CLI (to compare with), the shared test corpus, and the built
library. Run from the repository root: `bash scripts/python.sh && python3 -m pytest python/tests`.

With MLFEED_TEST_INSTALLED=1 (scripts/wheel-test.sh) the tests run against the mlfeed package
installed in the running Python, not the checkout's python/ (which is then not put on sys.path):
tests that need the Go toolchain or the checkout's Python sources skip, saying why, and the CLI to
compare with is $MLFEED_CLI.
"""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INSTALLED = os.environ.get("MLFEED_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import mlfeed  # noqa: E402

if INSTALLED and os.path.abspath(mlfeed.__file__).startswith(os.path.join(ROOT, "python") + os.sep):
    raise ImportError("MLFEED_TEST_INSTALLED=1 but mlfeed was imported from the checkout (%s): run "
                      "pytest outside the repository (scripts/wheel-test.sh)" % mlfeed.__file__)


def need_checkout(what):
    """Skip when testing the installed package (MLFEED_TEST_INSTALLED=1): what the test needs of
    the checkout (its Python sources, or Go to build them) is not what was installed."""
    if INSTALLED:
        pytest.skip("testing the installed package: this test %s" % what)


def shared_dir():
    """The shared corpus: $MLFEED_SHARED, else ../shared beside the repository."""
    d = os.environ.get("MLFEED_SHARED") or os.path.join(ROOT, "..", "shared")
    return d if os.path.isdir(os.path.join(d, "testdata")) else None


def corpus(*elem):
    """A path in the shared corpus, or a skip when it is absent."""
    d = shared_dir()
    if d is None:
        pytest.skip("the shared test corpus (../shared/testdata or $MLFEED_SHARED) is absent")
    p = os.path.join(d, "testdata", *elem)
    if not os.path.exists(p):
        pytest.skip("%s is absent" % p)
    return p


@pytest.fixture(scope="session")
def cli(tmp_path_factory):
    """The mlfeed command built from this repository ($MLFEED_CLI to use another)."""
    if os.environ.get("MLFEED_CLI"):
        return os.environ["MLFEED_CLI"]
    if shutil.which("go") is None:
        pytest.skip("the go command is not on PATH to build the mlfeed CLI (set $MLFEED_CLI)")
    out = str(tmp_path_factory.mktemp("cli") / "mlfeed")
    tags = os.environ.get("MLFEED_TAGS", "")
    subprocess.check_call(["go", "build", "-tags", tags, "-o", out, "./cmd/mlfeed"], cwd=ROOT)
    return out


def run_cli(cli, *args, check=True):
    p = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("mlfeed %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p
