"""python/examples/train_mnist.py reaches 97% test accuracy on the CPU."""

import os
import re
import subprocess
import sys

from conftest import ROOT, corpus, need_checkout


def test_train_mnist():
    need_checkout("runs python/examples/train_mnist.py, which imports mlfeed from the checkout")
    data = os.path.dirname(corpus("mnist", "train-images-idx3-ubyte.gz"))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "python", "examples", "train_mnist.py"), data],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    acc = float(re.search(r"test accuracy: ([0-9.]+)%", p.stdout).group(1))
    assert acc >= 97.0, p.stdout
