#!/usr/bin/env bash
# Converts a sharded data set (16 CTF shards of generated digits) to CBF shards with one core
# (GOMAXPROCS=1) and with every core, in one run, and prints the speed-up and its ratio to the
# number of cores (the goal: at least 0.8). Each conversion is timed 3 times; the median counts.
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
cores=$(nproc)
"$ML" demo -n "${RECORDS:-32000}" --dir "$T/demo" >/dev/null
"$ML" convert --type float32 --to ctf --shards 16 "$T/demo/demo-images-idx3-ubyte" "$T/demo/demo-labels-idx1-ubyte" "$T/in" >/dev/null
decl="--input features:dense:784 --input labels:dense:1"
size=$(du -sb "$T/in" | cut -f1)

median() { sort -n | sed -n 2p; }
run() { # $1: GOMAXPROCS or "" for all
  for i in 1 2 3; do
    rm -rf "$T/out"
    s=$(date +%s.%N)
    if [ -n "$1" ]; then GOMAXPROCS=$1 "$ML" convert -q $decl --to cbf "$T/in" "$T/out"; else "$ML" convert -q $decl --to cbf "$T/in" "$T/out"; fi
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median
}
one=$(run 1)
all=$(run "")
python3 - "$one" "$all" "$cores" "$size" <<'PY'
import sys
one, all_, cores, size = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sp = one / all_
print(f"sharded CTF -> CBF, 16 shards, {size/1e6:.0f} MB of text:")
print(f"  one core   {one:6.2f} s  ({size/one/1e6:6.1f} MB/s)")
print(f"  {cores} cores    {all_:6.2f} s  ({size/all_/1e6:6.1f} MB/s)")
print(f"  speed-up {sp:.2f}x on {cores} cores = {sp/cores:.2f} x cores (goal >= 0.8)")
PY
