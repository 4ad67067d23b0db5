#!/usr/bin/env bash
# MosaicML MDS read speed against a Python MDS reader, and minibatch sweeps over MDS against the
# same data as IDX, in one run. The data: MNIST's 60000 training images (28x28 uint8) and labels
# (uint8), written as MDS by mlfeed (one ndarray:uint8:28,28 column and one uint8 column, 64 MiB
# shards, as MDSWriter writes them) and as IDX.
#   - read: a Python reader written here as Streaming's MDSReader reads (index.json, each shard's
#     offsets with numpy.frombuffer, every sample's columns decoded with numpy.frombuffer and
#     summed) against mlfeed (format/mds) decoding every chunk on one goroutine and summing every
#     value; wall clock and CPU time, the ratio Python / mlfeed (the goal: at least 10x);
#   - sweeps: `mlfeed batches --mb-size 256` randomized, the first sweep and the steady ones
#     (medians of 5 runs of $SWEEPS sweeps), over the MDS directory and over the two IDX files;
#     and the CPU time (user + system) of 20 sweeps, median of 5 runs; the ratios MDS / IDX (the
#     goal: at most 1.5).
# Needs ../shared/testdata/mnist (skips without it) and /usr/bin/python3 with numpy. A shared or
# busy machine spreads the figures by 20% or more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
PY=/usr/bin/python3
REPS=${REPS:-3}
SWEEPS=${SWEEPS:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-bench-mds.XXXXXX"); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
"$ML" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx"
"$ML" convert -q "$MN/train-labels-idx1-ubyte.gz" "$T/labels.idx"
"$ML" convert -q --to mds "$T/images.idx" "$T/labels.idx" "$T/mds"
sync

$PY - "$T/mds" "$REPS" >"$T/py.txt" <<'PYEOF'
import json, os, sys, time
import numpy as np
d, reps = sys.argv[1], int(sys.argv[2])

def decoder(enc):
    if enc.startswith("ndarray:"):
        _, dt, shape = enc.split(":")
        shape = tuple(int(x) for x in shape.split(","))
        return lambda v: np.frombuffer(v, dt).reshape(shape)
    return lambda v: np.frombuffer(v, enc)[0]

def read():
    with open(os.path.join(d, "index.json")) as f:
        index = json.load(f)
    total = 0
    for sh in index["shards"]:
        sizes = sh["column_sizes"]
        decs = [decoder(e) for e in sh["column_encodings"]]
        with open(os.path.join(d, sh["raw_data"]["basename"]), "rb") as f:
            data = f.read()
        n = int(np.frombuffer(data, np.uint32, 1)[0])
        offs = np.frombuffer(data, np.uint32, n + 1, 4).tolist()
        for k in range(n):
            s = data[offs[k]:offs[k + 1]]
            idx, lens = 0, []
            for sz in sizes:
                if sz is None:
                    lens.append(int(np.frombuffer(s, np.uint32, 1, idx)[0]))
                    idx += 4
                else:
                    lens.append(sz)
            for dec, ln in zip(decs, lens):
                total += int(dec(s[idx:idx + ln]).sum())
                idx += ln
    return total

best, cpu = float("inf"), float("inf")
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    read()
    best = min(best, time.perf_counter() - t)
    cpu = min(cpu, time.process_time() - c)
print("read", best, cpu)
PYEOF

MLFEED_BENCH_DIR="$T" go test -run '^$' -bench '^BenchmarkScript$' -benchtime "${REPS}x" -count 1 \
	./format/mds/ >"$T/go.txt" 2>&1 || { cat "$T/go.txt" >&2; exit 1; }
py=$(awk '$1 == "read" { print $2 }' "$T/py.txt")
pycpu=$(awk '$1 == "read" { print $3 }' "$T/py.txt")
go=$(gobench BenchmarkScript ns/op "$T/go.txt")
gocpu=$(gobench BenchmarkScript cpu-s/op "$T/go.txt")
mb=$(du -sm "$T/mds" | cut -f1)
echo "== MDS read: MNIST train, 60000 samples ($mb MB) (Python numpy.frombuffer reader vs mlfeed format/mds, one core)"
printf '%-40s %9s %9s %8s\n' "" "python s" "mlfeed s" "ratio"
printf '%-40s %9.4f %9.4f %7.1fx\n' "read every sample and value (wall)" "$py" "$go" "$(awk -v a="$py" -v b="$go" 'BEGIN { print a / b }')"
printf '%-40s %9.4f %9.4f %7.1fx\n' "the same, CPU time" "$pycpu" "$gocpu" "$(awk -v a="$pycpu" -v b="$gocpu" 'BEGIN { print a / b }')"

# engine INPUT...: "first steady" seconds, medians of 5 runs of $SWEEPS randomized sweeps
engine() { sweeps 5 "$ML" batches --mb-size 256 --sweeps "$SWEEPS" --seed 1 "$@"; }
# cpu INPUT...: user+system seconds of 20 randomized sweeps, median of 5 runs (the fairer figure
# on a loaded machine, where the wall clock of one sweep swings by 2x)
cpu() {
  for _ in 1 2 3 4 5; do
    TIMEFORMAT='%U %S'
    { time "$ML" batches --mb-size 256 --sweeps 20 --seed 1 "$@" >/dev/null; } 2>&1 | awk '{ print $1 + $2 }'
  done | median
}
read -r xf xs < <(engine "$T/images.idx" "$T/labels.idx")
read -r mf ms < <(engine "$T/mds")
xc=$(cpu "$T/images.idx" "$T/labels.idx")
mc=$(cpu "$T/mds")
echo
echo "== minibatch sweeps (mlfeed batches, mb 256, randomized, medians of 5 runs of $SWEEPS sweeps)"
awk -v xf="$xf" -v xs="$xs" -v mf="$mf" -v ms="$ms" -v n=60000 'BEGIN {
  printf "%-40s %10s %12s %10s\n", "", "seconds", "samples/s", "mds / idx"
  printf "%-40s %10.4f %12.0f\n", "IDX, first sweep", xf, n / xf
  printf "%-40s %10.4f %12.0f %9.2fx\n", "MDS, first sweep", mf, n / mf, mf / xf
  printf "%-40s %10.4f %12.0f\n", "IDX, steady sweep", xs, n / xs
  printf "%-40s %10.4f %12.0f %9.2fx\n", "MDS, steady sweep", ms, n / ms, ms / xs }'
awk -v xc="$xc" -v mc="$mc" 'BEGIN {
  printf "%-40s %10.3f\n", "IDX, CPU of 20 sweeps (open included)", xc
  printf "%-40s %10.3f %12s %9.2fx\n", "MDS, CPU of 20 sweeps (open included)", mc, "", mc / xc }'
