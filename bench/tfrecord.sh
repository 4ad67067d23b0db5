#!/bin/sh
# TFRecord read speed against the best Python reader installable here, in one run: N records
# of an MNIST-like tf.train.Example (784 image bytes, an int64 label, 64 float32 values;
# default 100 000 records, 116 MB) are written by Google's protobuf library (python3-protobuf)
# with TensorFlow's framing; a Python loop reads the file, checks both CRCs of every record
# (python3-crc32c, C code), parses every record with protobuf (its C++ implementation) and
# touches every feature's values; mlfeed (format/tfrecord) opens the file (the scan: framing,
# CRCs, kinds and lengths) and decodes every chunk into columns on one goroutine.
#
# Prints the times (best of REPS for Python; mean of REPS for mlfeed), wall clock and CPU time
# (the fairer figure on a loaded machine), and the ratios Python / mlfeed (above 1.0 means
# mlfeed is faster). The goal is 10x.
#
# Then, with ../shared/testdata/mnist, a minibatch sweep over the same data in three formats:
# MNIST's 60000 training images as float32 and their labels, as IDX (two files), CBF (labels
# as float32) and TFRecord (written by mlfeed convert: a float_list and an int64 label per
# Example); `mlfeed batches --mb-size 256 --sweeps 5` over each, three rounds taking turns,
# medians of the first sweep, of the steady sweeps after it, and of the CPU time of the whole
# command (opening included: TFRecord's scan of the records). The goal: TFRecord within 1.5x
# of IDX and CBF.
#
# Needs: go and /usr/bin/python3 with python3-protobuf and python3-crc32c
# (apt-get install -y python3-protobuf python3-crc32c).
# Environment: N (default 100000), REPS (default 3), KEEP=1 keeps the work directory.
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
N=${N:-100000}
REPS=${REPS:-3}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-tfrecord.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import google.protobuf, crc32c' 2>/dev/null; then
	echo "bench/tfrecord.sh: $PY lacks protobuf or crc32c (apt-get install -y python3-protobuf python3-crc32c)" >&2
	exit 2
fi

PYTHONPATH=format/tfrecord/testdata $PY - "$work" "$N" "$REPS" >"$work/py.txt" <<'PYEOF'
import struct, sys, time
import pbcheck
d, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
path = d + "/data.tfrecord"
with open(path, "wb") as f:
    for q in range(n):
        m = pbcheck.Example()
        fe = m.features.feature
        fe["image"].bytes_list.value.append(bytes((q + k) & 255 for k in range(784)))
        fe["label"].int64_list.value.append(q % 10)
        fe["embedding"].float_list.value.extend([((q * 64 + k) % 1000) / 7 for k in range(64)])
        rec = m.SerializeToString()
        h = struct.pack("<Q", len(rec))
        f.write(h + struct.pack("<I", pbcheck._masked(h)) + rec + struct.pack("<I", pbcheck._masked(rec)))

def read():
    with open(path, "rb") as f:
        data = f.read()
    count = 0
    for rec in pbcheck.records(data, path):
        m = pbcheck.Example()
        m.ParseFromString(rec)
        for feat in m.features.feature.values():
            kind = feat.WhichOneof("kind")
            count += len(getattr(feat, kind).value)
    return count

best, cpu = float("inf"), float("inf")
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    read()
    best = min(best, time.perf_counter() - t)
    cpu = min(cpu, time.process_time() - c)
print("read", best, cpu)
PYEOF

MLFEED_BENCH_DIR="$work" go test -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 \
	./format/tfrecord/ >"$work/go.txt" 2>&1 || { cat "$work/go.txt" >&2; exit 1; }

py=$(awk '$1 == "read" { print $2 }' "$work/py.txt")
pycpu=$(awk '$1 == "read" { print $3 }' "$work/py.txt")
go=$(gobench BenchmarkScript ns/op "$work/go.txt")
gocpu=$(gobench BenchmarkScript cpu-s/op "$work/go.txt")
mb=$(awk -v s="$(wc -c <"$work/data.tfrecord")" 'BEGIN { printf "%.0f", s / 1e6 }')
echo "== TFRecord: $N tf.train.Example records ($mb MB) (Python protobuf + crc32c loop vs mlfeed format/tfrecord, one core)"
printf '%-40s %8s %8s %8s\n' "" "python s" "mlfeed s" "ratio"
printf '%-40s %8.3f %8.3f %7.2fx\n' "read: CRCs, parse, every value (wall)" "$py" "$go" "$(awk -v a="$py" -v b="$go" 'BEGIN { print a / b }')"
printf '%-40s %8.3f %8.3f %7.2fx\n' "the same, CPU time" "$pycpu" "$gocpu" "$(awk -v a="$pycpu" -v b="$gocpu" 'BEGIN { print a / b }')"

MN=${MLFEED_SHARED:-../shared}/testdata/mnist
if [ ! -f "$MN/train-images-idx3-ubyte.gz" ]; then
	echo "sweep: skipped ($MN/train-images-idx3-ubyte.gz is absent)"
	exit 0
fi
go build -o "$work/mlfeed" ./cmd/mlfeed
M=$work/mlfeed
$M convert -q --type float32 "$MN/train-images-idx3-ubyte.gz" "$work/images.idx"
gzip -dc "$MN/train-labels-idx1-ubyte.gz" >"$work/labels.idx"
$M convert -q --type float32 "$work/images.idx" "$work/labels.idx" "$work/mnist.cbf"
$M convert -q "$work/images.idx" "$work/labels.idx" "$work/mnist.tfrecord"
rm -f "$work/data.tfrecord"
for _ in 1 2 3; do
	for f in idx cbf tfrecord; do
		case $f in
		idx) in="$work/images.idx $work/labels.idx" ;;
		*) in="$work/mnist.$f" ;;
		esac
		# shellcheck disable=SC2086
		/usr/bin/time -f "cpu %U %S" $M batches --mb-size 256 --sweeps 5 --seed 1 $in 2>&1 |
			awk -v f="$work/sw.$f" '/^sweep times:/ { sub("s,", "", $4); sub("s", "", $7); print $4, $7 >> f }
				/^cpu / { print $2 + $3 >> (f ".cpu") }'
	done
done
echo
echo "== minibatch sweeps: MNIST 60000 x 784 float32 + labels, mlfeed batches --mb-size 256 (medians of 3 runs)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
printf '%-10s %9s %9s %9s %22s\n' format "first s" "steady s" "CPU s" "TFRecord / this (steady, CPU)"
for f in idx cbf tfrecord; do
	first=$(cut -d' ' -f1 "$work/sw.$f" | median)
	steady=$(cut -d' ' -f2 "$work/sw.$f" | median)
	cpu=$(median <"$work/sw.$f.cpu")
	ts=$(cut -d' ' -f2 "$work/sw.tfrecord" | median)
	tc=$(median <"$work/sw.tfrecord.cpu")
	printf '%-10s %9.4f %9.4f %9.3f %13.2fx %7.2fx\n' "$f" "$first" "$steady" "$cpu" \
		"$(awk -v a="$ts" -v b="$steady" 'BEGIN { print a / b }')" "$(awk -v a="$tc" -v b="$cpu" 'BEGIN { print a / b }')"
done
