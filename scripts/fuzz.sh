#!/usr/bin/env bash
# The fuzz campaign, run in slices over many sessions, recorded in testdata/fuzz-campaign.md.
#
# Every fuzz target of the module is to be fuzzed 30 minutes in all, the readers of untrusted
# binary formats and the C ABI's read path 60 (issue 28's campaign; the log's totals count
# toward these).
# Each run of this script fuzzes the targets that have not reached their minutes yet, for at
# most SLICE minutes each (default 15: what a session that ends without warning loses), the C
# ABI and the binary readers first, JOBS at a time (default 1; each runs one fuzzing worker),
# and appends one row per slice to the log: the minutes fuzzed, Go's executions, the new
# corpus entries, and the findings. The log's totals, rewritten after every slice, say which
# targets have reached their minutes.
#
#   nice -n 19 scripts/fuzz.sh                  # the next slices of every unfinished target
#   UNTIL=19:00 nice -n 19 scripts/fuzz.sh      # ... starting none that would end after 19:00 UTC
#                                               #     (the next 19:00: tomorrow's if it is past)
#   nice -n 19 scripts/fuzz.sh 'capi|hdf5'      # only the targets whose "package Fuzz..." matches
#   scripts/fuzz.sh --totals                    # rewrite the log's totals, fuzz nothing
#
# A finding (a crasher, kept by Go under the package's testdata/fuzz, or a hang, which the C
# ABI's target turns into one) fails `go test` until it is fixed: fix it, keep the input
# there as the regression test, and the next slice goes on. New corpus entries stay in Go's
# cache ($(go env GOCACHE)/fuzz), where the next slice on the same machine starts from them;
# copy the ones worth keeping to testdata/fuzz. Each slice's output goes to LOGDIR (default
# fuzz-logs/, not checked in).
#
# On a shared machine run it at low priority in the caller's own session (`nice -n 19
# scripts/fuzz.sh`): with the kernel's autogroup scheduling, a process started with setsid
# gets a group of its own and its nice value no longer yields to other sessions' work.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=30
BINARY_MINUTES=60
SLICE=${SLICE:-15}
JOBS=${JOBS:-1}
LOGDIR=${LOGDIR:-fuzz-logs}
LOG=${LOG:-testdata/fuzz-campaign.md}
# How long Go minimizes a new input (its default, 60 s, stalls the count of executions on
# large seeds; the kept inputs need not be minimal).
MINIMIZE=${MINIMIZE:-10s}
filter=.
totals_only=
case "${1:-}" in
--totals) totals_only=1 ;;
"") ;;
*) filter=$1 ;;
esac
mkdir -p "$LOGDIR"
export GOFLAGS=${GOFLAGS:--pgo=off}
binary='^(capi|internal/hdf5|format/(hdf5|idv|idx|cbf|npy|arrow|parquet|binsparse|tfrecord|mds|webdataset))$'

# targets prints "package target goal-minutes" for every fuzz target, the C ABI's first, then
# the binary readers', then the rest.
targets() {
  grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
    pkg=$(dirname "${f#./}")
    for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
      if [[ $pkg == capi ]]; then
        echo "0 $pkg $fn $BINARY_MINUTES"
      elif [[ $pkg =~ $binary ]]; then
        echo "1 $pkg $fn $BINARY_MINUTES"
      else
        echo "2 $pkg $fn $MINUTES"
      fi
    done
  done | sort -k1,1n -k2,2 -k3,3 | cut -d' ' -f2-
}

# runs prints the log's rows of slices as "package target minutes execs new findings".
runs() {
  [ -f "$LOG" ] || return 0
  awk -F'|' '/^## Slices/ {on = 1; next} on && /^\| 20/ {
    gsub(/ /, "", $4); gsub(/ /, "", $5); gsub(/ /, "", $6); gsub(/ /, "", $7); gsub(/ /, "", $8); gsub(/ /, "", $9)
    n = ($9 == "none" || $9 == "") ? 0 : split($9, x, ",")
    print $4, $5, $6, $7, $8, n}' "$LOG"
}

# done_minutes prints the minutes target $2 of package $1 has been fuzzed so far.
done_minutes() {
  runs | awk -v p="$1" -v t="$2" '$1 == p && $2 == t {m += $3} END {printf "%.1f\n", m + 0}'
}

# render rewrites the log: the explanation, the totals per target, then the slices as they are.
render() {
  local tmp="$LOG.tmp" slices
  slices=$( [ -f "$LOG" ] && awk '/^## Slices/ {on = 1; next} on && /^\| 20/' "$LOG" || true)
  {
    cat <<'EOF'
# Fuzz campaign

Issue 28's campaign: every fuzz target fuzzed 30 minutes in all, the readers of untrusted
binary formats and the C ABI's read path 60, in slices over several sessions on a machine
shared with other work (2 cores, at `nice -n 19`: executions per minute vary with the load).
`scripts/fuzz.sh` runs the next slices and keeps this file: it rewrites the totals and
appends a row per slice (its date is the slice's end, its commit the code fuzzed, with `+` when
the tree differed from it). Minutes are Go's fuzzing time (`elapsed`); executions and new corpus
entries are Go's counts (new entries live in the fuzzing machine's Go cache); a finding is a
failing input that Go kept under the package's `testdata/fuzz` (named in the row), fixed with
it kept there as the regression test. A target is `done` when it has its minutes.

## Totals

| package | target | goal (min) | fuzzed (min) | executions | new corpus | findings | status |
|---|---|---:|---:|---:|---:|---:|---|
EOF
    local all
    all=$(runs)
    targets | while read -r pkg fn goal; do
      awk -v p="$pkg" -v t="$fn" -v g="$goal" '$1 == p && $2 == t {m += $3; e += $4; c += $5; f += $6}
        END {st = (m + 0 >= g) ? "done" : sprintf("%.0f min left", g - m)
          printf "| %s | %s | %d | %.1f | %d | %d | %d | %s |\n", p, t, g, m, e, c, f, st}' <<<"$all"
    done
    printf '\n## Slices\n\n'
    echo '| date (UTC) | commit | package | target | minutes | executions | new corpus | findings | note |'
    echo '|---|---|---|---|---:|---:|---:|---|---|'
    if [ -n "$slices" ]; then echo "$slices"; fi
  } >"$tmp"
  mv "$tmp" "$LOG"
}

# minutes_of converts Go's last "elapsed: 1h2m3s" in log $1 into minutes.
minutes_of() {
  grep -o 'elapsed: [0-9hms.]*' "$1" | tail -1 | sed 's/elapsed: //' |
    awk '{s = 0; v = $0
      if (match(v, /[0-9.]+h/)) s += 3600 * substr(v, RSTART, RLENGTH - 1)
      if (match(v, /[0-9.]+m/)) s += 60 * substr(v, RSTART, RLENGTH - 1)
      if (match(v, /[0-9.]+s/)) s += substr(v, RSTART, RLENGTH - 1)
      printf "%.1f\n", s / 60}'
}

# slice fuzzes target $2 of package $1 for $3 minutes and appends its row to the log.
slice() {
  local pkg=$1 fn=$2 min=$3 log rc=0 note findings execs newc mins commit
  log="$LOGDIR/$(echo "$pkg" | tr / _)_${fn}_$(date -u +%Y%m%dT%H%M%S).log"
  # The code fuzzed: the commit the slice starts from, "+" when the tree differs from it.
  commit=$(git rev-parse --short HEAD)
  git diff --quiet HEAD -- . ":(exclude)$LOG" 2>/dev/null || commit+=+
  go test -run '^$' -fuzz "^$fn\$" -fuzztime "${min}m" -fuzzminimizetime "$MINIMIZE" -parallel 1 "./$pkg" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | sed 's/[^0-9]//g')
  newc=$(grep -o 'new interesting: [0-9]*' "$log" | tail -1 | sed 's/[^0-9]//g')
  mins=$(minutes_of "$log")
  findings=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | sed "s|^|$pkg/|" | paste -sd, -)
  if [ "$rc" = 0 ]; then
    note=ok
  elif [ -n "$findings" ]; then
    note="finding: $(grep -m1 -E 'panic:|--- FAIL|    [a-z_]+_test.go:[0-9]+:' "$log" | sed 's/^ *//; s/|/\\|/g' | cut -c1-100)"
  elif grep -q 'context deadline exceeded' "$log"; then
    note="ok (the time ran out mid-input)"
  else
    note="failed: $(grep -m1 -E 'FAIL|error|cannot' "$log" | sed 's/|/\\|/g' | cut -c1-100); see the slice's log"
    mins=0 # a build or setup failure fuzzed nothing
  fi
  (
    flock 9
    [ -f "$LOG" ] || render
    # The slices section is last: a row appended is a row in it.
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(date -u '+%Y-%m-%d %H:%M')" \
      "$commit" "$pkg" "$fn" "${mins:-0}" "${execs:-0}" "${newc:-0}" \
      "${findings:-none}" "$note" >>"$LOG"
    render
  ) 9>"$LOGDIR/.lock"
  echo "$note $pkg $fn: $mins min, ${execs:-0} execs, ${newc:-0} new, findings: ${findings:-none}"
}

if [ -n "$totals_only" ]; then
  render
  exit 0
fi
until_s=
if [ -n "${UNTIL:-}" ]; then
  until_s=$(date -u -d "$UNTIL" +%s)
  # A time of day already past means that time tomorrow (a session that runs over midnight).
  if [ "$until_s" -le "$(date -u +%s)" ] && [[ $UNTIL =~ ^[0-9]{1,2}:[0-9]{2}$ ]]; then
    until_s=$(date -u -d "tomorrow $UNTIL" +%s)
  fi
fi
targets | grep -E -- "$filter" | {
while read -r pkg fn goal; do
  left=$(awk -v g="$goal" -v d="$(done_minutes "$pkg" "$fn")" 'BEGIN {l = g - d; print (l > 0) ? int(l + 0.999) : 0}')
  [ "$left" -gt 0 ] || continue
  min=$((left < SLICE ? left : SLICE))
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  if [ -n "$until_s" ]; then # the time left once a slot is free
    room=$(((until_s - $(date +%s)) / 60 - 2)) # two minutes to build
    [ "$room" -ge 1 ] || break
    min=$((min < room ? min : room))
  fi
  slice "$pkg" "$fn" "$min" &
done
wait
}
