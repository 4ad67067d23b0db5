#!/usr/bin/env bash
# bench/idv.sh: write, then read, a generated IDV of at least 500 MB (a float32 vector column,
# a key column and a text column, DEFLATE), and compare mlfeed's read throughput with inflating
# the same blocks once with /usr/bin/python3's zlib (single-threaded C inflate), in one run.
#
# Usage: bench/idv.sh [DIR]   (DIR holds the generated file; default: a temporary directory)
# Environment: MLFEED_IDV_BENCH_MB (default 520) sets the file's minimum size in MB.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "bench/idv.sh: $PY is missing (apt-get install python3)" >&2
	exit 1
fi
dir=${1:-$(mktemp -d)}
file="$dir/bench.idv"
[ -n "${1:-}" ] || trap 'rm -rf "$dir"' EXIT

# 1. mlfeed writes the file (if absent) and reads every chunk with all cores.
out=$(MLFEED_IDV_BENCH="$file" go test ./format/idv -run '^$' -bench '^BenchmarkLargeFile$' -benchtime 1x -count 1 -timeout 30m)
echo "$out" | grep -E '^idv-(write|read|read-sequential):' || { echo "$out" >&2; exit 1; }
read_line=$(echo "$out" | grep '^idv-read:')
go_sec=$(echo "$read_line" | sed -E 's/.*seconds=([0-9.]+).*/\1/')

# 2. Python's zlib inflates the same blocks (found through the file's own lookup tables).
py_out=$("$PY" - "$file" <<'PYEOF'
import struct, sys, time, zlib

path = sys.argv[1]
with open(path, 'rb') as f:
    data = f.read()
sig, ver, compat, toc, tail, rows, ncols = struct.unpack_from('<QQQqqqi', data, 0)
assert sig == 0x00425644004C4D43, 'not an IDV file'

def leb(p):
    v = shift = 0
    while True:
        b = data[p]; p += 1
        v |= (b & 0x7f) << shift; shift += 7
        if b < 0x80:
            return v, p

def string(p):
    n, p = leb(p)
    return data[p:p + n], p + n

p = toc
blocks = []
for _ in range(ncols):
    _, p = string(p)              # column name
    _, p = string(p)              # codec name
    plen, p = leb(p); p += plen   # codec parameters
    comp = data[p]; p += 1
    rpb, p = leb(p)
    lookup, meta = struct.unpack_from('<qq', data, p); p += 16
    nblocks = (rows - 1) // rpb + 1 if rows else 0
    for b in range(nblocks):
        off, stored, inflated = struct.unpack_from('<qii', data, lookup + 16 * b)
        blocks.append((comp, off, stored, inflated))

total_in = total_out = 0
c0 = time.process_time()
t0 = time.perf_counter()
for comp, off, stored, inflated in blocks:
    chunk = data[off:off + stored]
    if comp == 1:
        out = zlib.decompress(chunk, -15, inflated)
    else:
        out = chunk
    total_in += stored
    total_out += len(out)
sec = time.perf_counter() - t0
cpu = time.process_time() - c0
print(f"python-zlib: blocks={len(blocks)} stored={total_in} inflated={total_out} cpu={cpu:.3f} seconds={sec:.3f}")
PYEOF
)
echo "$py_out"
py_sec=$(echo "$py_out" | sed -E 's/.*seconds=([0-9.]+).*/\1/')
py_cpu=$(echo "$py_out" | sed -E 's/.*cpu=([0-9.]+).*/\1/')
go_cpu=$(echo "$read_line" | sed -E 's/.*cpu=([0-9.]+).*/\1/')

bytes=$(echo "$read_line" | sed -E 's/.*bytes=([0-9]+) .*/\1/')
inflated=$(echo "$read_line" | sed -E 's/.*inflated=([0-9]+) .*/\1/')
awk -v b="$bytes" -v i="$inflated" -v g="$go_sec" -v p="$py_sec" -v gc="$go_cpu" -v pc="$py_cpu" -v n="$(nproc)" 'BEGIN {
	printf "mlfeed read (inflate + decode, %d cores): %.1f MB/s of file, %.1f MB/s inflated (%.1f CPU-seconds)\n", n, b/g/1e6, i/g/1e6, gc
	printf "python zlib inflate only (1 core):        %.1f MB/s of file, %.1f MB/s inflated (%.1f CPU-seconds)\n", b/p/1e6, i/p/1e6, pc
	printf "ratio mlfeed / python zlib, wall clock: %.2fx\n", p/g
	printf "ratio per CPU-second (mlfeed decodes too): %.2fx\n", pc/gc
	system("uptime")
}'
