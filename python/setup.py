"""Builds and installs the mlfeed Python package: `pip install ./python` from the repository.

The build compiles the Go package capi into the shared library mlfeed/libmlfeed.so with
`go build -buildmode=c-shared` (Go and gcc needed; $MLFEED_TAGS gives build tags, none by
default). Only setuptools is needed to build (Debian: python3-setuptools), from no index.
"""

import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithGo(build_py):
    """build_py that also builds libmlfeed.so from the Go sources into the package."""

    def run(self):
        super().run()
        out = os.path.join(os.path.abspath(self.build_lib), "mlfeed", "libmlfeed.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tags = os.environ.get("MLFEED_TAGS", "")  # build tags, as scripts/python.sh
        subprocess.check_call(["go", "build", "-tags", tags, "-buildmode=c-shared", "-trimpath",
                               "-o", out, "./capi"], cwd=ROOT)
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)


class BinaryDistribution(Distribution):
    """The package holds a platform-specific shared library."""

    def has_ext_modules(self):
        return True


setup(
    name="mlfeed",
    version="0.1.0",
    description="Machine-learning training data (IDX, CTF, CBF, IDV, Binsparse, ...) for "
                "numpy, PyTorch and CNTK's reader API, read by mlfeed's Go engine",
    packages=["mlfeed", "mlfeed.cntk"],
    package_dir={"mlfeed": "mlfeed"},
    package_data={"mlfeed": ["py.typed"]},  # the package is typed (PEP 561)
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"sparse": ["scipy"], "torch": ["torch"]},
    cmdclass={"build_py": BuildWithGo},
    distclass=BinaryDistribution,
    zip_safe=False,
)
