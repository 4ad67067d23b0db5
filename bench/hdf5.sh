#!/bin/sh
# HDF5 filters against h5py, in one run: h5py writes MNIST's 60,000 training images (uint8,
# 28 x 28) and 60,000 x 64 float32 features (normal, rounded to 3 decimals) in chunks of 1,000
# rows, once per filter pipeline: none, gzip (h5py's default level 4), gzip after shuffle, LZF
# (h5py's own filter), LZF after shuffle, szip (libaec, h5py's default NN with 8 pixels per
# block; and EC, no preprocessor, 32 per block) where the libhdf5 has it, scale-offset (HDF5's
# filter 6: the images with the minimum bits found per chunk, the features D-scaled by 10^3),
# n-bit (HDF5's filter 5, on the images stored as uint16 of 8 bits and the features as int32 of
# 16 bits, round(x * 1000): h5py converts both to whole integers, as mlfeed does), and where
# PyTables is installed Blosc (level 5, byte shuffle) with blosclz, lz4 and zstd, and LZO
# (PyTables registers both filters for h5py). Each file is then read whole, every dataset, by
# mlfeed's pure-Go reader (internal/hdf5, BenchmarkReadFile: one goroutine) and by h5py +
# numpy (libhdf5 in C, one thread), REPS times each; the best wall time and the best CPU time
# (user + system) count.
#
# Ratios are mlfeed's time over h5py's: below 1.0 means mlfeed is faster. Both decode into
# memory they hold; neither converts. On a loaded machine trust the CPU ratio.
#
# Needs: go, /usr/bin/python3 with h5py and numpy (Debian: apt-get install -y python3-h5py
# python3-numpy; python3-tables for the Blosc rows), and ../shared/testdata/mnist (else random
# images of MNIST's shape).
# Environment: REPS (default 5), KEEP=1 keeps the work directory, ONLY="szip szip-ec" runs
# only those rows.
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
REPS=${REPS:-5}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-hdf5.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import h5py, numpy' 2>/dev/null; then
	echo "bench/hdf5.sh: $PY lacks h5py or numpy (apt-get install -y python3-h5py python3-numpy)" >&2
	exit 2
fi
mnist=${MLFEED_SHARED:-../shared}/testdata/mnist/train-images-idx3-ubyte.gz

$PY - "$work" "$mnist" <<'PYEOF'
import gzip, os, sys
try:
    import tables  # registers the Blosc filter (32001) with the libhdf5 h5py uses
except ImportError:
    tables = None
import h5py, numpy as np
work, mnist = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
if os.path.exists(mnist):
    with gzip.open(mnist, "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28)
else:
    print(f"{mnist} missing: random images of MNIST's shape", file=sys.stderr)
    images = (rng.random((60000, 28, 28)) < 0.2).astype(np.uint8) * 255
features = np.round(rng.standard_normal((len(images), 64)), 3).astype(np.float32)
pipelines = [("none", {}), ("gzip", {"compression": "gzip"}),
             ("gzip-shuffle", {"compression": "gzip", "shuffle": True}),
             ("lzf", {"compression": "lzf"}), ("lzf-shuffle", {"compression": "lzf", "shuffle": True})]
if "szip" in h5py.filters.encode:
    pipelines += [("szip", {"compression": "szip"}), ("szip-ec", {"compression": "szip", "compression_opts": ("ec", 32)})]
else:
    print("no szip encoder in this libhdf5: no szip rows", file=sys.stderr)
if tables is None:
    print("no PyTables (apt-get install -y python3-tables): no Blosc rows", file=sys.stderr)
else:
    # hdf5-blosc's cd_values: slots 0-3 are filled in by the filter, then level, shuffle,
    # compressor (0 blosclz, 1 lz4, 5 zstd)
    for codec, code in (("blosclz", 0), ("lz4", 1), ("zstd", 5)):
        pipelines.append(("blosc-" + codec, {"compression": 32001, "compression_opts": (0, 0, 0, 0, 5, 1, code)}))
    if tables.which_lib_version("lzo"):  # PyTables' LZO filter (305), registered the same way
        pipelines.append(("lzo", {"compression": 305}))
only = os.environ.get("ONLY", "").split()
for name, kw in pipelines:
    if only and name not in only:
        continue
    with h5py.File(os.path.join(work, name + ".h5"), "w") as f:
        f.create_dataset("images", data=images, chunks=(1000, 28, 28), **kw)
        f.create_dataset("features", data=features, chunks=(1000, 64), **kw)
if not only or "scaleoffset" in only:
    with h5py.File(os.path.join(work, "scaleoffset.h5"), "w") as f:
        f.create_dataset("images", data=images, chunks=(1000, 28, 28), scaleoffset=True)
        f.create_dataset("features", data=features, chunks=(1000, 64), scaleoffset=3)
if not only or "nbit" in only:
    with h5py.File(os.path.join(work, "nbit.h5"), "w") as f:
        # n-bit has no high-level option: a narrow integer type and the filter, through h5py.h5*
        for dsname, data, base, prec in (("images", images.astype(np.uint16), h5py.h5t.STD_U16LE, 8),
                                         ("features", np.round(features * 1000).astype(np.int32), h5py.h5t.STD_I32LE, 16)):
            tid = base.copy()
            tid.set_precision(prec)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((1000,) + data.shape[1:])
            dcpl.set_filter(h5py.h5z.FILTER_NBIT)
            ds = h5py.h5d.create(f.id, dsname.encode(), tid, h5py.h5s.create_simple(data.shape), dcpl)
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
PYEOF

printf '%-14s %8s %9s %9s %7s %10s %10s %7s\n' filters "file MB" "mlfeed s" "h5py s" wall "mlfeed cpu" "h5py cpu" cpu
for name in none gzip gzip-shuffle lzf lzf-shuffle szip szip-ec scaleoffset nbit blosc-blosclz blosc-lz4 blosc-zstd lzo; do
	file="$work/$name.h5"
	[ -f "$file" ] || continue
	# one op reads the file once: the best of REPS single reads, as for h5py
	MLFEED_BENCH_H5="$file" go test -run '^$' -bench '^BenchmarkReadFile$' -benchtime 1x -count "$REPS" ./internal/hdf5/ \
		>"$work/go-$name.txt" 2>&1 || { cat "$work/go-$name.txt" >&2; exit 1; }
	go_s=$(gobench '^BenchmarkReadFile' ns/op "$work/go-$name.txt")
	go_cpu=$(gobench '^BenchmarkReadFile' cpu-s/op "$work/go-$name.txt")
	py=$($PY - "$file" "$REPS" <<'PYEOF'
import sys, time
try:
    import tables  # the Blosc filter, for h5py
except ImportError:
    pass
import h5py
path, reps = sys.argv[1], int(sys.argv[2])
wall = cpu = float("inf")
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    with h5py.File(path, "r") as f:
        for k in f:
            f[k][()]
    wall = min(wall, time.perf_counter() - t)
    cpu = min(cpu, time.process_time() - c)
print(f"{wall:.4f} {cpu:.4f}")
PYEOF
)
	mb=$(du -m "$file" | cut -f1)
	echo "$name $mb $go_s $py $go_cpu" | awk '{ printf "%-14s %8s %9.4f %9.4f %7.2f %10.4f %10.4f %7.2f\n", $1, $2, $3, $4, $3 / $4, $6, $5, $6 / $5 }'
done
