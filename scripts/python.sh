#!/usr/bin/env bash
# Builds the shared library the Python package loads (python/mlfeed/libmlfeed.so, from the Go
# package capi), so that `PYTHONPATH=python python3 -c 'import mlfeed'` works from the
# repository root. `pip install ./python` runs the same build. Needs Go and gcc (cgo).
# $MLFEED_TAGS, if set, gives build tags (the default build needs none).
set -euo pipefail
cd "$(dirname "$0")/.."
out=python/mlfeed/libmlfeed.so
go build -tags "${MLFEED_TAGS:-}" -buildmode=c-shared -trimpath -o "$out" ./capi
rm -f python/mlfeed/libmlfeed.h
echo "built $out" >&2
