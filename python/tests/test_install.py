"""`pip install --no-build-isolation ./python` builds the library with Go and installs a working
package (into a virtual environment that sees Debian's numpy, setuptools and wheel, from no
package index)."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT, need_checkout


def test_pip_install(tmp_path):
    need_checkout("builds python/ with Go (scripts/wheel-test.sh tests the installed wheel)")
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        pytest.skip("pip is not installed (Debian: python3-pip)")
    env_dir = tmp_path / "env"
    subprocess.check_call([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)])
    py = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLFEED_LIBRARY")}
    p = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                        os.path.join(ROOT, "python")],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    check = ("import mlfeed, os; import mlfeed.cntk; from mlfeed.cntk.io import MinibatchSource; "
             "assert mlfeed._lib.library_path().startswith(%r), mlfeed._lib.library_path(); "
             "print(sorted(mlfeed.formats()))" % str(env_dir))
    p = subprocess.run([py, "-c", check], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "idx" in p.stdout and "ctf" in p.stdout
