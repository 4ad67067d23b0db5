#!/usr/bin/env bash
# Sets up a fresh machine if needed, then runs mlfeed's built-in demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
go run ./cmd/mlfeed demo "$@"
