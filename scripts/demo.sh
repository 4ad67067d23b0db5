#!/usr/bin/env bash
# Runs mlfeed's built-in demo: needs only Go. It installs nothing: it compiles the CLI into
# .cache/ (saying how far it is; about a minute the first time, seconds after) and runs
# `mlfeed demo`. Arguments go to the demo (--dir DIR, -n N, --seed S).
# The demo reads only local data, so this build leaves out the object-storage drivers
# (-tags mlfeed_nostorage: about 400 packages to compile, not 600); `go build ./cmd/mlfeed`
# makes a CLI with s3://, gs:// and azblob://.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1; then
  echo "demo: needs Go (https://go.dev/dl/), then: bash scripts/demo.sh" >&2
  exit 2
fi
source scripts/lib/gobuild.sh
mkdir -p .cache
go_build_progress demo .cache/mlfeed ./cmd/mlfeed -tags mlfeed_nostorage -trimpath -pgo=off
exec .cache/mlfeed demo "$@"
