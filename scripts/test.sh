#!/usr/bin/env bash
# Sets up a fresh machine if needed, then runs every test. Extra arguments go to `go test`
# (for example -short or -run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Tests build without the profiles of profile-guided optimisation (default.pgo), which would
# compile every package a second time for the command's and the library's tests.
export GOFLAGS="${GOFLAGS:--pgo=off}"
# The screenshots of the browser tests of `mlfeed view` (CI keeps the directory as an artifact).
export MLFEED_SCREENSHOTS="${MLFEED_SCREENSHOTS:-${TMPDIR:-/tmp}/mlfeed-screenshots}"
go test -tags "$MLFEED_TAGS" -timeout 20m -skip '^(TestFault|TestSoak)' "$@" ./...
# The end-to-end fault suite (cmd/mlfeed/e2e_test.go): the built CLI against devices, FIFOs,
# symlinks, stdout, signals at random moments, a full disk (a tmpfs when root may mount), a file
# size limit, inputs truncated while read and absurd flag values. About a minute. Then the soak
# test (cmd/mlfeed/soak_test.go, skipped by -short): 1.35 GB through convert and batches, each
# process in a 64 MiB memory cgroup when root may make one. One to two minutes, 3.5 GB of disk.
go test -tags "$MLFEED_TAGS" -timeout 10m -count=1 -run '^(TestFault|TestSoak)' "$@" ./cmd/mlfeed
# The packages with goroutines of their own or read from several at once (the readers behind
# the minibatch engine and the C ABI), again under the race detector.
go test -race -tags "$MLFEED_TAGS" -timeout 20m "$@" ./minibatch ./format/ctf ./format/cbf ./format/idx ./format/arrow ./format/parquet \
  ./format/all ./format/binsparse ./storage ./storage/cache ./capi
# The pure-Go HDF5 layer against libhdf5 (cgo), where libhdf5 is installed.
if [ -n "${MLFEED_ORACLE_TAGS:-}" ]; then
  go test -tags "$MLFEED_ORACLE_TAGS" -run Oracle "$@" ./format/binsparse
fi
# The Python package: build its shared library, then its tests (pytest's exit status 5 means
# no tests were collected, which is not a failure here).
bash scripts/python.sh
rc=0
/usr/bin/python3 -m pytest -q python/tests || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
  exit "$rc"
fi
