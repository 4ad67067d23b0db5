#!/usr/bin/env bash
# A full read of Parquet files by mlfeed (bench/pqread: every row group decoded into chunks)
# and by DuckDB (SELECT * over read_parquet, through @duckdb/node-api), in one run, median of 5:
#   - MNIST's training images as float32 vectors with labels, written by mlfeed (zstd);
#   - a 2M-row table of eleven scalar columns (integers, floats, text, a timestamp), written by
#     DuckDB (zstd).
# mlfeed decodes on one goroutine and on two (row groups in parallel, as the minibatch engine
# reads chunks); DuckDB runs on its default threads (all cores) and on one. The goal: mlfeed's
# read within 2x of DuckDB's SELECT *. Needs node and the peers of internal/arrowcheck
# (scripts/setup.sh installs them) and ../shared/testdata/mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
[ -d internal/arrowcheck/node_modules/@duckdb/node-api ] || { echo "skipped: DuckDB for node is not installed (scripts/setup.sh)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
go build -o "$T/pqread" ./bench/pqread
ML=$T/mlfeed
CHECK=internal/arrowcheck/check.mjs

"$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$MN/train-labels-idx1-ubyte.gz" "$T/mnist.parquet" --type float32
node "$CHECK" table "$T/table.parquet" 2000000

duck() { for _ in 1 2 3 4 5; do node "$CHECK" scan "$1" ${2:-} | sed 's/.*"ms":\([0-9.]*\).*/\1/'; done | median; }

printf '%-46s %10s %16s\n' "full read" "seconds" "mlfeed / DuckDB"
for f in mnist table; do
  p=$T/$f.parquet
  d=$(awk -v ms="$(duck "$p")" 'BEGIN { print ms / 1000 }')
  d1=$(awk -v ms="$(duck "$p" 1)" 'BEGIN { print ms / 1000 }')
  m1=$("$T/pqread" -runs 5 "$p" | cut -d' ' -f1)
  m2=$("$T/pqread" -runs 5 -threads 2 "$p" | cut -d' ' -f1)
  size=$(du -m "$p" | cut -f1)
  awk -v f="$f ($size MB)" -v d="$d" -v d1="$d1" -v m1="$m1" -v m2="$m2" 'BEGIN {
    printf "%-46s %10.4f\n", f ": DuckDB SELECT *, default threads", d
    printf "%-46s %10.4f\n", f ": DuckDB SELECT *, 1 thread", d1
    printf "%-46s %10.4f %15.2fx\n", f ": mlfeed, 1 goroutine", m1, m1 / d
    printf "%-46s %10.4f %15.2fx\n", f ": mlfeed, 2 goroutines", m2, m2 / d
    printf "%-46s %10s %15.2fx\n", f ": 1 vs 1 (mlfeed 1 goroutine / DuckDB 1 thread)", "", m1 / d1 }'
done

echo
echo "in process (go test -bench, 10000 x 784 float32 + uint8 labels):"
go test -run XXX -bench . -benchtime 5x ./format/parquet/ | awk '/^Benchmark/ { printf "  %-28s %12s MB/s\n", $1, $5 }'
