#!/usr/bin/env bash
# Builds the shared library the Python package loads (python/mlfeed/libmlfeed.so, from the Go
# package capi), so that `PYTHONPATH=python python3 -c 'import mlfeed'` works from the
# repository root. `pip install ./python` runs the same build. Set MLFEED_TAGS=hdf5 (as
# scripts/setup.sh does when libhdf5 is there) to read Binsparse HDF5 files.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${MLFEED_TAGS+x}" ]; then
  if pkg-config --exists hdf5 2>/dev/null || [ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ]; then
    MLFEED_TAGS=hdf5
  else
    MLFEED_TAGS=
  fi
fi
out=python/mlfeed/libmlfeed.so
go build -tags "$MLFEED_TAGS" -buildmode=c-shared -trimpath -o "$out" ./capi
rm -f python/mlfeed/libmlfeed.h
echo "built $out" >&2
