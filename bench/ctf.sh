#!/usr/bin/env bash
# CTF reading speed, in one run:
#  1. three generated CTF files of $CTF_MB MB each (default 200; MB = 10^6 bytes): "dense"
#     (one sequence per line, 100 dense values of 6 decimals and a one-hot label of 10), "sparse"
#     (1 to 40 index:value pairs per line and a sparse label) and "mix" (sequences of 1 to 8
#     lines with ids: 16 dense values, 1 to 30 sparse pairs, a sparse label);
#  2. each is indexed and parsed by mlfeed (format/ctf/internal/ctfbench: ctf.Open + ReadChunks)
#     with GOMAXPROCS=1 and GOMAXPROCS=2, best of $RUNS runs; prints MB/s by wall time, MB/s per
#     CPU-second (what one core does, whatever else the machine runs) and the 2-core speed-up
#     (goals: 500 MB/s per core, 1.8x on 2 cores);
#     A pure computation on 1 and 2 threads is timed first: the 2-core speed-up cannot exceed
#     what the machine grants two busy threads at that moment.
#  3. /usr/bin/python3 + numpy.loadtxt loads the same values of the dense file (the 110 numeric
#     columns, skipping the |features and |labels tokens); prints its MB/s and mlfeed's speed as
#     a multiple of it, by wall time and per CPU-second (the latter is what to trust on a busy
#     machine, where wall times depend on what else runs).
# Needs Go and /usr/bin/python3; installs python3-numpy with apt-get when it is missing (run as
# root). Files live in a temporary directory removed at exit (about 600 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
CTF_MB=${CTF_MB:-200}
RUNS=${RUNS:-3}
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-ctf.XXXXXX"); trap 'rm -rf "$T"' EXIT

if ! $PY -c 'import numpy' 2>/dev/null; then
  echo "bench/ctf.sh: installing python3-numpy" >&2
  (apt-get install -y python3-numpy >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y python3-numpy >/dev/null; })
fi

go build -o "$T/ctfbench" ./format/ctf/internal/ctfbench
# What two busy threads get from this machine right now: the ceiling for the 2-core figures
# (on a shared or throttled machine it can be well below 2).
SPIN=$(GOMAXPROCS=2 "$T/ctfbench" spin | sed -n 's/.*speedup=\([0-9.]*\).*/\1/p')
echo "== machine check: 2 threads of pure computation run ${SPIN}x as fast as 1"

declare -A INPUTS=(
  [dense]="-input features:dense:100 -input labels:dense:10"
  [sparse]="-input words:sparse:100000 -input labels:sparse:10"
  [mix]="-input x:dense:16 -input w:sparse:100000 -input y:sparse:10"
)
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

echo "== mlfeed CTF read (index + parse), ${CTF_MB} MB files, best of $RUNS"
printf '%-7s %14s %14s %10s %16s %16s\n' kind "1 core MB/s" "2 cores MB/s" speed-up "MB/cpu-s (1)" "MB/cpu-s (2)"
for kind in dense sparse mix; do
  "$T/ctfbench" gen -kind "$kind" -mb "$CTF_MB" -o "$T/$kind.ctf"
  cat "$T/$kind.ctf" > /dev/null
  one=$(GOMAXPROCS=1 "$T/ctfbench" read -n "$RUNS" ${INPUTS[$kind]} "$T/$kind.ctf")
  two=$(GOMAXPROCS=2 "$T/ctfbench" read -n "$RUNS" ${INPUTS[$kind]} "$T/$kind.ctf")
  w1=$(echo "$one" | field wall_MBps); c1=$(echo "$one" | field cpu_MBps)
  w2=$(echo "$two" | field wall_MBps); c2=$(echo "$two" | field cpu_MBps)
  printf '%-7s %14s %14s %9.2fx %16s %16s\n' "$kind" "$w1" "$w2" "$(echo "$w2 / $w1" | bc -l)" "$c1" "$c2"
  if [ "$kind" = dense ]; then D1=$w1; D2=$w2; DC=$c1; fi
  [ "$kind" = dense ] || rm -f "$T/$kind.ctf"
done

echo "== /usr/bin/python3 + numpy.loadtxt, the same values of the dense file"
np=$($PY - "$T/dense.ctf" <<'PYEOF'
import os, sys, time
import numpy as np
path = sys.argv[1]
cols = list(range(1, 101)) + list(range(102, 112))  # skip the |features and |labels tokens
t0, c0 = time.perf_counter(), time.process_time()
a = np.loadtxt(path, dtype=np.float32, usecols=cols, comments=None)
dt, dc = time.perf_counter() - t0, time.process_time() - c0
mb = os.path.getsize(path) / 1e6
print("numpy=%s shape=%s secs=%.3f cpu_s=%.3f MBps=%.1f cpuMBps=%.1f" % (np.__version__, "x".join(map(str, a.shape)), dt, dc, mb / dt, mb / dc))
PYEOF
)
echo "$np"
N=$(echo "$np" | sed -n 's/.* MBps=\([0-9.]*\).*/\1/p')
NC=$(echo "$np" | field cpuMBps)
printf 'mlfeed vs numpy.loadtxt on the dense file: %.1fx (1 core), %.1fx (2 cores) by wall time; %.1fx per CPU-second\n' \
  "$(echo "$D1 / $N" | bc -l)" "$(echo "$D2 / $N" | bc -l)" "$(echo "$DC / $NC" | bc -l)"
