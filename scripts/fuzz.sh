#!/usr/bin/env bash
# The fuzz campaign: every fuzz target of the module, one after another, for MINUTES minutes
# each (default 10; readers of untrusted binary formats get BINARY_MINUTES, default 15), with
# JOBS targets at a time (default 1; each runs one fuzzing worker). A crasher is written by Go
# under the package's testdata/fuzz (it then fails `go test` until fixed); the log of each
# target, with its executions, goes to LOGDIR (default fuzz-logs/). New corpus entries stay in
# Go's cache ($(go env GOCACHE)/fuzz); copy the ones worth keeping to testdata/fuzz.
#
# On a shared machine run it at low priority in the caller's own session (`nice -n 19
# scripts/fuzz.sh`): with the kernel's autogroup scheduling, a process started with setsid
# gets a group of its own and its nice value no longer yields to other sessions' work.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-10}
BINARY_MINUTES=${BINARY_MINUTES:-15}
JOBS=${JOBS:-1}
LOGDIR=${LOGDIR:-fuzz-logs}
mkdir -p "$LOGDIR"
binary='^(internal/hdf5|format/(hdf5|idv|idx|cbf|npy|arrow|parquet|binsparse))$'
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
  pkg=$(dirname "${f#./}")
  for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    min=$MINUTES
    [[ $pkg =~ $binary ]] && min=$BINARY_MINUTES
    echo "$pkg $fn $min"
  done
done | xargs -P "$JOBS" -L 1 sh -c '
  log="$0/$(echo "$1" | tr / _)_$2.log"
  if go test -run "^\$" -fuzz "^$2\$" -fuzztime "${3}m" -parallel 1 "./$1" > "$log" 2>&1; then r=ok; else r=FAIL; fi
  echo "$r $1 $2: $(grep -o "execs: [0-9]*" "$log" | tail -1)"
' "$LOGDIR"
