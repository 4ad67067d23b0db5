#!/usr/bin/env bash
# Sets up a fresh machine if needed, then runs every test. Extra arguments go to `go test`
# (for example -short or -run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
go test -tags "$MLFEED_TAGS" -timeout 20m "$@" ./...
# The packages with goroutines of their own, again under the race detector.
go test -race -tags "$MLFEED_TAGS" -timeout 20m "$@" ./minibatch ./format/ctf ./format/cbf ./format/idx
# The pure-Go HDF5 layer against libhdf5 (cgo), where libhdf5 is installed.
if [ -n "${MLFEED_ORACLE_TAGS:-}" ]; then
  go test -tags "$MLFEED_ORACLE_TAGS" -run Oracle "$@" ./format/binsparse
fi
