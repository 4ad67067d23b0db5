#!/usr/bin/env bash
# Installs what mlfeed's tests and benchmarks need on a fresh Debian machine with Go: Debian's
# python3-numpy, python3-h5py and python3-scipy, hdf5-tools (h5dump) and the HDF5 C library
# (only as a test oracle: mlfeed reads and writes HDF5 in pure Go). Idempotent and quiet when
# all is there. Sourced by scripts/demo.sh and scripts/test.sh; sets MLFEED_TAGS (build tags of
# the default build: none) and MLFEED_ORACLE_TAGS ("hdf5" when libhdf5 is there, for the tests
# that compare the pure-Go HDF5 layer with libhdf5).
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in libhdf5-dev hdf5-tools pkg-config python3-numpy python3-h5py python3-scipy; do
  have_pkg "$p" || need+=("$p")
done
# scikit-learn: the independent checker of format/libsvm's tests and bench/libsvm.sh; Debian's
# chromium: the browser the tests of `mlfeed view` drive headless (cmd/mlfeed/view_browser_test.go).
for p in python3-sklearn chromium; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# The Python package (python/) and its tests: Debian's numpy, scipy, torch and pytest; mypy
# (the package is checked with --strict); setuptools, wheel, pip and venv to build the wheel
# and test it installed; dask and distributed for mlfeed.dask (tested on a LocalCluster).
need=()
for p in python3-numpy python3-scipy python3-torch python3-pytest python3-setuptools python3-pip python3-venv python3-wheel mypy python3-dask python3-distributed; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# Go modules (from the module proxy), once.
if [ ! -d "$(go env GOMODCACHE)/github.com/apache/arrow-go" ]; then
  echo "setup: downloading the Go modules (go mod download)" >&2
fi
go mod download

# The default build is pure Go; libhdf5 serves only as the oracle of format/binsparse's tests.
export MLFEED_TAGS=
if pkg-config --exists hdf5 2>/dev/null || [ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ]; then
  export MLFEED_ORACLE_TAGS=hdf5
else
  export MLFEED_ORACLE_TAGS=
  echo "setup: libhdf5 not found; skipping the libhdf5 oracle tests" >&2
fi

# Versity's S3 gateway, the S3-compatible server the object-storage tests start on 127.0.0.1
# (built from the Go module proxy, pinned).
if ! command -v versitygw >/dev/null 2>&1 && [ ! -x "$(go env GOPATH)/bin/versitygw" ]; then
  echo "setup: installing versitygw v1.8.0 (go install)" >&2
  GOFLAGS= go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 >&2
fi

# Arrow/Parquet independent peers (npm apache-arrow and @duckdb/node-api, pinned in
# internal/arrowcheck/package-lock.json), once; skipped when installed or when node is absent
# (the peer tests then skip, unless MLFEED_REQUIRE_PEERS is set).
if [ ! -d internal/arrowcheck/node_modules/@duckdb/node-api ] || [ ! -d internal/arrowcheck/node_modules/apache-arrow ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "setup: installing the Arrow/Parquet peers (npm ci in internal/arrowcheck)" >&2
    # npm ci installs the lock's exact tree (it lists DuckDB's binding for every platform);
    # where that fails (a registry mirror without some binding), npm install --no-save
    # installs the same pinned versions.
    (cd internal/arrowcheck && { npm ci --no-audit --no-fund --loglevel=error >&2 2>/dev/null ||
      npm install --no-save --no-audit --no-fund --loglevel=error >&2; })
  else
    echo "setup: npm not found; the Arrow/Parquet peer tests will skip" >&2
  fi
fi

# Azure Storage's emulator (npm's azurite, pinned in internal/azurite/package-lock.json), for
# storage/azblob's conformance test; skipped when npm is absent (the test then skips).
if [ ! -x internal/azurite/node_modules/.bin/azurite-blob ] && command -v npm >/dev/null 2>&1; then
  echo "setup: installing Azure Storage's emulator (npm ci in internal/azurite)" >&2
  (cd internal/azurite && { npm ci --no-audit --no-fund --loglevel=error >&2 2>/dev/null ||
    npm install --no-save --no-audit --no-fund --loglevel=error >&2; })
fi
