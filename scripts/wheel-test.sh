#!/usr/bin/env bash
# Tests the Python wheel as users get it: builds the x86_64 wheel and the linux/amd64 CLI as
# scripts/release.sh builds them (version: CHANGELOG.md's newest entry; this checkout, committed
# or not), installs the wheel into a fresh virtual environment (/usr/bin/python3 -m venv
# --system-site-packages: numpy, scipy, torch and pytest are Debian's) from no index, and runs
# python/tests against the installed package from a directory outside the checkout, with a PATH
# that has no Go (MLFEED_TEST_INSTALLED=1: tests needing Go or the checkout's Python sources
# skip, saying why; the CLI they compare with is the release CLI just built).
#
# usage: bash scripts/wheel-test.sh [PYTEST-ARGS...]
# $MLFEED_SHARED: the shared corpus (default ../shared beside the checkout, when present).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=/usr/bin/python3

version=$(sed -n 's/^## \[\{0,1\}\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)\]\{0,1\}\( .*\)\{0,1\}$/\1/p' CHANGELOG.md | head -1)
[ -n "$version" ] || { echo "wheel-test: CHANGELOG.md has no version entry" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "wheel-test: building the x86_64 wheel and the linux/amd64 CLI of mlfeed $version (scripts/release.sh)" >&2
bash scripts/release.sh --allow-dirty --out "$work/dist" --only cli-linux-amd64,wheel-x86_64 "$version"
whl=$(ls "$work"/dist/mlfeed-"$version"-py3-none-manylinux_*_x86_64.whl)
tar -C "$work" -xzf "$work/dist/mlfeed_${version}_linux_amd64.tar.gz"
cli=$work/mlfeed_${version}_linux_amd64/mlfeed

echo "wheel-test: installing ${whl##*/} into a fresh virtual environment" >&2
"$PYTHON" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --no-cache-dir --disable-pip-version-check -q "$whl"

# PATH: the environment, then the system's directories, none with a go command; versitygw
# (scripts/setup.sh installs it with Go, into GOPATH/bin) for the object-storage tests.
mkdir -p "$work/bin"
gw=$(command -v versitygw || true)
[ -n "$gw" ] || gw=$(go env GOPATH 2>/dev/null)/bin/versitygw
[ ! -x "$gw" ] || ln -s "$gw" "$work/bin/versitygw"
path=$work/venv/bin:$work/bin
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  [ -d "$d" ] && [ ! -e "$d/go" ] && path=$path:$d
done
! PATH=$path command -v go >/dev/null || { echo "wheel-test: go is still on PATH" >&2; exit 1; }

vars=(PATH="$path" MLFEED_TEST_INSTALLED=1 MLFEED_CLI="$cli" PYTHONDONTWRITEBYTECODE=1)
shared=${MLFEED_SHARED:-$ROOT/../shared}
if [ -d "$shared/testdata" ]; then vars+=(MLFEED_SHARED="$(cd "$shared" && pwd)"); fi
mkdir -p "$work/run"
cd "$work/run"
run() { env -u PYTHONPATH -u MLFEED_LIBRARY -u GOROOT "${vars[@]}" "$@"; }

# The package imported is the installed one, of the CLI's version.
cli_version=$("$cli" version --json | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["version"])')
run python -c '
import os, sys, mlfeed
venv, want = sys.argv[1], sys.argv[2]
assert mlfeed.__file__.startswith(venv + os.sep), "mlfeed imported from %s, not %s" % (mlfeed.__file__, venv)
assert mlfeed.__version__ == want, "mlfeed.__version__ %s, the CLI %s" % (mlfeed.__version__, want)
assert mlfeed._lib.library_path().startswith(venv + os.sep), mlfeed._lib.library_path()
print("wheel-test: mlfeed %s from %s (%d formats)" % (mlfeed.__version__, os.path.dirname(mlfeed.__file__), len(mlfeed.formats())))
' "$work/venv" "$cli_version" >&2

echo "wheel-test: python/tests against the installed package (PATH without Go)" >&2
run python -m pytest -p no:cacheprovider --rootdir "$work/run" -q -rs "$ROOT/python/tests" "$@"
