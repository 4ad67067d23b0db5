#!/bin/sh
# Binsparse and Matrix Market speed against the Python peers, in one run:
#
#   1. a CSR matrix of 20 million stored values (uint64 pointers, uint32 indices, float64
#      values) is written and read by mlfeed (format/binsparse, libhdf5 through cgo) and by
#      h5py + numpy, both with 1 MiB chunks and deflate level 1 and a variable-length string
#      descriptor; the read side reads the same file (mlfeed's) with both;
#   2. the same kind of matrix as a Matrix Market file is parsed by mlfeed (format/mtx) and by
#      scipy.io.mmread.
#
# Ratios are mlfeed's time over the peer's (below 1.0 means mlfeed is faster) for HDF5, and the
# peer's time over mlfeed's (the speed-up) for Matrix Market.
#
# Needs: go, libhdf5-dev, and /usr/bin/python3 with h5py, numpy and scipy
# (Debian: apt-get install -y libhdf5-dev python3-h5py python3-numpy python3-scipy).
# Environment: NNZ (default 20000000), REPS (HDF5 repetitions, averaged; default 3),
# KEEP=1 keeps the work directory.
set -eu

cd "$(dirname "$0")/.."
NNZ=${NNZ:-20000000}
REPS=${REPS:-3}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-binsparse.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import h5py, numpy, scipy.io' 2>/dev/null; then
	echo "bench/binsparse.sh: $PY lacks h5py, numpy or scipy (apt-get install -y python3-h5py python3-numpy python3-scipy)" >&2
	exit 2
fi

# ns/op of a benchmark line, as seconds.
secs() { awk -v name="$1" '$1 ~ name { for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") { printf "%.3f", $i / 1e9; exit } }'; }

echo "== Binsparse HDF5: CSR matrix of $NNZ stored values (mlfeed vs h5py + numpy, mean of $REPS)"
export MLFEED_BENCH_DIR="$work" MLFEED_BENCH_NNZ="$NNZ"
go test -tags hdf5 -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 ./format/binsparse/ \
	>"$work/go-bsp.txt" 2>&1 || { cat "$work/go-bsp.txt" >&2; exit 1; }
go_write=$(secs 'BenchmarkScript/write' <"$work/go-bsp.txt")
go_read=$(secs 'BenchmarkScript/read' <"$work/go-bsp.txt")

$PY - "$work" "$REPS" >"$work/py-bsp.txt" <<'EOF'
import json, sys, time
import h5py, numpy as np
d, reps = sys.argv[1], int(sys.argv[2])
names = ('pointers_to_1', 'indices_1', 'values')

def read(path):
    with h5py.File(path, 'r') as f:
        desc = json.loads(f.attrs['binsparse'])
        arrays = {k: f[k][()] for k in names}
    return desc, arrays

desc, arrays = read(d + '/mlfeed.bsp.h5')
assert arrays['values'].size == desc['binsparse']['number_of_stored_values']
tr = []
for _ in range(reps):
    t = time.perf_counter(); read(d + '/mlfeed.bsp.h5'); tr.append(time.perf_counter() - t)
tw = []
for _ in range(reps):
    t = time.perf_counter()
    with h5py.File(d + '/h5py.bsp.h5', 'w') as f:
        for k in names:
            v = arrays[k]
            f.create_dataset(k, data=v, chunks=(max(1, min(v.size, (1 << 20) // v.itemsize)),),
                             compression='gzip', compression_opts=1)
        f.attrs['binsparse'] = json.dumps(desc)
    tw.append(time.perf_counter() - t)
print('%.3f %.3f' % (sum(tw) / reps, sum(tr) / reps))
EOF
read py_write py_read <"$work/py-bsp.txt"
mb=$(du -m "$work/mlfeed.bsp.h5" | cut -f1)
hb=$(du -m "$work/h5py.bsp.h5" | cut -f1)
awk -v gw="$go_write" -v gr="$go_read" -v pw="$py_write" -v pr="$py_read" -v mb="$mb" -v hb="$hb" 'BEGIN {
	printf "  write: mlfeed %6.3f s   h5py %6.3f s   ratio %.2fx   (files: %d MB vs %d MB)\n", gw, pw, gw / pw, mb, hb
	printf "  read:  mlfeed %6.3f s   h5py %6.3f s   ratio %.2fx\n", gr, pr, gr / pr
}'

echo "== Matrix Market: the same shape of matrix, $NNZ entries (mlfeed vs scipy.io.mmread)"
go test -run '^$' -bench '^BenchmarkScript$' -benchtime 1x -count 1 ./format/mtx/ >"$work/go-mtx.txt" 2>&1 ||
	{ cat "$work/go-mtx.txt" >&2; exit 1; }
# The first run wrote bench.mtx; time a second, warm run.
go test -run '^$' -bench '^BenchmarkScript$' -benchtime 1x -count 1 ./format/mtx/ >"$work/go-mtx.txt" 2>&1 ||
	{ cat "$work/go-mtx.txt" >&2; exit 1; }
go_mtx=$(secs 'BenchmarkScript' <"$work/go-mtx.txt")
py_mtx=$($PY - "$work/bench.mtx" <<'EOF'
import sys, time, scipy.io
t = time.perf_counter(); a = scipy.io.mmread(sys.argv[1]); el = time.perf_counter() - t
assert a.nnz > 0
print('%.3f' % el)
EOF
)
size=$(du -m "$work/bench.mtx" | cut -f1)
awk -v g="$go_mtx" -v p="$py_mtx" -v s="$size" 'BEGIN {
	printf "  parse: mlfeed %6.3f s   scipy %6.3f s   speed-up %.1fx   (%d MB file)\n", g, p, p / g, s
}'
