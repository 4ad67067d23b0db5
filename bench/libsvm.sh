#!/bin/sh
# LIBSVM parsing speed against scikit-learn, in one run: a file of about SIZE_MB megabytes
# (default 200) is written by sklearn.datasets.dump_svmlight_file from a random sparse matrix
# (1000 features, about 40 stored values a row, labels 0..9), then read by
# sklearn.datasets.load_svmlight_file and by mlfeed (format/libsvm: the scan Open does, then
# every chunk parsed on one goroutine, as BenchmarkScript does, with GOMAXPROCS=1). Both give
# float64 CSR data.
#
# The two readers take turns, REPS times (default 3), so that both meet the same load on a
# shared machine; the best time of each is kept. Prints wall and CPU times and the ratios
# sklearn / mlfeed (the speed-up; the issue asks for at least 10). On a busy machine the CPU
# ratio is the steadier one: the wall clock also counts time spent waiting for a core.
#
# Needs: go, /usr/bin/python3 with numpy, scipy and scikit-learn
# (Debian: apt-get install -y python3-sklearn). Environment: SIZE_MB (default 200), REPS
# (default 3), KEEP=1 keeps the work directory.
set -eu

cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-200}
REPS=${REPS:-3}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-libsvm.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import sklearn.datasets, scipy.sparse, numpy' 2>/dev/null; then
	echo "bench/libsvm.sh: $PY lacks scikit-learn (apt-get install -y python3-sklearn)" >&2
	exit 2
fi

file="$work/data.svm"
$PY - "$file" "$SIZE_MB" <<'PYEOF'
import sys
import numpy as np, scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file
path, size_mb = sys.argv[1], float(sys.argv[2])
rows = int(size_mb * 1e6 / 800)  # about 20 bytes per value, 40 values per row
rng = np.random.default_rng(1)
X = sp.random(rows, 1000, density=0.04, format="csr", random_state=rng)
y = rng.integers(0, 10, rows).astype(np.float64)
dump_svmlight_file(X, y, path)
PYEOF
go test -c -o "$work/libsvm.test" ./format/libsvm/

for _ in $(seq "$REPS"); do
	$PY - "$file" >>"$work/py.txt" <<'PYEOF'
import sys, time
from sklearn.datasets import load_svmlight_file
t, c = time.perf_counter(), time.process_time()
X, y = load_svmlight_file(sys.argv[1])
print(time.perf_counter() - t, time.process_time() - c, X.nnz)
PYEOF
	# One core for mlfeed as for Python.
	GOMAXPROCS=1 MLFEED_BENCH_FILE="$file" "$work/libsvm.test" -test.run '^$' -test.bench '^BenchmarkScript$' \
		-test.benchtime 1x >>"$work/go.txt" 2>&1 || { cat "$work/go.txt" >&2; exit 1; }
done

bytes=$(wc -c <"$file")
nnz=$(awk '{ print $3; exit }' "$work/py.txt")
sk=$(awk 'NR == 1 || $1 < m { m = $1 } END { print m }' "$work/py.txt")
skcpu=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$work/py.txt")
ml=$(awk '$1 ~ /BenchmarkScript/ { for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") print $i / 1e9 }' "$work/go.txt" | sort -g | head -1)
mlcpu=$(awk '$1 ~ /BenchmarkScript/ { for (i = 2; i <= NF; i++) if ($(i+1) == "cpu-s/op") print $i }' "$work/go.txt" | sort -g | head -1)

echo "== LIBSVM: $(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }') MB, $nnz stored values (load_svmlight_file vs mlfeed, one core, best of $REPS)"
printf '%-27s %8s %8s\n' "" "wall s" "CPU s"
printf '%-27s %8.3f %8.3f\n' "sklearn.load_svmlight_file" "$sk" "$skcpu"
printf '%-27s %8.3f %8.3f  (%.0f MB/s wall)\n' "mlfeed format/libsvm" "$ml" "$mlcpu" "$(awk -v b="$bytes" -v t="$ml" 'BEGIN { print b / 1e6 / t }')"
printf '%-27s %7.1fx %7.1fx\n' "ratio sklearn/mlfeed" "$(awk -v a="$sk" -v b="$ml" 'BEGIN { print a / b }')" "$(awk -v a="$skcpu" -v b="$mlcpu" 'BEGIN { print a / b }')"
