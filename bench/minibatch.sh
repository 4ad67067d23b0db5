#!/usr/bin/env bash
# Randomized minibatch sweeps over MNIST-sized data (60000 x 784 float32, minibatch 256) with
# `mlfeed batches`, from IDX and from CBF, in one run:
#   - the time of a sweep, as `batches` reports it (median of 3 runs of $SWEEPS sweeps each):
#     the first sweep of a run, which also pays for memory new to the process and for mapping
#     the file, and the steady sweeps after it; with chunks re-read every sweep (the default;
#     single IDX and CBF files are packed straight from the mapped file, minibatch.RawSampler)
#     and with --keep-in-memory;
#   - the same bytes copied once plainly (cat from the page cache), and each sweep's time over
#     it (the goal: the first sweep in at most 3x the copy);
#   - the CPU time (user + system) of $CPU_SWEEPS randomized sweeps against as many in file
#     order (--no-randomize), median of 5, the runs of both orders (and both trees) taking
#     turns, and of decoding every chunk once in a random order against file order
#     (bench/chunkorder; IDX, CBF and CTF), median of 7 (the goal: at most 1.2x);
#   - the in-process rates: `go test -bench Sweep` (the engine vs a sequential memcpy and a
#     bare copy in the shuffled order on one goroutine and on one per CPU, on the same data in
#     memory);
#   - PyTorch's DataLoader (shuffle=True, batch 256) over the same data in memory, when
#     Debian's python3-torch is installed (skipped with a message otherwise), and the engine's
#     rate over it (the goal: at least 10x).
#
# bench/minibatch.sh BASE (a git revision, e.g. main) builds BASE too and measures both in the
# same run, case by case, printing BASE's figures beside this tree's and their ratio (this
# tree's time / BASE's: below 1 is faster).
#
# Needs ../shared/testdata/mnist (skips without it). A shared or busy machine spreads the
# figures by 20% or more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
BASE=${1:-}
T=$(mktemp -d)
cleanup() {
  [ -z "$BASE" ] || git worktree remove --force "$T/base" 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
go build -o "$T/chunkorder" ./bench/chunkorder
go test -c -o "$T/minibatch.test" ./minibatch
TREES=(new)
if [ -n "$BASE" ]; then
  git worktree add -q --detach "$T/base" "$BASE"
  # chunkorder uses only format.Open and ReadChunk: the same program builds in the base tree.
  mkdir -p "$T/base/bench/chunkorder" && cp bench/chunkorder/main.go "$T/base/bench/chunkorder/"
  (cd "$T/base" && go build -o "$T/mlfeed.base" ./cmd/mlfeed && go build -o "$T/chunkorder.base" ./bench/chunkorder &&
    go test -c -o "$T/minibatch.test.base" ./minibatch)
  TREES=(new base)
fi
bin() { if [ "$1" = base ]; then echo "$T/mlfeed.base"; else echo "$T/mlfeed"; fi; }
SWEEPS=5
CPU_SWEEPS=40
N=60000
PY=/usr/bin/python3 # Debian's, where python3-torch installs

"$T/mlfeed" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
"$T/mlfeed" convert -q "$T/images.idx" "$T/images.cbf"
"$T/mlfeed" convert -q "$MN/train-images-idx3-ubyte.gz" "$MN/train-labels-idx1-ubyte.gz" "$T/mnist.ctf"

# engine TREE FILE [FLAGS]: "first steady" seconds, medians of 3 runs of $SWEEPS randomized sweeps
engine() {
  local b
  b=$(bin "$1")
  shift
  sweeps 3 "$b" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$@"
}

# cpu FILE: for each tree, "TREE randomized in-order": median CPU seconds (user + system) of
# 5 runs each of $CPU_SWEEPS sweeps, the trees and orders taking turns, so that a change in
# the machine's load between them weighs on all
cpu() {
  local tree fl order
  rm -f "$T"/cpu.*
  for _ in 1 2 3 4 5; do
    for tree in "${TREES[@]}"; do
      for order in randomized in-order; do
        fl=""
        [ "$order" = randomized ] || fl=--no-randomize
        # shellcheck disable=SC2086 # $fl is one flag or none
        /usr/bin/time -f '%U %S' -o "$T/time" "$(bin "$tree")" batches --mb-size 256 --sweeps "$CPU_SWEEPS" --seed 1 $fl "$1" > /dev/null
        awk '{ print $1 + $2 }' "$T/time" >> "$T/cpu.$tree.$order"
      done
    done
  done
  for tree in "${TREES[@]}"; do
    echo "$tree $(median < "$T/cpu.$tree.randomized") $(median < "$T/cpu.$tree.in-order")"
  done
}

# copy FILE: median seconds of 5 runs of cat-ing the file once from the page cache
copy() {
  cat "$1" > /dev/null
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N)
    cat "$1" > /dev/null
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'
  done | median
}

# row LABEL NEW [BASE]: seconds, samples/s, vs copy, and BASE's seconds with the ratio
row() {
  awk -v w="$1" -v a="$2" -v b="${3:-}" -v c="$cs" -v n=$N 'BEGIN {
    printf "%-44s %10.4f %12.0f %9.2fx", w, a, n / a, a / c
    if (b != "") printf " %10.4f %7.2fx", b, a / b
    printf "\n" }'
}

hdr=$(printf '%-44s %10s %12s %10s' "case (60000x784 float32, mb 256)" "seconds" "samples/s" "vs copy")
[ -z "$BASE" ] || hdr=$(printf '%s %10s %8s' "$hdr" "$BASE" "ratio")
echo "$hdr"
for f in "$T/images.idx" "$T/images.cbf"; do
  cs=$(copy "$f")
  awk -v w="plain copy of $(basename "$f")" -v c="$cs" -v n=$N \
    'BEGIN { printf "%-44s %10.4f %12.0f\n", w, c, n / c }'
  for keep in "" --keep-in-memory; do
    read -r first steady < <(engine new "$f" $keep)
    bfirst="" bsteady=""
    [ -z "$BASE" ] || read -r bfirst bsteady < <(engine base "$f" $keep)
    row "  batches ${keep:-(chunks re-read)}, first sweep" "$first" "$bfirst"
    row "  batches ${keep:-(chunks re-read)}, steady sweep" "$steady" "$bsteady"
  done
done

echo
echo "CPU seconds (user + system) of $CPU_SWEEPS sweeps, randomized vs file order (taking turns, median of 5):"
for f in "$T/images.idx" "$T/images.cbf"; do
  while read -r tree r o; do
    awk -v w="  $(basename "$f") ($tree)" -v r="$r" -v o="$o" \
      'BEGIN { printf "%-44s randomized %6.3f  in order %6.3f  ratio %5.2fx\n", w, r, o, r / o }'
  done < <(cpu "$f")
done

echo
echo "CPU seconds of decoding every chunk once, random order vs file order (bench/chunkorder, median of 7):"
for f in "$T/images.idx" "$T/images.cbf" "$T/mnist.ctf"; do
  for tree in "${TREES[@]}"; do
    co=$T/chunkorder
    [ "$tree" = new ] || co=$T/chunkorder.base
    printf '  %-42s %s\n' "$(basename "$f") ($tree)" "$("$co" -runs 7 "$f")"
  done
done

echo
echo "in process, same data in memory (go test -bench Sweep; one sweep per op, median of 3):"
for tree in "${TREES[@]}"; do
  tb=$T/minibatch.test
  [ "$tree" = new ] || tb=$T/minibatch.test.base
  (cd minibatch && "$tb" -test.run XXX -test.bench 'Sweep$' -test.benchtime 20x -test.count 3) | awk -v tree="$tree" -v out="$T/engine-rate.$tree" '/^BenchmarkSweep\// {
    split($1, p, "/"); sub("-[0-9]+$", "", p[2]); t[p[2]] = t[p[2]] " " $3 }
    function med(s,   a, n, i, j, v) {
      n = split(s, a, " ")
      for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > v + 0; j--) a[j + 1] = a[j]; a[j + 1] = v }
      return a[int((n + 1) / 2)]
    }
    END {
      e = med(t["engine"]); g = med(t["gather"]); gp = med(t["gather-parallel"]); c = med(t["copy"])
      printf "  %-42s %12.0f samples/s\n", "engine (" tree ")", 60000 / (e / 1e9)
      printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "copy in shuffled order, 1 goroutine", 60000 / (g / 1e9), e / g
      printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "the same, 1 goroutine per CPU", 60000 / (gp / 1e9), e / gp
      printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "sequential copy", 60000 / (c / 1e9), e / c
      print 60000 / (e / 1e9) > out
    }'
done

echo
if ! $PY -c 'import torch' 2>/dev/null; then
  echo "PyTorch DataLoader: skipped (python3-torch is not installed; apt-get install python3-torch)"
  exit 0
fi
$PY - "$T/images.idx" "$(cat "$T/engine-rate.new")" <<'PY'
import sys, time, statistics
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
name, engine = sys.argv[1], float(sys.argv[2])
raw = open(name, 'rb').read()
x = torch.from_numpy(np.frombuffer(raw, dtype='>f4', offset=16).astype(np.float32).reshape(60000, 784))
loader = DataLoader(TensorDataset(x), batch_size=256, shuffle=True, num_workers=0)
times = []
for _ in range(3):
    t = time.perf_counter()
    n = 0
    for (b,) in loader:
        n += b.shape[0]
    times.append(time.perf_counter() - t)
rate = n / statistics.median(times)
print(f"{'PyTorch DataLoader (in memory)':44s} {rate:12.0f} samples/s; the engine in process: {engine / rate:.1f}x")
PY
