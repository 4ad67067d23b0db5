#!/usr/bin/env python3
"""Train a small PyTorch model on MNIST read by mlfeed, on the CPU, in a few minutes.

    python3 python/examples/train_mnist.py [DATA_DIR] [--epochs 5]

DATA_DIR holds the four MNIST IDX files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz; gzipped or not); by default
../shared/testdata/mnist beside the repository. Any format mlfeed reads works the same way:
convert the files with `mlfeed convert` (or mlfeed.convert) and pass the new names to mlfeed.

The training set comes as shuffled minibatches (CNTK's block randomizer; a new order each
epoch) from mlfeed.torch.MinibatchDataset; the pixels stay uint8 until the model needs them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # run from a checkout without installing

import mlfeed  # noqa: E402
from mlfeed.torch import MinibatchDataset  # noqa: E402


def find(data_dir: str, stem: str) -> str:
    for name in (stem, stem + ".gz"):
        p = os.path.join(data_dir, name)
        if os.path.exists(p):
            return p
    sys.exit("train_mnist: %s(.gz) not found in %s" % (stem, data_dir))


def main() -> float:
    default_dir = os.path.join(HERE, "..", "..", "..", "shared", "testdata", "mnist")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir", nargs="?", default=default_dir)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--mb-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    train = [find(args.data_dir, "train-images-idx3-ubyte"), find(args.data_dir, "train-labels-idx1-ubyte")]
    test = [find(args.data_dir, "t10k-images-idx3-ubyte"), find(args.data_dir, "t10k-labels-idx1-ubyte")]
    torch.manual_seed(args.seed)

    # One item per minibatch: {"features": uint8 (N, 28, 28), "labels": uint8 (N,)}.
    loader = DataLoader(MinibatchDataset(train, minibatch_size=args.mb_size, seed=args.seed),
                        batch_size=None)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for mb in loader:
            x = mb["features"].float().div_(255)
            y = mb["labels"].long()
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            n += len(y)
        print("epoch %d: loss %.4f over %d samples (%.1fs)" % (epoch + 1, total / n, n, time.time() - start))

    model.eval()
    with mlfeed.open(test) as ds, torch.no_grad():
        d = ds.read()
        x = torch.from_numpy(d["features"]).float().div_(255)
        y = torch.from_numpy(d["labels"]).long()
        acc = (model(x).argmax(1) == y).float().mean().item()
    print("test accuracy: %.2f%% on %d images (%.1fs in all)" % (100 * acc, len(y), time.time() - start))
    return float(acc)


if __name__ == "__main__":
    main()
