#!/bin/sh
# Binsparse and Matrix Market speed against the peers, in one run:
#
#   1. a CSR matrix of 20 million stored values (uint64 pointers, uint32 indices, float64
#      values) is written by mlfeed (format/binsparse through the pure-Go internal/hdf5) and by
#      h5py + numpy, with 1 MiB chunks, deflate level 1 and a variable-length string descriptor;
#      then the same arrays, written by h5py contiguous and chunked + deflate, are read by
#      mlfeed (pure Go), by libhdf5 through cgo (the test oracle, built with -tags hdf5, when
#      libhdf5-dev is installed) and by h5py + numpy;
#   2. the same kind of matrix as a Matrix Market file is parsed by mlfeed (format/mtx) and by
#      scipy.io.mmread.
#
# Ratios are mlfeed's time over the peer's (below 1.0 means mlfeed is faster) for HDF5, and the
# peer's time over mlfeed's (the speed-up) for Matrix Market. mlfeed's read builds and validates
# the matrix; the peers only read the three arrays. mlfeed runs with a scheduler of GOMAXPROCS
# threads, as its command line does (chunks inflated and deflated, contiguous pieces read and
# indices checked in parallel); h5py and libhdf5 use one thread. MLFEED_BENCH_THREADS=1 makes
# mlfeed serial too.
#
# Needs: go and /usr/bin/python3 with h5py, numpy and scipy (Debian: apt-get install -y
# python3-h5py python3-numpy python3-scipy); libhdf5-dev for the libhdf5 (cgo) column.
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

# secs NAME: the ns/op of the first benchmark line whose name contains NAME, in seconds.
secs() { awk -v name="$1" 'index($1, name) { for (i = 2; i <= NF; i++) if ($(i+1) == "ns/op") { printf "%.3f", $i / 1e9; exit } }'; }

echo "== Binsparse HDF5: CSR matrix of $NNZ stored values (mean of $REPS)"
export MLFEED_BENCH_DIR="$work" MLFEED_BENCH_NNZ="$NNZ"
go test -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 ./format/binsparse/ \
	>"$work/go-write.txt" 2>&1 || { cat "$work/go-write.txt" >&2; exit 1; }
go_write=$(secs 'BenchmarkScript/write' <"$work/go-write.txt")

$PY - "$work" "$REPS" >"$work/py-bsp.txt" <<'PYEOF'
import json, sys, time
import h5py, numpy as np
d, reps = sys.argv[1], int(sys.argv[2])
names = ('pointers_to_1', 'indices_1', 'values')

def read(path):
    with h5py.File(path, 'r') as f:
        desc = json.loads(f.attrs['binsparse'])
        arrays = {k: f[k][()] for k in names}
    return desc, arrays

def write(path, desc, arrays, gzip):
    with h5py.File(path, 'w') as f:
        for k in names:
            v = arrays[k]
            if gzip:
                f.create_dataset(k, data=v, chunks=(max(1, min(v.size, (1 << 20) // v.itemsize)),),
                                 compression='gzip', compression_opts=1)
            else:
                f.create_dataset(k, data=v)
        f.attrs['binsparse'] = json.dumps(desc)

def mean(fn):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return sum(ts) / reps

desc, arrays = read(d + '/mlfeed.bsp.h5')
assert arrays['values'].size == desc['binsparse']['number_of_stored_values']
tw = mean(lambda: write(d + '/gzip.bsp.h5', desc, arrays, True))
write(d + '/contiguous.bsp.h5', desc, arrays, False)
for k, v in read(d + '/gzip.bsp.h5')[1].items():
    assert np.array_equal(v, arrays[k])
tc = mean(lambda: read(d + '/contiguous.bsp.h5'))
tg = mean(lambda: read(d + '/gzip.bsp.h5'))
print('%.3f %.3f %.3f' % (tw, tc, tg))
PYEOF
read py_write py_contig py_gzip <"$work/py-bsp.txt"

export MLFEED_BENCH_FILES="$work/contiguous.bsp.h5,$work/gzip.bsp.h5"
go test -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 ./format/binsparse/ \
	>"$work/go-read.txt" 2>&1 || { cat "$work/go-read.txt" >&2; exit 1; }
go_contig=$(secs 'read/contiguous' <"$work/go-read.txt")
go_gzip=$(secs 'read/gzip' <"$work/go-read.txt")
c_contig=0
c_gzip=0
if [ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ]; then
	if go test -tags hdf5 -run '^$' -bench '^BenchmarkOracleScript$' -benchtime "${REPS}x" -count 1 ./format/binsparse/ \
		>"$work/cgo-read.txt" 2>&1; then
		c_contig=$(secs 'read/contiguous' <"$work/cgo-read.txt")
		c_gzip=$(secs 'read/gzip' <"$work/cgo-read.txt")
	else
		cat "$work/cgo-read.txt" >&2
	fi
fi
mb=$(du -m "$work/mlfeed.bsp.h5" | cut -f1)
hb=$(du -m "$work/gzip.bsp.h5" | cut -f1)
awk -v gw="$go_write" -v pw="$py_write" -v gc="$go_contig" -v pc="$py_contig" -v cc="$c_contig" \
	-v gg="$go_gzip" -v pg="$py_gzip" -v cg="$c_gzip" -v mb="$mb" -v hb="$hb" 'BEGIN {
	printf "  %-16s %8s %8s %8s   %-12s %s\n", "", "mlfeed", "h5py", "libhdf5", "mlfeed/h5py", "mlfeed/libhdf5"
	printf "  %-16s %7.3fs %7.3fs %8s   %-12s %-14s (files: %d MB vs %d MB)\n", "write gzip", gw, pw, "-", sprintf("%.2fx", gw / pw), "-", mb, hb
	printf "  %-16s %7.3fs %7.3fs %7.3fs   %-12s %s\n", "read contiguous", gc, pc, cc, sprintf("%.2fx", gc / pc), (cc > 0 ? sprintf("%.2fx", gc / cc) : "-")
	printf "  %-16s %7.3fs %7.3fs %7.3fs   %-12s %s\n", "read gzip", gg, pg, cg, sprintf("%.2fx", gg / pg), (cg > 0 ? sprintf("%.2fx", gg / cg) : "-")
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
