#!/usr/bin/env bash
# The Python package's speed, in one run: MNIST's training set as float32 (60000 x 784),
# minibatches of 256, shuffled, delivered as torch tensors to a Python `for` loop, as samples/s:
#   mlfeed: DataLoader(mlfeed.torch.MinibatchDataset(...), batch_size=None) over the IDX files,
#           with the defaults (also shown: keep_in_memory=True, each chunk decoded once);
#   (a)     DataLoader(TensorDataset(X, y), batch_size=256, shuffle=True) over tensors in memory;
#   (b)     a hand-written loop indexing in-memory tensors by torch.randperm, 256 at a time;
#   (c)     the Go engine alone (go test -bench 'Sweep/engine' in minibatch: the same shape, one
#           stream, synthetic chunks in memory);
#   (c')    the Go engine alone on the same two files: `mlfeed batches`' median sweep (same
#           defaults), which shows what the Python layer costs over the engine it drives.
# Also shown, to tell the layers apart: the same MinibatchDataset iterated directly (no
# DataLoader); what DataLoader(batch_size=None) itself costs per item (over a dataset that
# yields one ready dict); and the CPU time per minibatch, of the whole process (Go's threads
# included) and of the Python thread alone, which a busy machine does not distort as it does
# wall-clock rates.
# The machine may be shared: the methods are timed in turn, one sweep each (mlfeed with the
# defaults: a fresh reader for four sweeps, see below), over several rounds, and each rate is
# that of its fastest sweep (what it does when it has the cores to itself). It
# prints each rate and the ratios mlfeed/(a) (goal >= 10),
# mlfeed/(b) (goal >= 2) and mlfeed/(c) (goal >= 0.8), and mlfeed/(c'). Needs ../shared/testdata/mnist (skips
# without it) and Debian's python3-torch. A shared, busy machine spreads the figures by 20% or
# more; run it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
PY=/usr/bin/python3
$PY -c 'import torch' 2>/dev/null || { echo "skipped: python3-torch is not installed"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
bash scripts/python.sh
go build -o "$T/mlfeed" ./cmd/mlfeed
"$T/mlfeed" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
"$T/mlfeed" convert -q "$MN/train-labels-idx1-ubyte.gz" "$T/labels.idx"

GO_NS=$(go test -run '^$' -bench 'BenchmarkSweep/engine$' -benchtime 5x -count 5 ./minibatch |
  awk '/BenchmarkSweep\/engine/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print $i }' | sort -g | head -1)

CLI_SWEEP=$(for _ in 1 2 3; do
  "$T/mlfeed" batches --mb-size 256 --sweeps 8 --seed 1 "$T/images.idx" "$T/labels.idx" |
    awk '/^sweep times:/ { sub("s", "", $7); print $7 }'
done | sort -g | head -1)

PYTHONPATH=python $PY - "$T/images.idx" "$T/labels.idx" "$GO_NS" "$CLI_SWEEP" <<'PYEOF'
import sys, time
import torch
from torch.utils.data import DataLoader, TensorDataset
import mlfeed
from mlfeed.torch import MinibatchDataset

images, labels, go_ns, cli_sweep = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
N, MB = 60000, 256

ROUNDS = 7

def mlfeed_sweep_of(loader):
    def sweep():
        n = 0
        for mb in loader:
            x, y = mb["features"], mb["labels"]
            n += x.shape[0]
        return n
    return sweep

MBS = (N + MB - 1) // MB

ds = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, keep_in_memory=True)
mlfeed_sweep = mlfeed_sweep_of(DataLoader(ds, batch_size=None))

# With the defaults the reader decodes every chunk again each sweep, and it starts doing so
# for the next sweep as soon as the last minibatch of this one is planned (the first minibatch
# of a sweep reads nearly every chunk). A reader kept from one timed sweep to the next would
# decode in the background, off its own clock and on the next method's. So each timed run
# opens the files, reads SWEEPS sweeps and closes the reader (which stops and waits for what
# it read ahead); the first sweep's start-up (opening, first decoding into new memory) counts
# once in SWEEPS, as it would once in a training run's epochs. (keep_in_memory=True decodes
# once and reads nothing ahead: its reader is kept from run to run.)
SWEEPS = 4
def fresh_run(through_dataloader):
    def run():
        d = MinibatchDataset([images, labels], minibatch_size=MB, seed=1)
        loader = DataLoader(d, batch_size=None) if through_dataloader else d
        sweep = mlfeed_sweep_of(loader)
        n = sum(sweep() for _ in range(SWEEPS))
        d.close()
        return n
    return run
mlfeed_files_sweep = fresh_run(True)
mlfeed_direct_sweep = fresh_run(False)

class Ready(torch.utils.data.IterableDataset):
    """MBS items, each the same ready dict: what is left is DataLoader's own work."""
    def __iter__(self):
        d = {"features": torch.zeros(MB, 28, 28), "labels": torch.zeros(MB, 1, dtype=torch.uint8)}
        for _ in range(MBS):
            yield d
ready_loader = DataLoader(Ready(), batch_size=None)
def dataloader_only():
    n = 0
    for mb in ready_loader:
        n += MB
    return n
def plain_only():
    n = 0
    for mb in Ready():
        n += MB
    return n

with mlfeed.open([images, labels]) as d:
    data = d.read()
X = torch.from_numpy(data["features"])
Y = torch.from_numpy(data["labels"][:, 0]).long()
tl = DataLoader(TensorDataset(X, Y), batch_size=MB, shuffle=True)
def tensor_dataset_sweep():
    n = 0
    for x, y in tl:
        n += x.shape[0]
    return n

def randperm_sweep():
    n = 0
    perm = torch.randperm(N)
    for i in range(0, N, MB):
        idx = perm[i:i + MB]
        x, y = X[idx], Y[idx]
        n += x.shape[0]
    return n

methods = {"mlfeed": mlfeed_sweep, "files": mlfeed_files_sweep, "direct": mlfeed_direct_sweep,
           "a": tensor_dataset_sweep, "b": randperm_sweep, "dl": dataloader_only, "plain": plain_only}
for f in methods.values():
    f()  # untimed: warm up
# Per method, the time, process CPU time and Python thread CPU time of one sweep, from its
# fastest run.
sweeps = {k: SWEEPS if k in ("files", "direct") else 1 for k in methods}
best = {k: float("inf") for k in methods}
cpu = {k: float("inf") for k in methods}
thread = {k: float("inf") for k in methods}
for _ in range(ROUNDS):
    for k, f in methods.items():
        c, th, t = time.process_time(), time.thread_time(), time.perf_counter()
        n = f()
        t, c, th = time.perf_counter() - t, time.process_time() - c, time.thread_time() - th
        if t / sweeps[k] < best[k]:
            best[k], cpu[k], thread[k] = t / sweeps[k], c / sweeps[k], th / sweeps[k]
        assert n == sweeps[k] * (MBS * MB if k in ("dl", "plain") else N), (k, n)
r_keep, r_ml, r_a, r_b = (N / best[k] for k in ("mlfeed", "files", "a", "b"))
r_c = N / (go_ns * 1e-9)
r_c2 = N / cli_sweep
print("samples/s (fastest sweep): mlfeed %.0f, (a) TensorDataset DataLoader %.0f, "
      "(b) randperm loop %.0f, (c) Go engine %.0f, (c') Go engine on the files %.0f"
      % (r_ml, r_a, r_b, r_c, r_c2))
print("mlfeed with keep_in_memory=True: %.0f samples/s (%.1fx (a), %.2fx (b), %.2fx (c))"
      % (r_keep, r_keep / r_a, r_keep / r_b, r_keep / r_c))
us = lambda sec: sec / MBS * 1e6
print("mlfeed iterated directly (no DataLoader): %.0f samples/s (%.1fx (a), %.2fx (b), %.2fx (c)); "
      "DataLoader(batch_size=None) itself: %.1f us per item (a plain loop over the same items: %.1f us)"
      % (N / best["direct"], N / best["direct"] / r_a, N / best["direct"] / r_b, N / best["direct"] / r_c,
         us(best["dl"]), us(best["plain"])))
print("CPU per minibatch (fastest sweep): mlfeed %.0f us (Python thread %.0f us), directly %.0f us "
      "(Python thread %.0f us); wall %.0f us, directly %.0f us; (c) Go engine wall %.0f us"
      % (us(cpu["files"]), us(thread["files"]), us(cpu["direct"]), us(thread["direct"]),
         us(best["files"]), us(best["direct"]), go_ns / 1e3 / MBS))
print("ratios: mlfeed/(a) %.1fx (goal >= 10), mlfeed/(b) %.2fx (goal >= 2), mlfeed/(c) %.2fx "
      "(goal >= 0.8), mlfeed/(c') %.2fx" % (r_ml / r_a, r_ml / r_b, r_ml / r_c, r_ml / r_c2))
PYEOF
