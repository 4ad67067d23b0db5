#!/usr/bin/env bash
# Runs mlfeed's built-in demo: needs only Go. It installs nothing: it compiles the CLI into
# .cache/ (saying how far it is; about a minute the first time, seconds after) and runs
# `mlfeed demo`. Arguments go to the demo (--dir DIR, -n N, --seed S).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1; then
  echo "demo: needs Go (https://go.dev/dl/), then: bash scripts/demo.sh" >&2
  exit 2
fi
source scripts/lib/gobuild.sh
mkdir -p .cache
go_build_progress demo .cache/mlfeed ./cmd/mlfeed -trimpath -pgo=off
exec .cache/mlfeed demo "$@"
