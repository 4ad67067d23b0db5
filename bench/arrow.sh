#!/usr/bin/env bash
# Randomized minibatch sweeps (`mlfeed batches`, minibatch 256, 10 sweeps, median of 5 runs)
# over MNIST's training images as an Arrow IPC file and as IDX, in one run, for uint8 pixels and
# for float32 ones: the first sweep (which also maps the file) and the steady sweeps after it,
# and the ratio Arrow / IDX (the goal: at most 1.2). Then the in-process read rates
# (go test -bench). Needs ../shared/testdata/mnist (skips without it). A shared or busy machine
# spreads the figures by 20% or more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
SWEEPS=10
N=60000

# engine FILE: "first steady" seconds, medians of 5 runs of $SWEEPS randomized sweeps
engine() { sweeps 5 "$ML" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$1"; }

printf '%-40s %10s %12s %14s\n' "case (60000 x 28x28, mb 256)" "seconds" "samples/s" "arrow / idx"
for type in uint8 float32; do
  "$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type "$type"
  "$ML" convert -q "$T/images.idx" "$T/images.arrow"
  sync # both files clean in the page cache: a page still being written back faults slowly
  read -r xf xs < <(engine "$T/images.idx")
  read -r af as < <(engine "$T/images.arrow")
  awk -v t="$type" -v xf="$xf" -v xs="$xs" -v af="$af" -v as="$as" -v n=$N 'BEGIN {
    printf "%-40s %10.4f %12.0f\n", t " IDX, first sweep", xf, n / xf
    printf "%-40s %10.4f %12.0f %13.2fx\n", t " Arrow, first sweep", af, n / af, af / xf
    printf "%-40s %10.4f %12.0f\n", t " IDX, steady sweep", xs, n / xs
    printf "%-40s %10.4f %12.0f %13.2fx\n", t " Arrow, steady sweep", as, n / as, as / xs }'
done

echo
echo "in process (go test -bench, 10000 x 784 float32 + uint8 labels):"
go test -run XXX -bench . -benchtime 10x ./format/arrow/ | awk '/^Benchmark/ { printf "  %-28s %12s MB/s\n", $1, $5 }'
