#!/usr/bin/env bash
# Randomized minibatch sweeps over MNIST-sized data (60000 x 784 float32, minibatch 256) with
# `mlfeed batches`, from IDX and from CBF, in one run:
#   - the time of a sweep, as `batches` reports it (median of 3 runs of $SWEEPS sweeps each):
#     the first sweep of a run, which also pays for memory new to the process and for mapping
#     the file, and the steady sweeps after it; with chunks re-read and decoded every sweep
#     (the default) and with --keep-in-memory;
#   - the same bytes copied once plainly (cat from the page cache), and each sweep's time over
#     it (the goal: a sweep in at most 2x the copy);
#   - the in-process rates: `go test -bench Sweep` (the engine vs a sequential memcpy and a
#     bare copy in the shuffled order on one goroutine and on one per CPU, on the same data in
#     memory);
#   - PyTorch's DataLoader (shuffle=True, batch 256) over the same data in memory, when
#     Debian's python3-torch is installed (skipped with a message otherwise), and the engine's
#     rate over it (the goal: at least 10x).
# Needs ../shared/testdata/mnist (skips without it). A shared or busy machine spreads the
# figures by 20% or more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
SWEEPS=5
N=60000
PY=/usr/bin/python3 # Debian's, where python3-torch installs

"$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
"$ML" convert -q "$T/images.idx" "$T/images.cbf"

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# engine FILE [FLAGS]: "first steady" seconds, medians of 3 runs of $SWEEPS randomized sweeps
engine() {
  for _ in 1 2 3; do
    "$ML" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$@" |
      awk '/^sweep times:/ { sub("s,", "", $4); sub("s", "", $7); print $4, $7 }'
  done > "$T/runs"
  echo "$(cut -d' ' -f1 "$T/runs" | median) $(cut -d' ' -f2 "$T/runs" | median)"
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

printf '%-44s %10s %12s %10s\n' "case (60000x784 float32, mb 256)" "seconds" "samples/s" "vs copy"
for f in "$T/images.idx" "$T/images.cbf"; do
  cs=$(copy "$f")
  awk -v w="plain copy of $(basename "$f")" -v c="$cs" -v n=$N \
    'BEGIN { printf "%-44s %10.4f %12.0f\n", w, c, n / c }'
  for keep in "" --keep-in-memory; do
    read -r first steady < <(engine "$f" $keep)
    awk -v w="  batches ${keep:-(chunks re-read)}" -v a="$first" -v b="$steady" -v c="$cs" -v n=$N 'BEGIN {
      printf "%-44s %10.4f %12.0f %9.2fx\n", w ", first sweep", a, n / a, a / c
      printf "%-44s %10.4f %12.0f %9.2fx\n", w ", steady sweep", b, n / b, b / c }'
  done
done

echo
echo "in process, same data in memory (go test -bench Sweep; one sweep per op):"
go test -run XXX -bench 'Sweep$' -benchtime 20x -count 3 ./minibatch/ | awk '/^BenchmarkSweep\// {
  split($1, p, "/"); sub("-[0-9]+$", "", p[2]); t[p[2]] = t[p[2]] " " $3 }
  function med(s,   a, n, i, j, v) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > v + 0; j--) a[j + 1] = a[j]; a[j + 1] = v }
    return a[int((n + 1) / 2)]
  }
  END {
    e = med(t["engine"]); g = med(t["gather"]); gp = med(t["gather-parallel"]); c = med(t["copy"])
    printf "  %-42s %12.0f samples/s\n", "engine (median of 3)", 60000 / (e / 1e9)
    printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "copy in shuffled order, 1 goroutine", 60000 / (g / 1e9), e / g
    printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "the same, 1 goroutine per CPU", 60000 / (gp / 1e9), e / gp
    printf "  %-42s %12.0f samples/s  (engine %.2fx its time)\n", "sequential copy", 60000 / (c / 1e9), e / c
    print 60000 / (e / 1e9) > "'"$T/engine-rate"'"
  }'

echo
if ! $PY -c 'import torch' 2>/dev/null; then
  echo "PyTorch DataLoader: skipped (python3-torch is not installed; apt-get install python3-torch)"
  exit 0
fi
$PY - "$T/images.idx" "$(cat "$T/engine-rate")" <<'PY'
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
