"""Builds the mlfeed Python package: the metadata is in pyproject.toml; this file adds the build
of the shared library mlfeed/libmlfeed.so from the Go package capi and the wheel's tag.

The library is built with `go build -buildmode=c-shared` (Go and a C compiler needed) from the
Go module: the repository around this directory (`pip install ./python`), or gosrc/ in an sdist
made by scripts/release.sh. $MLFEED_TAGS gives build tags (none by default); GOARCH, CC and
CGO_ENABLED pass through to go build for a cross build. Only setuptools and wheel are needed to
build (Debian: python3-setuptools, python3-wheel), from no index.

The library is loaded with ctypes, so the wheel fits any Python 3 and is tagged py3-none-PLAT:
PLAT is $MLFEED_WHEEL_PLAT if set (scripts/release.sh sets it), else on Linux with glibc
manylinux_X_Y_ARCH for the glibc this machine runs (the one the library links against), else
the platform setuptools names.
"""

import os
import platform
import subprocess
import sysconfig
from typing import Tuple

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # type: ignore[import]  # setuptools >= 70.1
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[import]  # Debian 12: python3-wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def go_root() -> str:
    """The directory of the Go module to build the library from."""
    for d in (os.path.dirname(HERE), os.path.join(HERE, "gosrc")):
        if os.path.exists(os.path.join(d, "go.mod")) and os.path.isdir(os.path.join(d, "capi")):
            return d
    raise SystemExit("mlfeed: the Go sources are missing: build from the repository "
                     "(pip install ./python) or from a release sdist (scripts/release.sh)")


def wheel_platform() -> str:
    """The wheel's platform tag (see the module's doc)."""
    plat = os.environ.get("MLFEED_WHEEL_PLAT")
    if plat:
        return plat
    libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    if platform.system() == "Linux" and libc and libc.startswith("glibc "):
        major, minor = libc.split()[1].split(".")[:2]
        return "manylinux_%s_%s_%s" % (major, minor, platform.machine())
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class BuildWithGo(build_py):
    """build_py that also builds libmlfeed.so from the Go sources into the package."""

    def run(self) -> None:
        super().run()
        out = os.path.join(os.path.abspath(self.build_lib), "mlfeed", "libmlfeed.so")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tags = os.environ.get("MLFEED_TAGS", "")  # build tags, as scripts/python.sh
        ldflags = os.environ.get("MLFEED_LDFLAGS", "")  # scripts/release.sh: -s -w
        print("mlfeed: building %s with go build (a minute or more on a cold cache)" % out,
              flush=True)
        subprocess.check_call(["go", "build", "-tags", tags, "-buildmode=c-shared", "-trimpath",
                               "-ldflags", ldflags, "-o", out, "./capi"], cwd=go_root())
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)


class PlatformWheel(bdist_wheel):  # type: ignore[misc]
    """A wheel for any Python 3 (ctypes, no extension module) on one platform."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> Tuple[str, str, str]:
        return "py3", "none", wheel_platform()


class BinaryDistribution(Distribution):
    """The package holds a platform-specific shared library."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    cmdclass={"build_py": BuildWithGo, "bdist_wheel": PlatformWheel},
    distclass=BinaryDistribution,
)
