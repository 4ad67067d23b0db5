#!/usr/bin/env bash
# Times `mlfeed stats` against `mlfeed validate` of the same data, both on one thread
# (--threads 1), in CPU seconds (user + system: fair on a machine shared with other work):
# the median of 5 runs each and the ratio stats/validate (the goal: at most 1).
# Data: the MNIST training images and labels (gzip IDX, from ../shared/testdata/mnist), the
# images uncompressed, and, written by numpy, 200000 x 100 float32 as .npy and converted to
# CBF, and the MNIST test set converted to CTF text (float32).
# validate of a memory-mapped binary format (raw IDX, npy, CBF) checks the structure and the
# sizes without touching the values, which stats must read: those ratios are the cost of
# reading every value, shown for scale.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
PY=/usr/bin/python3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
M=$T/mlfeed
gzip -dc "$MN/train-images-idx3-ubyte.gz" > "$T/train-images-idx3-ubyte"
"$M" convert -q --type float32 "$MN/t10k-images-idx3-ubyte.gz" "$MN/t10k-labels-idx1-ubyte.gz" "$T/mnist.ctf" 2>/dev/null
# CTF streams are declared, so that neither command scans the file to infer them first.
sets=("$MN/train-images-idx3-ubyte.gz $MN/train-labels-idx1-ubyte.gz" "$T/train-images-idx3-ubyte"
  "--input features:dense:784 --input labels:dense:1 $T/mnist.ctf")
if $PY -c 'import numpy' 2>/dev/null; then
  $PY -c "import numpy as np; np.save('$T/f.npy', np.random.default_rng(1).normal(0, 1, (200000, 100)).astype(np.float32))"
  "$M" convert -q "$T/f.npy" "$T/f.cbf"
  sets+=("$T/f.npy" "$T/f.cbf")
fi

cpu() { # median CPU seconds of 5 runs of the command
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
  done | sort -g | sed -n 3p
}

printf '%-44s %10s %10s %8s\n' data "validate s" "stats s" ratio
for s in "${sets[@]}"; do
  # validate checks each file on its own; stats reads them as one data set.
  v=$(cpu "$M" validate --threads 1 $s)
  st=$(cpu "$M" stats -q --threads 1 $s)
  name=$(for f in $s; do case $f in --*|*:*) ;; *) basename "$f" ;; esac; done | paste -sd+)
  printf '%-44s %10.2f %10.2f %8s\n' "$name" "$v" "$st" "$(awk -v a="$st" -v b="$v" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
done
