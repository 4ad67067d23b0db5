#!/usr/bin/env bash
# bench/idv.sh: write, then read, a generated IDV of at least 500 MB (a 128-slot float32 vector
# column, a key column and a text column, DEFLATE), and compare mlfeed's read throughput with
# inflating the same blocks once with /usr/bin/python3's zlib (single-threaded C inflate), in
# one run. Both sides read the file into memory first and time only the decoding. The two sides
# take turns, ROUNDS times each, and the fastest round of each counts (the machine may be
# shared with other work).
#
# Usage: bench/idv.sh [DIR]   (DIR keeps the generated file; default: a temporary directory)
# Environment: MLFEED_IDV_BENCH_MB (default 520): the file's minimum size in MB;
#              MLFEED_IDV_BENCH_ROUNDS (default 3): rounds per side.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "bench/idv.sh: $PY is missing (apt-get install python3)" >&2
	exit 1
fi
rounds=${MLFEED_IDV_BENCH_ROUNDS:-3}
dir=${1:-$(mktemp -d)}
[ -n "${1:-}" ] || trap 'rm -rf "$dir"' EXIT
file="$dir/bench.idv"
bin="$dir/idv.test"
go test -c -o "$bin" ./format/idv

# mlfeed: write the file if absent, then read every chunk with all cores (one round per run).
mlfeed_round() {
	MLFEED_IDV_BENCH="$file" MLFEED_IDV_BENCH_ROUNDS=1 "$bin" -test.run '^$' \
		-test.bench '^BenchmarkLargeFile$' -test.benchtime 1x -test.count 1 -test.timeout 30m |
		grep -E '^idv-(write|read|read-sequential):'
}

# Python: inflate the same blocks, found through the file's own lookup tables.
python_round() {
	"$PY" - "$file" <<'PYEOF'
import struct, sys, time, zlib

with open(sys.argv[1], 'rb') as f:
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

def skip_string(p):
    n, p = leb(p)
    return p + n

p = toc
blocks = []
for _ in range(ncols):
    p = skip_string(p)            # column name
    p = skip_string(p)            # codec name
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
    out = zlib.decompress(chunk, -15, inflated) if comp == 1 else chunk
    total_in += stored
    total_out += len(out)
sec = time.perf_counter() - t0
cpu = time.process_time() - c0
print(f"python-zlib: blocks={len(blocks)} stored={total_in} inflated={total_out} cpu={cpu:.3f} seconds={sec:.3f}")
PYEOF
}

field() { sed -E "s/.*[ :]$1=([0-9.]+).*/\1/"; }

go_best= go_cpu= py_best= py_cpu= bytes= inflated=
for r in $(seq "$rounds"); do
	out=$(mlfeed_round)
	echo "$out"
	line=$(echo "$out" | grep '^idv-read:')
	s=$(echo "$line" | field seconds)
	if [ -z "$go_best" ] || awk -v a="$s" -v b="$go_best" 'BEGIN { exit !(a < b) }'; then
		go_best=$s go_cpu=$(echo "$line" | field cpu)
	fi
	bytes=$(echo "$line" | field bytes) inflated=$(echo "$line" | field inflated)
	out=$(python_round)
	echo "$out"
	s=$(echo "$out" | field seconds)
	if [ -z "$py_best" ] || awk -v a="$s" -v b="$py_best" 'BEGIN { exit !(a < b) }'; then
		py_best=$s py_cpu=$(echo "$out" | field cpu)
	fi
done

awk -v b="$bytes" -v i="$inflated" -v g="$go_best" -v p="$py_best" -v gc="$go_cpu" -v pc="$py_cpu" -v n="$(nproc)" -v r="$rounds" 'BEGIN {
	printf "fastest of %d rounds each:\n", r
	printf "mlfeed read (inflate + decode, %d cores): %.1f MB/s of file, %.1f MB/s inflated (%.2f s, %.2f CPU-seconds)\n", n, b/g/1e6, i/g/1e6, g, gc
	printf "python zlib inflate only (1 core):        %.1f MB/s of file, %.1f MB/s inflated (%.2f s, %.2f CPU-seconds)\n", b/p/1e6, i/p/1e6, p, pc
	printf "ratio mlfeed / python zlib, wall clock: %.2fx\n", p/g
	printf "ratio per CPU-second (mlfeed also decodes the values): %.2fx\n", pc/gc
}'
uptime
