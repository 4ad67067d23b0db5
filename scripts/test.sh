#!/usr/bin/env bash
# Sets up a fresh machine if needed, then runs every test. Extra arguments go to `go test`
# (for example -short or -run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
go test -tags "$MLFEED_TAGS" -timeout 20m -skip '^TestFault' "$@" ./...
# The end-to-end fault suite (cmd/mlfeed/e2e_test.go): the built CLI against devices, FIFOs,
# symlinks, stdout, signals at random moments, a full disk (a tmpfs when root may mount), a file
# size limit, inputs truncated while read and absurd flag values. About a minute.
go test -tags "$MLFEED_TAGS" -timeout 5m -count=1 -run '^TestFault' "$@" ./cmd/mlfeed
# The packages with goroutines of their own, again under the race detector.
go test -race -tags "$MLFEED_TAGS" -timeout 20m "$@" ./minibatch ./format/ctf ./format/cbf ./format/idx
