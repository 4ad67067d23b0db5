#!/usr/bin/env bash
# Builds the shared library the Python package loads (python/mlfeed/libmlfeed.so, from the Go
# package capi), so that `PYTHONPATH=python python3 -c 'import mlfeed'` works from the
# repository root, saying what it compiles (about a minute the first time, seconds after).
# The library is stripped (-ldflags "-s -w", as in the wheel; $MLFEED_LDFLAGS overrides it).
# Needs Go and gcc (cgo). $MLFEED_TAGS, if set, gives build tags (the default build needs
# none). A wheel that needs neither: scripts/release.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gobuild.sh
out=python/mlfeed/libmlfeed.so
go_build_progress python "$out" ./capi -tags "${MLFEED_TAGS:-}" -buildmode=c-shared -trimpath -ldflags "${MLFEED_LDFLAGS:--s -w}"
rm -f python/mlfeed/libmlfeed.h
