#!/bin/sh
# NumPy .npy speed against numpy itself, in one run: an array of N records of 784 float32
# values (default 200 000: 627 MB) is saved little-endian and big-endian by numpy.save; each
# file is read by numpy.load then summed (.sum()), and by mlfeed (format/npy: mapped, chunks
# read on one goroutine, every value summed); numpy.save and mlfeed's writer each write the
# little-endian array to a file.
#
# Prints the times (the best of REPS runs, for both) and the ratios numpy / mlfeed (above 1.0
# means mlfeed is faster). Best of, for both: the first write of each creates its file, and
# a file's first 627 MB of page cache cost a VM far more than memory freed moments before;
# and the writes of the two take turns.
#
# Needs: go and /usr/bin/python3 with numpy (Debian: apt-get install -y python3-numpy).
# Environment: N (default 200000), REPS (default 3), KEEP=1 keeps the work directory.
set -eu

cd "$(dirname "$0")/.."
N=${N:-200000}
REPS=${REPS:-3}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-npy.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import numpy' 2>/dev/null; then
	echo "bench/npy.sh: $PY lacks numpy (apt-get install -y python3-numpy)" >&2
	exit 2
fi

$PY - "$work" "$N" "$REPS" >"$work/py.txt" <<'PYEOF'
import sys, time
import numpy as np
d, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = (np.arange(n * 784, dtype=np.float32) % 1000 / 7).reshape(n, 784)
np.save(d + '/le.npy', a)
np.save(d + '/be.npy', a.astype('>f4'))
def best(f): # the best wall and CPU times of reps runs
    t, c = float('inf'), float('inf')
    for _ in range(reps):
        s, p = time.perf_counter(), time.process_time(); f()
        t, c = min(t, time.perf_counter() - s), min(c, time.process_time() - p)
    return t, c
print('read-le', *best(lambda: np.load(d + '/le.npy').sum(dtype=np.float64)))
print('read-be', *best(lambda: np.load(d + '/be.npy').sum(dtype=np.float64)))
PYEOF

go test -c -o "$work/npy.test" ./format/npy/
(cd format/npy && MLFEED_BENCH_DIR="$work" "$work/npy.test" -test.run '^$' -test.bench '^BenchmarkScript/read' \
	-test.benchtime 1x -test.count "$REPS") >"$work/go.txt" 2>&1 || { cat "$work/go.txt" >&2; exit 1; }
# The writes take turns, numpy's and mlfeed's, so that both meet the machine's memory in the
# same states: the first write after a while pays for reclaiming page cache, in CPU time too.
for _ in $(seq "$REPS"); do
	$PY - "$work" >>"$work/py.txt" <<'PYEOF'
import sys, time
import numpy as np
d = sys.argv[1]
a = np.load(d + '/le.npy')
s, p = time.perf_counter(), time.process_time()
np.save(d + '/py-out.npy', a)
print('write', time.perf_counter() - s, time.process_time() - p)
PYEOF
	(cd format/npy && MLFEED_BENCH_DIR="$work" "$work/npy.test" -test.run '^$' -test.bench '^BenchmarkScript/write' \
		-test.benchtime 1x -test.count 1) >>"$work/go.txt" 2>&1 || { cat "$work/go.txt" >&2; exit 1; }
done
cmp -s "$work/out.npy" "$work/py-out.npy" && same="identical bytes" || same="BYTES DIFFER"

secs() { # the best of the runs of benchmark $1, in seconds: $2 is ns/op (wall) or cpu-s/op
	awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 2; i <= NF; i++) if ($(i+1) == unit && (best == "" || $i < best)) best = $i }
		END { printf "%.3f", unit == "ns/op" ? best / 1e9 : best }' "$work/go.txt"
}
mb=$(awk -v n="$N" 'BEGIN { printf "%.0f", n * 784 * 4 / 1e6 }')
echo "== NumPy .npy: $N x 784 float32 ($mb MB) (numpy vs mlfeed format/npy, one core)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; CPU time is the fairer figure on a loaded machine"
printf '%-34s %8s %8s %8s %8s %8s %8s\n' "" "numpy s" "mlfeed s" "ratio" "numpy" "mlfeed" "ratio"
printf '%-34s %8s %8s %8s %8s %8s %8s\n' "" "(wall)" "(wall)" "(wall)" "CPU s" "CPU s" "(CPU)"
for op in read-le read-be write; do
	py=$(awk -v k="$op" '$1 == k && (b == "" || $2 < b) { b = $2 } END { print b }' "$work/py.txt")
	pyc=$(awk -v k="$op" '$1 == k && (b == "" || $3 < b) { b = $3 } END { print b }' "$work/py.txt")
	go=$(secs "BenchmarkScript/$op" ns/op)
	goc=$(secs "BenchmarkScript/$op" cpu-s/op)
	case $op in
	read-le) what="read little-endian + sum" ;;
	read-be) what="read big-endian + sum" ;;
	write) what="write ($same)" ;;
	esac
	printf '%-34s %8.3f %8.3f %7.2fx %8.3f %8.3f %7.2fx\n' "$what" "$py" "$go" "$(awk -v a="$py" -v b="$go" 'BEGIN { print a / b }')" \
		"$pyc" "$goc" "$(awk -v a="$pyc" -v b="$goc" 'BEGIN { print a / b }')"
done
