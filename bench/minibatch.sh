#!/usr/bin/env bash
# Randomized minibatch sweeps over MNIST-sized data (60000 x 784 float32, minibatch 256) with
# `mlfeed batches`, from IDX and from CBF, in one run:
#   - samples/s of the engine (read, randomize, pack; as `batches` reports it), median of 3
#     runs of 3 sweeps each, with chunks re-read every sweep (the default) and with
#     --keep-in-memory;
#   - the same bytes copied plainly (cat from the page cache, as many times as the sweeps read
#     them), and the ratio engine time / copy time;
#   - the in-process floor: `go test -bench Sweep` (engine vs a sequential memcpy vs a copy in
#     the shuffled order, on the same data in memory);
#   - PyTorch's DataLoader (shuffle=True, batch 256) over the same data in memory, when
#     Debian's python3-torch is installed (skipped with a message otherwise).
# Needs ../shared/testdata/mnist (skips without it).
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
SWEEPS=3
N=60000
PY=/usr/bin/python3 # Debian's, where python3-torch installs

"$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
"$ML" convert -q "$T/images.idx" "$T/images.cbf"

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# engine FILE [FLAGS]: median seconds of 3 runs of $SWEEPS randomized sweeps
engine() {
  for _ in 1 2 3; do
    "$ML" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$@" |
      awk '/samples\/s/ { for (i = 1; i <= NF; i++) if ($i == "in") { sub("s:", "", $(i+1)); print $(i+1) } }'
  done | median
}

# copy FILE: median seconds of 3 runs of cat-ing the file $SWEEPS times from the page cache
copy() {
  cat "$1" > /dev/null
  for _ in 1 2 3; do
    s=$(date +%s.%N)
    for _ in $(seq "$SWEEPS"); do cat "$1" > /dev/null; done
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'
  done | median
}

printf '%-34s %14s %10s\n' "case (60000x784 float32, mb 256)" "samples/s" "vs copy"
for f in "$T/images.idx" "$T/images.cbf"; do
  cs=$(copy "$f")
  awk -v w="plain copy of $(basename "$f")" -v c="$cs" -v n=$((N * SWEEPS)) \
    'BEGIN { printf "%-34s %14.0f\n", w, n / c }'
  for keep in "" --keep-in-memory; do
    es=$(engine "$f" $keep)
    awk -v w="  mlfeed batches ${keep:-(chunks re-read)}" -v e="$es" -v c="$cs" -v n=$((N * SWEEPS)) \
      'BEGIN { printf "%-34s %14.0f %9.2fx\n", w, n / e, e / c }'
  done
done

echo
echo "in process, same data in memory (go test -bench Sweep; one sweep per op):"
go test -run XXX -bench 'Sweep' -benchtime 10x ./minibatch/ | awk '/^BenchmarkSweep/ {
  split($1, p, "/"); sub("-[0-9]+$", "", p[2]); t[p[2]] = $3 }
  END {
    printf "  %-30s %14.0f samples/s\n", "engine", 60000 / (t["engine"] / 1e9)
    printf "  %-30s %14.0f samples/s  (engine %.2fx its time)\n", "copy in shuffled order", 60000 / (t["gather"] / 1e9), t["engine"] / t["gather"]
    printf "  %-30s %14.0f samples/s  (engine %.2fx its time)\n", "sequential copy", 60000 / (t["copy"] / 1e9), t["engine"] / t["copy"]
  }'

echo
if ! $PY -c 'import torch' 2>/dev/null; then
  echo "PyTorch DataLoader: skipped (python3-torch is not installed; apt-get install python3-torch)"
  exit 0
fi
$PY - "$T/images.idx" "$SWEEPS" <<'PY'
import sys, time, statistics
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
name, sweeps = sys.argv[1], int(sys.argv[2])
raw = open(name, 'rb').read()
x = torch.from_numpy(np.frombuffer(raw, dtype='>f4', offset=16).astype(np.float32).reshape(60000, 784))
loader = DataLoader(TensorDataset(x), batch_size=256, shuffle=True, num_workers=0)
times = []
for _ in range(3):
    t = time.perf_counter()
    n = 0
    for _ in range(sweeps):
        for (b,) in loader:
            n += b.shape[0]
    times.append(time.perf_counter() - t)
print(f"{'PyTorch DataLoader (in memory)':34s} {n / statistics.median(times):14.0f}")
PY
