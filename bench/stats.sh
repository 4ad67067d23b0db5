#!/usr/bin/env bash
# Times `mlfeed stats` against `mlfeed validate` of the same data, both on one thread
# (--threads 1), in CPU time (user + system: fair on a machine shared with other work), from
# `perf stat -e task-clock` where perf works, else /usr/bin/time (10 ms steps): the median of
# ROUNDS runs each (default 5), validate and stats taking turns, with the range, and the
# ratio stats/validate of the medians (the goal: at most 1). The last columns are stats'
# speed over the values it describes: CPU ns per value and GB/s of decoded values.
# Data: the MNIST training images and labels (gzip IDX, from ../shared/testdata/mnist), the
# images uncompressed, the MNIST test set converted to CTF text (float32) and to LIBSVM,
# the training set converted to gzip TFRecord (int64 features), and, written by numpy,
# 200000 x 100 float32 as .npy and converted to CBF. MLFEED_BIN names an mlfeed binary to
# time instead of one built from this tree (to compare builds; the data is made with it too).
# validate of a memory-mapped binary format (raw IDX, npy, CBF) checks the structure and the
# sizes without touching the values, which stats must read: there the goal does not apply,
# and stats' own speed is the figure.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
PY=/usr/bin/python3
ROUNDS=${ROUNDS:-5}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
M=${MLFEED_BIN:-$T/mlfeed}
[ -n "${MLFEED_BIN:-}" ] || go build -o "$M" ./cmd/mlfeed
gzip -dc "$MN/train-images-idx3-ubyte.gz" > "$T/train-images-idx3-ubyte"
test10k=("$MN/t10k-images-idx3-ubyte.gz" "$MN/t10k-labels-idx1-ubyte.gz")
"$M" convert -q --type float32 "${test10k[@]}" "$T/mnist.ctf" 2>/dev/null
"$M" convert -q --write-opt dense_features=true "${test10k[@]}" "$T/mnist.svm"
"$M" convert -q "$MN/train-images-idx3-ubyte.gz" "$MN/train-labels-idx1-ubyte.gz" "$T/mnist.tfrecord.gz"
# CTF streams are declared, so that neither command scans the file to infer them first.
sets=("$MN/train-images-idx3-ubyte.gz $MN/train-labels-idx1-ubyte.gz" "$T/train-images-idx3-ubyte"
  "--input features:dense:784 --input labels:dense:1 $T/mnist.ctf" "$T/mnist.svm" "$T/mnist.tfrecord.gz")
if $PY -c 'import numpy' 2>/dev/null; then
  $PY -c "import numpy as np; np.save('$T/f.npy', np.random.default_rng(1).normal(0, 1, (200000, 100)).astype(np.float32))"
  "$M" convert -q "$T/f.npy" "$T/f.cbf"
  sets+=("$T/f.npy" "$T/f.cbf")
fi

perf=
if perf stat -x, -e task-clock true >/dev/null 2>&1; then perf=1; fi
cpu() { # CPU milliseconds of one run of the command
  if [ -n "$perf" ]; then
    perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '$3 ~ /task-clock/ { print $1 }' | tail -1
  else
    /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{ print ($1 + $2) * 1000 }'
  fi
}
med() { sort -g | awk '{ a[NR] = $1 } END { printf "%.0f %.0f-%.0f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR] }'; }
# values VALUES BYTES: the values stats describes and their decoded size, from its JSON.
values() {
  "$M" stats --json --threads 1 "$@" | $PY -c '
import json, sys
size = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
        "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}
r = json.load(sys.stdin)
print(sum(s["values"] for s in r["streams"]), sum(s["values"] * size.get(s["type"], 0) for s in r["streams"]))'
}

echo "CPU ms, median of $ROUNDS (range); $([ -n "$perf" ] && echo "perf stat task-clock" || echo "/usr/bin/time")"
printf '%-24s %14s %14s %6s %9s %7s\n' data validate stats ratio ns/value GB/s
for s in "${sets[@]}"; do
  # validate checks each file on its own; stats reads them as one data set.
  vs=() ss=()
  for _ in $(seq "$ROUNDS"); do
    vs+=("$(cpu "$M" validate --threads 1 $s)")
    ss+=("$(cpu "$M" stats -q --threads 1 $s)")
  done
  read -r v vr <<<"$(printf '%s\n' "${vs[@]}" | med)"
  read -r st sr <<<"$(printf '%s\n' "${ss[@]}" | med)"
  read -r nv nb <<<"$(values $s)"
  name=$(for f in $s; do case $f in --*|*:*) ;; *) basename "$f" ;; esac; done | paste -sd+ |
    sed 's/train-images-idx3-ubyte.gz+train-labels-idx1-ubyte.gz/train images+labels .gz/')
  printf '%-24s %4s %9s %4s %9s %6s %9.2f %7.2f\n' "$name" "$v" "($vr)" "$st" "($sr)" \
    "$(awk -v a="$st" -v b="$v" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
    "$(awk -v t="$st" -v n="$nv" 'BEGIN { print t * 1e6 / n }')" "$(awk -v t="$st" -v n="$nb" 'BEGIN { print n / t / 1e6 }')"
done
