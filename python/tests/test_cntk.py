"""mlfeed.cntk runs CNTK 2.x reader code with only the import changed.

cntk_style_training below is written as CNTK's own Python examples write their readers
(Examples/Image/Classification/MLP/Python/SimpleMNIST.py, the CNTK 103 tutorials): the one line
that differs from a CNTK script is the import.
"""

import json
import os

import numpy as np
import pytest

import mlfeed
from conftest import corpus
from test_batches import dump

# --- a CNTK script's reader code; only this import is changed (was: from cntk.io import ...)
from mlfeed.cntk import (MinibatchSource, CTFDeserializer, CBFDeserializer, StreamDef,
                         StreamDefs, INFINITELY_REPEAT, FULL_DATA_SWEEP)


def create_reader(path, is_training, input_dim, num_label_classes):
    return MinibatchSource(CTFDeserializer(path, StreamDefs(
        labels=StreamDef(field='L', shape=num_label_classes, is_sparse=False),
        features=StreamDef(field='F', shape=input_dim, is_sparse=False)
    )), randomize=is_training, max_sweeps=INFINITELY_REPEAT if is_training else 1)


def cntk_style_training(path, feature, label, minibatch_size=64, num_minibatches=40):
    reader_train = create_reader(path, True, 784, 10)
    input_map = {
        label: reader_train.streams.labels,
        feature: reader_train.streams.features
    }
    seen = []
    for i in range(num_minibatches):
        data = reader_train.next_minibatch(minibatch_size, input_map=input_map)
        seen.append((data[feature].asarray().copy(), data[label].asarray().copy(),
                     data[feature].num_samples, data[label].end_of_sweep))
    reader_test = create_reader(path, False, 784, 10)
    test_input_map = {
        label: reader_test.streams.labels,
        feature: reader_test.streams.features,
    }
    test_batches = 0
    while True:
        mb = reader_test.next_minibatch(512, input_map=test_input_map)
        if not mb:
            break
        test_batches += 1
    return seen, test_batches
# --- end of the CNTK-style code


class Variable:
    """Stands in for cntk.input_variable as input_map's keys."""

    def __init__(self, name):
        self.name = name


MNIST_CTF = "ctf/MNIST_dense.txt"
MNIST_INPUTS = ["--input", "features:dense:784:F", "--input", "labels:dense:10:L"]


def test_cntk_script_runs(cli):
    path = corpus("cntk", MNIST_CTF)
    feature, label = Variable("features"), Variable("labels")
    seen, test_batches = cntk_style_training(path, feature, label)
    assert test_batches == 2  # 1000 samples, minibatches of 512, then {} (max_sweeps=1)
    # The same minibatches as the engine with CNTK's default window (128 chunks): 64 samples
    # each, sweeps of 1000 samples (so a 40-sample minibatch ends each sweep).
    lines = dump(cli, [path], *MNIST_INPUTS, "--mb-size", 64, "--window", 128, "--sweeps", 3)[:40]
    assert len(seen) == 40 == len(lines)
    for (x, y, n, eos), line in zip(seen, lines):
        assert x.shape == (line["sequences"], 1, 784) and x.dtype == np.float32 and n == line["sequences"]
        np.testing.assert_array_equal(x[:, 0], np.array([s[0] for s in line["features"]], np.float32))
        np.testing.assert_array_equal(y[:, 0], np.array([s[0] for s in line["labels"]], np.float32))
    assert [e for *_, e in seen].count(True) == 2


def test_sequences_masks_and_sizes():
    path = corpus("cntk", "ctf/50x20_jagged_sequences_dense.txt")
    with pytest.raises(mlfeed.FormatError):  # 1.42057e+044 is no float32
        src = MinibatchSource(CTFDeserializer(path, StreamDefs(x=StreamDef(field="F0", shape=3))),
                              randomize=False, max_sweeps=1)
        while src.next_minibatch(100):
            pass
    src = MinibatchSource(CTFDeserializer(path, StreamDefs(x=StreamDef(field="F0", shape=3)), precision="double"),
                          randomize=False, max_sweeps=1)
    assert [s.name for s in src.stream_infos()] == ["x"] and src["x"].shape == (3,)
    mb = src.next_minibatch(30)
    d = mb[src.streams.x]
    seqs = d.as_sequences()
    a = d.asarray()
    assert len(d) == d.num_sequences == len(seqs) and d.num_samples == sum(len(s) for s in seqs) <= 30
    assert a.shape == (len(seqs), max(len(s) for s in seqs), 3)
    m = d.mask
    for q, s in enumerate(seqs):
        np.testing.assert_array_equal(a[q, : len(s)], s)
        assert m[q, 0] == 2 and (m[q, 1: len(s)] == 1).all() and (m[q, len(s):] == 0).all()
    # The minibatch size may change from call to call; the sweep continues where it was.
    total = d.num_samples
    for size in (5, 100, 17):
        mb = src.next_minibatch(size)
        total += mb[src.streams.x].num_samples
        assert mb[src.streams.x].num_samples <= size or mb[src.streams.x].num_sequences == 1
    while True:
        mb = src.next_minibatch(64)
        if not mb:
            break
        total += mb[src["x"]].num_samples
    assert total == 508 == mlfeed.info(path, inputs=["x:dense:3:F0"])["samples"]
    assert src.next_minibatch(10) == {}


def test_checkpoint_and_partitions():
    path = corpus("cntk", MNIST_CTF)
    defs = lambda: StreamDefs(features=StreamDef(field="F", shape=784), labels=StreamDef(field="L", shape=10))  # noqa: E731
    a = MinibatchSource(CTFDeserializer(path, defs()), randomization_seed=3)
    for _ in range(7):
        a.next_minibatch(100)
    st = a.get_checkpoint_state()
    assert json.loads(json.dumps(st)) == st and st["minibatchSourcePosition"] == 700
    want = [a.next_minibatch(100)[a.streams.labels].asarray().copy() for _ in range(5)]
    b = MinibatchSource(CTFDeserializer(path, defs()), randomization_seed=3)
    b.restore_from_checkpoint(st)
    for w in want:
        np.testing.assert_array_equal(b.next_minibatch(100)[b.streams.labels].asarray(), w)
    # Two partitions of a minibatch hold the whole minibatch between them.
    c = MinibatchSource(CTFDeserializer(path, defs()), randomization_seed=3)
    whole = c.next_minibatch(100)[c.streams.features].asarray()
    parts = []
    for p in range(2):
        s = MinibatchSource(CTFDeserializer(path, defs()), randomization_seed=3)
        parts.append(s.next_minibatch(100, num_data_partitions=2, partition_index=p)[s.streams.features].asarray())
    joined = np.concatenate(parts)
    assert joined.shape == whole.shape
    assert sorted(map(bytes, joined)) == sorted(map(bytes, whole))


def test_max_samples_and_errors():
    path = corpus("cntk", MNIST_CTF)
    defs = StreamDefs(features=StreamDef(field="F", shape=784), labels=StreamDef(field="L", shape=10))
    src = MinibatchSource(CTFDeserializer(path, defs), max_samples=250, randomize=False)
    sizes = []
    while True:
        mb = src.next_minibatch(100)
        if not mb:
            break
        sizes.append(mb[src.streams.features].num_samples)
    assert sizes == [100, 100, 50]
    src = MinibatchSource(CTFDeserializer(path, defs), max_samples=FULL_DATA_SWEEP)
    n = 0
    while True:
        mb = src.next_minibatch(300)
        if not mb:
            break
        n += mb[src.streams.labels].num_samples
    assert n == 1000
    with pytest.raises(ValueError):
        MinibatchSource(CTFDeserializer(path, defs), max_samples=10, max_sweeps=1)
    with pytest.raises(ValueError):
        CTFDeserializer(path, StreamDefs(features=StreamDef(shape=784)))
    with pytest.raises(mlfeed.UsageError):
        MinibatchSource(CTFDeserializer(path, defs), truncation_length=10)
    with pytest.raises(mlfeed.FormatError):
        bad = MinibatchSource(CTFDeserializer(corpus("cntk", "ctf/invalid_inputs.txt"),
                              StreamDefs(a=StreamDef(field="A", shape=1), b=StreamDef(field="B", shape=10, is_sparse=True))))
        while bad.next_minibatch(10):
            pass


def test_cbf_and_composite(tmp_path):
    f = corpus("cntk", "cbf/50x20_jagged_sequences_sparse.bin")
    src = MinibatchSource(CBFDeserializer(f), randomize=False, max_sweeps=1)
    info = src.stream_info("features")
    assert info.is_sparse and info.storage_format == "sparse"
    d = src.next_minibatch(50)[info]
    m = d.asarray()
    assert m.shape[1] == 100 and m.shape[0] == d.num_samples and m.format == "csr"
    renamed = MinibatchSource(CBFDeserializer(f, StreamDefs(words=StreamDef(field="features", shape=100, is_sparse=True))))
    assert list(renamed.streams) == ["words"]
    # Two text files of as many lines, composed as CNTK composes deserializers.
    (tmp_path / "a.ctf").write_text("".join("|a %d %d\n" % (i, -i) for i in range(10)))
    (tmp_path / "b.ctf").write_text("".join("|b %d\n" % (i * 10) for i in range(10)))
    comp = MinibatchSource([CTFDeserializer(str(tmp_path / "a.ctf"), StreamDefs(a=StreamDef(field="a", shape=2))),
                            CTFDeserializer(str(tmp_path / "b.ctf"), StreamDefs(b=StreamDef(field="b", shape=1)))],
                           randomization_seed=5, max_sweeps=1)
    mb = comp.next_minibatch(10)
    a, b = mb[comp.streams.a].asarray()[:, 0], mb[comp.streams.b].asarray()[:, 0]
    np.testing.assert_array_equal(a[:, 0] * 10, b[:, 0])
    assert sorted(a[:, 0].tolist()) == list(range(10))


# --- CNTK tutorial-style scripts (CNTK 103: logistic regression and MNIST), verbatim but for
# the import line: the `import cntk as C; C.io.*` form and the `from cntk.io import` form.
TUTORIAL_BODY = '''
def create_reader(path, is_training, input_dim, num_label_classes):
    labelStream = C.io.StreamDef(field='labels', shape=num_label_classes, is_sparse=False)
    featureStream = C.io.StreamDef(field='features', shape=input_dim, is_sparse=False)
    deserailizer = C.io.CTFDeserializer(path, C.io.StreamDefs(labels = labelStream, features = featureStream))
    return C.io.MinibatchSource(deserailizer,
       randomize = is_training, max_sweeps = C.io.INFINITELY_REPEAT if is_training else 1)
'''
TUTORIAL_FROM = '''
def create_reader(path, is_training, input_dim, num_label_classes):
    return MinibatchSource(CTFDeserializer(path, StreamDefs(
        labels = StreamDef(field='labels', shape=num_label_classes, is_sparse=False),
        features = StreamDef(field='features', shape=input_dim, is_sparse=False)
    )), randomize = is_training, max_sweeps = INFINITELY_REPEAT if is_training else 1)
'''
TUTORIAL_LOOP = '''
import json, sys
input_dim, num_output_classes = 4, 3
reader_train = create_reader(sys.argv[1], True, input_dim, num_output_classes)
input_map = {
    'label'  : reader_train.streams.labels,
    'input'  : reader_train.streams.features
}
shapes = []
for i in range(0, 5):
    data = reader_train.next_minibatch(25, input_map = input_map)
    shapes.append([list(data['input'].asarray().shape), list(data['label'].asarray().shape)])
reader_test = create_reader(sys.argv[1], False, input_dim, num_output_classes)
test_input_map = {
    'label'  : reader_test.streams.labels,
    'input'  : reader_test.streams.features,
}
features, labels = [], []
while True:
    data = reader_test.next_minibatch(16, input_map = test_input_map)
    if not data:
        break
    features += data['input'].asarray()[:, 0].tolist()
    labels += data['label'].asarray()[:, 0].tolist()
print(json.dumps({"shapes": shapes, "features": features, "labels": labels}))
'''


def test_cntk_tutorial_scripts(tmp_path):
    """A CNTK tutorial's reader code runs in a real Python process with only the import
    changed, in both of CNTK's forms, on CTF written as Python writes floats (17 significant
    digits), which the declared float32 streams read as CNTK reads them: rounded to float32."""
    import random
    import subprocess
    import sys
    from conftest import ROOT
    rng = random.Random(5)
    rows = [[rng.gauss(0, 1) for _ in range(4)] for _ in range(100)]
    classes = [rng.randrange(3) for _ in range(100)]
    data = tmp_path / "Train_cntk_text.txt"
    with open(data, "w") as f:
        for r, c in zip(rows, classes):
            f.write("|labels %s |features %s\n" % (" ".join("1" if k == c else "0" for k in range(3)),
                                                   " ".join(repr(v) for v in r)))
    outs = []
    for head, body in (("import mlfeed.cntk as C  # was: import cntk as C\n", TUTORIAL_BODY),
                       ("from mlfeed.cntk.io import MinibatchSource, CTFDeserializer, StreamDef, StreamDefs, "
                        "INFINITELY_REPEAT  # was: from cntk.io import ...\n", TUTORIAL_FROM)):
        script = tmp_path / "tutorial.py"
        script.write_text(head + body + TUTORIAL_LOOP)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        p = subprocess.run([sys.executable, str(script), str(data)], capture_output=True, text=True, env=env,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(json.loads(p.stdout))
    assert outs[0] == outs[1]
    out = outs[0]
    assert out["shapes"] == [[[25, 1, 4], [25, 1, 3]]] * 5
    np.testing.assert_array_equal(np.array(out["features"], np.float32), np.array(rows, np.float32))
    np.testing.assert_array_equal(np.argmax(out["labels"], axis=1), classes)
