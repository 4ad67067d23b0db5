#!/usr/bin/env bash
# The Python package's speed, in one run: MNIST's training set as float32 (60000 x 784),
# minibatches of 256, shuffled, delivered as torch tensors to a Python `for` loop, as samples/s:
#   mlfeed: DataLoader(mlfeed.torch.MinibatchDataset(...), batch_size=None) over the IDX files,
#           with the defaults, as docs/python.md uses it: one dataset for the whole run, an
#           epoch per iteration (also shown: a fresh dataset every four sweeps, so that opening
#           and the first sweep count; and keep_in_memory=True);
#   (a)     DataLoader(TensorDataset(X, y), batch_size=256, shuffle=True) over tensors in memory;
#   (b)     a hand-written loop indexing in-memory tensors by torch.randperm, 256 at a time,
#           timed one sweep a run (also shown: SWEEPS sweeps a run, as mlfeed's kept reader is
#           timed: the loop sometimes gets faster from sweep to sweep, once 105-110 -> 92-96 us
#           a minibatch over ten on the 2-core VM; over four, (b) was below its one-sweep
#           figure in each of eight runs, by 1-16%);
#   (c)     the Go engine alone (go test -bench 'Sweep/engine' in minibatch: the same shape, one
#           stream, synthetic chunks in memory);
#   (c')    the Go engine alone on the same two files: `mlfeed batches`' median sweep (same
#           defaults), which shows what the Python layer costs over the engine it drives.
# Also shown, to tell the layers apart: the same MinibatchDataset iterated directly (no
# DataLoader); what DataLoader(batch_size=None) itself costs per item (over a dataset that
# yields one ready dict); the CPU time per minibatch, of the whole process (Go's threads
# included) and of the Python thread alone, which a busy machine does not distort as it does
# wall-clock rates; and the setup the rates leave out (mlfeed's open to first minibatch, the
# peers' loading of the data set into tensors).
# The machine may be shared: the methods are timed in turn over several rounds, each timed run
# right after an untimed one of the same method (so that it finds the caches as its own loop
# leaves them, not as the previous method did), and each rate is that of its fastest run (what
# it does when it has the cores to itself). A kept mlfeed
# reader is charged for what it does after its timed run (see kept_run). It prints each rate
# and the ratios mlfeed/(a) (goal >= 10), mlfeed/(b) (goal >= 1 at equal threads) and
# mlfeed/(c) (goal >= 0.8), and mlfeed/(c').
# Every peer gets the same cores: mlfeed's readers run with threads=N and torch with
# torch.set_num_threads(N), N = $THREADS, default every core (mlfeed's own default; torch's is
# fewer on some machines), and the output says so.
# Then the training epoch: one epoch of python/examples/train_mnist.py's network (784-256-10,
# Adam, minibatches of 128 uint8 images made float in the loop, as the example does), on the
# CPU, from the same initial weights, fed by mlfeed (DataLoader(MinibatchDataset)), by the
# hand-written randperm gather (b) and by DataLoader(TensorDataset, shuffle=True) (a), the
# fastest of $EPOCH_ROUNDS (default 3) epochs of each, timed in turn; also the model alone (the
# same steps over the data in file order, sliced: nothing gathered), the floor. Goals:
# mlfeed's epoch <= 0.9x (b)'s and <= 0.5x (a)'s. Beside the wall-clock ratios it prints those
# by CPU time (a busy machine makes a loop that never blocks wait longest for the cores), and
# each part of a step alone (the model's step, each feeder's next minibatch; the fastest of
# many short timings), which bound the ratio any feeder can reach. $PARTS ("loop,train", the default, or one of
# them) picks what runs; $ROUNDS the rounds of the loop (default 7).
# Needs ../shared/testdata/mnist (skips without it) and Debian's python3-torch. A shared, busy
# machine spreads the figures by 20% or more; run it twice.
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
"$T/mlfeed" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images8.idx"  # uint8, for training
THREADS=${THREADS:-$(nproc)}
PARTS=${PARTS:-loop,train}

GO_NS=0 CLI_SWEEP=0
if [[ $PARTS == *loop* ]]; then
GO_NS=$(go test -run '^$' -bench 'BenchmarkSweep/engine$' -benchtime 5x -count 5 ./minibatch |
  awk '/BenchmarkSweep\/engine/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print $i }' | sort -g | head -1)

CLI_SWEEP=$(for _ in 1 2 3; do
  "$T/mlfeed" batches --mb-size 256 --sweeps 8 --seed 1 "$T/images.idx" "$T/labels.idx" |
    awk '/^sweep times:/ { sub("s", "", $7); print $7 }'
done | sort -g | head -1)
fi

PYTHONPATH=python $PY - "$T/images.idx" "$T/labels.idx" "$GO_NS" "$CLI_SWEEP" "$THREADS" "$PARTS" "$T/images8.idx" <<'PYEOF'
import os, sys, time
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import mlfeed
from mlfeed.torch import MinibatchDataset

images, labels, go_ns, cli_sweep = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
THREADS, PARTS, images8 = int(sys.argv[5]), sys.argv[6].split(","), sys.argv[7]
N, MB = 60000, 256
# The same cores for every peer: torch's threads (its gathers, its model) and mlfeed's.
torch_default = torch.get_num_threads()
torch.set_num_threads(THREADS)
print("threads: mlfeed threads=%d, torch.set_num_threads(%d) (torch's default here: %d); "
      "%d cores; load average %.1f at the start" % (THREADS, THREADS, torch_default,
                                                     os.cpu_count() or 0, os.getloadavg()[0]))

ROUNDS = int(os.environ.get("ROUNDS", "7"))

def loop_part():
    def mlfeed_sweep_of(loader):
        def sweep():
            n = 0
            for mb in loader:
                x, y = mb["features"], mb["labels"]
                n += x.shape[0]
            return n
        return sweep

    MBS = (N + MB - 1) // MB

    # The documented use: one MinibatchDataset for the whole run, each iteration an epoch. A
    # reader kept from one timed run to the next can work after its timed loop (it reads ahead and
    # packs the next minibatches), on the next method's clock: each timed run reads SWEEPS sweeps
    # in a row, and then the CPU time the process spends in a short sleep (what the reader still
    # does) is added to the run's time, as if it ran on the clock and on one core.
    SWEEPS = 4
    def settle():
        c = time.process_time()
        time.sleep(0.03)
        return time.process_time() - c

    def kept_run(dataset, through_dataloader, sweeps):
        sweep = mlfeed_sweep_of(DataLoader(dataset, batch_size=None) if through_dataloader else dataset)
        def run():
            return sum(sweep() for _ in range(sweeps))
        return run
    kept = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, threads=THREADS)
    kept_direct = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, threads=THREADS)
    in_memory = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, keep_in_memory=True, threads=THREADS)
    mlfeed_sweep = kept_run(kept, True, SWEEPS)
    mlfeed_direct_sweep = kept_run(kept_direct, False, SWEEPS)
    mlfeed_keep_sweep = kept_run(in_memory, True, SWEEPS)

    # A fresh MinibatchDataset every SWEEPS sweeps: opening the files and the first sweep (the
    # first decoding into new memory, the pages first mapped) count once in SWEEPS.
    def fresh_run(through_dataloader):
        def run():
            d = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, threads=THREADS)
            loader = DataLoader(d, batch_size=None) if through_dataloader else d
            sweep = mlfeed_sweep_of(loader)
            n = sum(sweep() for _ in range(SWEEPS))
            d.close()
            return n
        return run
    mlfeed_files_sweep = fresh_run(True)

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

    # Setup, not timed with the rest: mlfeed's time from a new MinibatchDataset to its first
    # minibatch, and the peers' time to load the data set into tensors (with numpy, from the same
    # IDX files).
    t = time.perf_counter()
    first = MinibatchDataset([images, labels], minibatch_size=MB, seed=1, threads=THREADS)
    next(iter(DataLoader(first, batch_size=None)))
    first.close()
    setup_mlfeed = time.perf_counter() - t
    t = time.perf_counter()
    X = torch.from_numpy(np.fromfile(images, ">f4", offset=16).astype(np.float32).reshape(N, 28, 28))
    Y = torch.from_numpy(np.fromfile(labels, np.uint8, offset=8)).long()
    setup_peers = time.perf_counter() - t
    with mlfeed.open([images, labels]) as d:  # the same data, read by mlfeed
        data = d.read()
    assert torch.equal(X, torch.from_numpy(data["features"])) and torch.equal(Y, torch.from_numpy(data["labels"].reshape(-1)).long())
    del data
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

    methods = {"mlfeed": mlfeed_sweep, "direct": mlfeed_direct_sweep, "keep": mlfeed_keep_sweep,
               "fresh": mlfeed_files_sweep, "a": tensor_dataset_sweep, "b": randperm_sweep,
               "b_run": lambda: sum(randperm_sweep() for _ in range(SWEEPS)),
               "dl": dataloader_only, "plain": plain_only}
    kept_methods = ("mlfeed", "direct", "keep")
    for f in methods.values():
        f()  # untimed: warm up
    # Per method, the time, process CPU time and Python thread CPU time of one sweep, from its
    # fastest run.
    sweeps = {k: SWEEPS if k in ("mlfeed", "direct", "keep", "fresh", "b_run") else 1 for k in methods}
    best = {k: float("inf") for k in methods}
    cpu = {k: float("inf") for k in methods}
    thread = {k: float("inf") for k in methods}
    after = {k: 0.0 for k in kept_methods}  # the most CPU time a kept reader spent after its run
    for _ in range(ROUNDS):
        for k, f in methods.items():
            # Untimed first: the timed run finds the caches as a loop of its own method leaves
            # them. The methods take turns over two 188 MB copies of the data (the files, and the
            # peers' tensors): the last-level cache holds a good part of one, and a method timed
            # right after another started with the other's data there (mlfeed 58 us a minibatch
            # kept warm, 63-64 us right after a randperm loop over X).
            f()
            if k in kept_methods:
                settle()
            c, th, t = time.process_time(), time.thread_time(), time.perf_counter()
            n = f()
            t, c, th = time.perf_counter() - t, time.process_time() - c, time.thread_time() - th
            if k in kept_methods:
                late = settle()
                after[k] = max(after[k], late)
                t, c = t + late, c + late
            if t / sweeps[k] < best[k]:
                best[k], cpu[k], thread[k] = t / sweeps[k], c / sweeps[k], th / sweeps[k]
            assert n == sweeps[k] * (MBS * MB if k in ("dl", "plain") else N), (k, n)
    r_ml, r_keep, r_fresh, r_a, r_b = (N / best[k] for k in ("mlfeed", "keep", "fresh", "a", "b"))
    r_c = N / (go_ns * 1e-9)
    r_c2 = N / cli_sweep
    us = lambda sec: sec / MBS * 1e6
    ratios = lambda r: "%.1fx (a), %.2fx (b), %.2fx (c)" % (r / r_a, r / r_b, r / r_c)
    print("samples/s (fastest run): mlfeed %.0f, (a) TensorDataset DataLoader %.0f, "
          "(b) randperm loop %.0f, (c) Go engine %.0f, (c') Go engine on the files %.0f"
          % (r_ml, r_a, r_b, r_c, r_c2))
    print("mlfeed: one MinibatchDataset for the whole run, %d sweeps a run; what it did after its "
          "runs (at most %.1f ms of CPU) is counted in" % (SWEEPS, after["mlfeed"] * 1e3))
    print("mlfeed with a fresh MinibatchDataset every %d sweeps (opening and the first sweep "
          "counted): %.0f samples/s (%s)" % (SWEEPS, r_fresh, ratios(r_fresh)))
    print("mlfeed with keep_in_memory=True: %.0f samples/s (%s)" % (r_keep, ratios(r_keep)))
    print("mlfeed iterated directly (no DataLoader): %.0f samples/s (%s); "
          "DataLoader(batch_size=None) itself: %.1f us per item (a plain loop over the same items: %.1f us)"
          % (N / best["direct"], ratios(N / best["direct"]), us(best["dl"]), us(best["plain"])))
    print("(b) timed over %d sweeps in a row, as mlfeed is: %.0f samples/s (mlfeed/(b) %.2fx)"
          % (SWEEPS, N / best["b_run"], best["b_run"] / best["mlfeed"]))
    print("setup (not in the rates): mlfeed from a new MinibatchDataset to its first minibatch %.0f ms; "
          "(a), (b) loading the data set into tensors %.0f ms" % (setup_mlfeed * 1e3, setup_peers * 1e3))
    print("CPU per minibatch (fastest run): mlfeed %.0f us (Python thread %.0f us), directly %.0f us "
          "(Python thread %.0f us), fresh %.0f us; wall %.0f us, directly %.0f us, fresh %.0f us; "
          "(c) Go engine wall %.0f us; (b) CPU %.0f us, wall %.0f us"
          % (us(cpu["mlfeed"]), us(thread["mlfeed"]), us(cpu["direct"]), us(thread["direct"]),
             us(cpu["fresh"]), us(best["mlfeed"]), us(best["direct"]), us(best["fresh"]), go_ns / 1e3 / MBS,
             us(cpu["b"]), us(best["b"])))
    print("by CPU time per minibatch (a busy machine makes loops that never block wait longest): "
          "mlfeed/(b) %.2fx, mlfeed/(a) %.1fx (the inverse ratio of CPU time)"
          % (cpu["b"] / cpu["mlfeed"], cpu["a"] / cpu["mlfeed"]))
    goals = (("(a)", r_ml / r_a, 10), ("(b)", r_ml / r_b, 1), ("(c)", r_ml / r_c, 0.8))
    print("ratios: mlfeed/(a) %.1fx (goal >= 10), mlfeed/(b) %.2fx (goal >= 1, equal threads), mlfeed/(c) %.2fx "
          "(goal >= 0.8), mlfeed/(c') %.2fx" % (*(r for _, r, _ in goals), r_ml / r_c2))
    # Judged on the unrounded ratios: 0.797 prints as 0.80x but misses its goal.
    print("goals met: " + ", ".join("%s %s" % (k, "yes" if r >= g else "no (%.3fx)" % r) for k, r, g in goals))


# The training epoch: train_mnist.py's network on the CPU, one epoch from the same initial
# weights, fed by mlfeed, the randperm gather (b) and DataLoader(TensorDataset) (a); the model
# alone over the data in file order (views, nothing gathered) is the floor. Minibatches of 128 uint8 images, made float in
# the loop as the example does.
def train_part():
    TMB = 128
    X8 = torch.from_numpy(np.fromfile(images8, np.uint8, offset=16).reshape(N, 28, 28).copy())
    Y8 = torch.from_numpy(np.fromfile(labels, np.uint8, offset=8).copy())
    loss_fn = nn.CrossEntropyLoss()
    def epoch(batches):
        torch.manual_seed(1)
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        c, th, t = time.process_time(), time.thread_time(), time.perf_counter()
        n, total = 0, 0.0
        for xb, yb in batches():
            x = xb.float().div_(255)
            y = yb.long()
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            n += len(y)
        assert n == N, n
        return (time.perf_counter() - t, time.process_time() - c, total / n,
                time.thread_time() - th)
    ds = MinibatchDataset([images8, labels], minibatch_size=TMB, seed=1, threads=THREADS)
    loader = DataLoader(ds, batch_size=None)
    def fed_by_mlfeed():
        for mb in loader:
            yield mb["features"], mb["labels"]
    def fed_by_hand():
        perm = torch.randperm(N)
        for i in range(0, N, TMB):
            idx = perm[i:i + TMB]
            yield X8[idx], Y8[idx]
    tl = DataLoader(TensorDataset(X8, Y8), batch_size=TMB, shuffle=True)
    def fed_by_dataloader():
        yield from tl
    def model_alone():  # the data in file order, as views: nothing gathered, nothing copied
        for i in range(0, N, TMB):
            yield X8[i:i + TMB], Y8[i:i + TMB]
    methods = {"mlfeed": fed_by_mlfeed, "b": fed_by_hand, "a": fed_by_dataloader, "model": model_alone}
    rounds = int(os.environ.get("EPOCH_ROUNDS", "3"))
    best = {k: (float("inf"), 0.0, 0.0, 0.0) for k in methods}
    order = list(methods)
    for i in range(rounds):
        # Each round in another order, so that no method always follows the same one.
        for k in order[i % len(order):] + order[:i % len(order)]:
            r = epoch(methods[k])
            if r[0] < best[k][0]:
                best[k] = r
    t = {k: v[0] for k, v in best.items()}
    print("training epoch (%d minibatches of %d, torch %d threads, mlfeed threads=%d; fastest of "
          "%d): mlfeed %.2f s, (b) randperm gather %.2f s, (a) DataLoader(TensorDataset) %.2f s, "
          "the model alone %.2f s" % ((N + TMB - 1) // TMB, TMB, THREADS, THREADS, rounds,
                                      t["mlfeed"], t["b"], t["a"], t["model"]))
    print("training epoch CPU: mlfeed %.2f s, (b) %.2f s, (a) %.2f s, the model alone %.2f s; "
          "final loss mlfeed %.3f, (b) %.3f, (a) %.3f" % (best["mlfeed"][1], best["b"][1],
          best["a"][1], best["model"][1], best["mlfeed"][2], best["b"][2], best["a"][2]))
    print("training epoch CPU of the training thread alone: mlfeed %.2f s, (b) %.2f s, (a) %.2f s, "
          "the model alone %.2f s" % (best["mlfeed"][3], best["b"][3], best["a"][3], best["model"][3]))
    goals = (("(b)", t["mlfeed"] / t["b"], 0.9), ("(a)", t["mlfeed"] / t["a"], 0.5))
    print("training epoch ratios: mlfeed/(b) %.3fx (goal <= 0.9), mlfeed/(a) %.3fx (goal <= 0.5); "
          "the model alone/(b) %.3fx, the best any feeder can reach against (b)"
          % (goals[0][1], goals[1][1], t["model"] / t["b"]))
    # A busy machine (other processes waiting for the cores) lengthens a loop that never
    # blocks more than one that does (mlfeed's waits for its readers): the CPU time each spent
    # is the check on the wall-clock ratios. The model alone is the floor in both.
    cpu_t = {k: v[1] for k, v in best.items()}
    print("training epoch ratios by CPU time: mlfeed/(b) %.3fx, mlfeed/(a) %.3fx; the model "
          "alone/(b) %.3fx, the model alone/(a) %.3fx" % (cpu_t["mlfeed"] / cpu_t["b"],
          cpu_t["mlfeed"] / cpu_t["a"], cpu_t["model"] / cpu_t["b"], cpu_t["model"] / cpu_t["a"]))
    print("training goals met: " + ", ".join("%s %s" % (k, "yes" if r <= g else "no (%.3fx)" % r)
                                             for k, r, g in goals))
    # What a step costs, each part alone: the fastest of many short timings, which a busy
    # machine disturbs least. An epoch fed by X cannot take less than the model's steps, so
    # model / (model + X's own work) bounds mlfeed's ratio to X from below, whatever mlfeed
    # overlaps.
    it = (mb for _ in range(1000) for mb in loader)
    tl_all = (b for _ in range(1000) for b in tl)
    perm = torch.randperm(N)
    pos = [0]
    def gather():
        j = pos[0] % (N // TMB)
        pos[0] += 1
        idx = perm[j * TMB:(j + 1) * TMB]
        return X8[idx], Y8[idx]
    torch.manual_seed(1)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = X8[:TMB], Y8[:TMB]
    def model_step():
        opt.zero_grad()
        loss_fn(model(xs.float().div_(255)), ys.long()).backward()
        opt.step()
    def fastest(f, reps):
        b = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(5):
                f()
            b = min(b, (time.perf_counter() - t) / 5)
        return b * 1e6
    step_us = {"model": fastest(model_step, 200), "b": fastest(gather, 400),
               "a": fastest(lambda: next(tl_all), 100), "mlfeed": fastest(lambda: next(it), 400)}
    print("a step's parts alone (fastest of many, us): the model's step %.0f, (b) the gather %.1f, "
          "(a) a DataLoader(TensorDataset) batch %.1f, mlfeed's next minibatch %.1f"
          % (step_us["model"], step_us["b"], step_us["a"], step_us["mlfeed"]))
    print("so the best ratio any feeder can reach: against (b) %.3fx, against (a) %.3fx"
          % (step_us["model"] / (step_us["model"] + step_us["b"]),
             step_us["model"] / (step_us["model"] + step_us["a"])))
    ds.close()


if "loop" in PARTS:
    loop_part()
if "train" in PARTS:
    train_part()
PYEOF
