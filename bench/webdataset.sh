#!/usr/bin/env bash
# WebDataset in one run:
#   - read speed against the best Python reader installable here: a shard of N samples of an
#     MNIST-like kind (a 784-byte "png" member of opaque bytes, a "cls" label, a 64-float32
#     "emb.npy" array; default 20 000 samples) written by Python's tarfile; Python reads it with
#     tarfile, groups the members by key as webdataset does and decodes them as its default
#     decoders do (int() for cls, numpy.load for .npy, the bytes as they are); mlfeed
#     (format/webdataset) opens the shard (the scan of every header) and decodes every chunk into
#     columns on one goroutine. Prints wall and CPU seconds (best of REPS for Python, mean for
#     mlfeed) and the ratios Python / mlfeed; the goal is 10x.
#   - randomized minibatch sweeps (`mlfeed batches`, minibatch 256, 10 sweeps, median of 5 runs)
#     over MNIST's training set (60000 images 28x28 uint8 and labels) as a WebDataset shard
#     (features.npy, labels.npy; written by `mlfeed convert`) and as IDX: the first sweep (which
#     also scans or maps the file) and the steady sweeps after it, and the ratio WebDataset /
#     IDX (the goal: at most 1.5), and the CPU time of a whole run (the fairer figure on a
#     loaded machine). Needs ../shared/testdata/mnist (skipped without it).
#
# Needs: go and /usr/bin/python3 with python3-numpy. Environment: N (default 20000), REPS
# (default 3), KEEP=1 keeps the work directory. A shared or busy machine spreads the figures
# by 20% or more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${N:-20000}
REPS=${REPS:-3}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-webdataset.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

if ! $PY -c 'import numpy' 2>/dev/null; then
	echo "bench/webdataset.sh: $PY lacks numpy (apt-get install -y python3-numpy)" >&2
	exit 2
fi

$PY - "$work" "$N" "$REPS" >"$work/py.txt" <<'PYEOF'
import io, re, sys, tarfile, time
import numpy as np
d, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
path = d + "/data.tar"

def member(t, name, data):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mtime, ti.mode = len(data), 0, 0o644
    t.addfile(ti, io.BytesIO(data))

with tarfile.open(path, "w") as t:
    for q in range(n):
        key = "%09d" % q
        member(t, key + ".cls", str(q % 10).encode())
        b = io.BytesIO()
        np.save(b, ((np.arange(64) + q * 64) % 1000 / 7).astype(np.float32))
        member(t, key + ".emb.npy", b.getvalue())
        member(t, key + ".png", bytes((q + k) & 255 for k in range(784)))

INT = {"cls", "cls2", "index", "inx", "id"}
def read():
    count, cur, key = 0, None, None
    with tarfile.open(path) as t:
        for m in t:
            if not m.isreg():
                continue
            k, e = re.match(r"^((?:.*/|)[^.]+)[.]([^/]*)$", m.name).groups()
            data = t.extractfile(m).read()
            if k != key:
                key, cur = k, {}
                count += 1
            last = e.rsplit(".", 1)[-1]
            if last in INT:
                cur[e] = int(data)
            elif last == "npy":
                cur[e] = np.load(io.BytesIO(data))
            else:
                cur[e] = data
    return count

best, cpu = float("inf"), float("inf")
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    assert read() == n
    best = min(best, time.perf_counter() - t)
    cpu = min(cpu, time.process_time() - c)
print("read", best, cpu)
PYEOF

MLFEED_BENCH_DIR="$work" go test -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 \
	./format/webdataset/ >"$work/go.txt" 2>&1 || { cat "$work/go.txt" >&2; exit 1; }

py=$(awk '$1 == "read" { print $2 }' "$work/py.txt")
pycpu=$(awk '$1 == "read" { print $3 }' "$work/py.txt")
go=$(gobench BenchmarkScript ns/op "$work/go.txt")
gocpu=$(gobench BenchmarkScript cpu-s/op "$work/go.txt")
mb=$(awk -v s="$(wc -c <"$work/data.tar")" 'BEGIN { printf "%.0f", s / 1e6 }')
echo "== WebDataset: a shard of $N samples, 3 members each ($mb MB) (Python tarfile + numpy.load vs mlfeed format/webdataset, one core)"
printf '%-40s %8s %8s %8s\n' "" "python s" "mlfeed s" "ratio"
printf '%-40s %8.3f %8.3f %7.2fx\n' "read: group, decode, every member (wall)" "$py" "$go" "$(awk -v a="$py" -v b="$go" 'BEGIN { print a / b }')"
printf '%-40s %8.3f %8.3f %7.2fx\n' "the same, CPU time" "$pycpu" "$gocpu" "$(awk -v a="$pycpu" -v b="$gocpu" 'BEGIN { print a / b }')"

MN=${MLFEED_SHARED:-../shared}/testdata/mnist
if [ ! -f "$MN/train-images-idx3-ubyte.gz" ]; then
	echo "minibatch sweep skipped: $MN/train-images-idx3-ubyte.gz is absent"
	exit 0
fi
go build -o "$work/mlfeed" ./cmd/mlfeed
ML=$work/mlfeed
SWEEPS=10
# engine FILE...: "first steady cpu" seconds, medians of 5 runs of $SWEEPS randomized sweeps
# (cpu: the CPU time, user + system, of the whole run, open included)
engine() {
	for _ in 1 2 3 4 5; do
		/usr/bin/time -f '%U %S' -o "$work/time" "$ML" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$@" |
			awk '/^sweep times:/ { sub("s,", "", $4); sub("s", "", $7); printf "%s %s ", $4, $7 }'
		awk '{ print $1 + $2 }' "$work/time"
	done >"$work/runs"
	echo "$(cut -d' ' -f1 "$work/runs" | median) $(cut -d' ' -f2 "$work/runs" | median) $(cut -d' ' -f3 "$work/runs" | median)"
}
"$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$work/images.idx"
"$ML" convert -q "$MN/train-labels-idx1-ubyte.gz" "$work/labels.idx"
"$ML" convert -q "$work/images.idx" "$work/labels.idx" "$work/mnist.tar"
sync
read -r xf xs xc < <(engine "$work/images.idx" "$work/labels.idx")
read -r wf ws wc < <(engine "$work/mnist.tar")
"$ML" info --opt cache_index=true "$work/mnist.tar" >/dev/null # writes the index beside the shard
read -r cf cs cc < <(engine --opt cache_index=true "$work/mnist.tar")
echo
echo "== minibatch sweeps: MNIST train (60000 x 28x28 uint8 + labels), mb 256, median of 5 runs of $SWEEPS sweeps"
echo "(the shard holds $(awk -v a="$(wc -c <"$work/mnist.tar")" -v b="$(($(wc -c <"$work/images.idx") + $(wc -c <"$work/labels.idx")))" 'BEGIN { printf "%.1f", a / b }')x the bytes of the IDX files: a 512-byte header and padding to 512 bytes per member)"
awk -v xf="$xf" -v xs="$xs" -v wf="$wf" -v ws="$ws" -v cf="$cf" -v cs="$cs" -v xc="$xc" -v wc="$wc" -v cc="$cc" -v n=60000 'BEGIN {
	printf "%-40s %10s %12s %14s\n", "case", "seconds", "samples/s", "wds / idx"
	printf "%-40s %10.4f %12.0f\n", "IDX, first sweep", xf, n / xf
	printf "%-40s %10.4f %12.0f %13.2fx\n", "WebDataset, first sweep (scan)", wf, n / wf, wf / xf
	printf "%-40s %10.4f %12.0f %13.2fx\n", "WebDataset, first sweep (cached index)", cf, n / cf, cf / xf
	printf "%-40s %10.4f %12.0f\n", "IDX, steady sweep", xs, n / xs
	printf "%-40s %10.4f %12.0f %13.2fx\n", "WebDataset, steady sweep", ws, n / ws, ws / xs
	printf "%-40s %10.4f %12.0f %13.2fx\n", "WebDataset, steady (cached index)", cs, n / cs, cs / xs
	printf "%-40s %10.3f %12s\n", "IDX, CPU s of a run", xc, ""
	printf "%-40s %10.3f %12s %13.2fx\n", "WebDataset, CPU s of a run (scan)", wc, "", wc / xc
	printf "%-40s %10.3f %12s %13.2fx\n", "WebDataset, CPU s of a run (cached index)", cc, "", cc / xc }'
