"""PyTorch: mlfeed minibatches as a torch.utils.data.IterableDataset of dicts of tensors.

    from torch.utils.data import DataLoader
    from mlfeed.torch import MinibatchDataset
    ds = MinibatchDataset(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"],
                          minibatch_size=256, seed=1)
    for epoch in range(3):
        for mb in DataLoader(ds, batch_size=None):   # one sweep per epoch
            x, y = mb["features"], mb["labels"]     # uint8 (256, 28, 28), uint8 (256,)

The tensors share memory with the minibatch (torch.from_numpy): they are valid until the next
minibatch unless copy=True (in DataLoader workers, whose queues pickle tensors later, every
minibatch has memory of its own). The engine packs minibatches straight into that memory, and
the tensors over each buffer are made once and handed out again when the buffer comes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any, Dict, Iterator, Mapping, Optional, Union

import torch
import torch.utils.data

import mlfeed
from mlfeed import _data, _lib

__all__ = ["MinibatchDataset", "Batch"]


# The element types torch.from_numpy takes.
_TORCH_TYPES = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                "complex64", "complex128", "duration", "datetime"}


class Batch(Dict[str, Any]):
    """One minibatch as MinibatchDataset yields it: a dict {stream name: tensor}. A name it
    lacks raises KeyError listing the streams it has."""

    def __missing__(self, key: str) -> Any:
        raise KeyError("no stream %r in this minibatch: its keys are %s" % (
            key, ", ".join(repr(k) for k in self)))


def _tensor(a: Any) -> Any:
    """a minibatch array as a tensor sharing its memory; sparse matrices as CSR tensors; text
    and lists as they are."""
    if hasattr(a, "tocsr"):
        a = a.tocsr()
        return torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype("int64")),
                                       torch.from_numpy(a.indices.astype("int64")),
                                       torch.from_numpy(a.data), size=a.shape)
    if isinstance(a, list) or a.dtype == object or a.dtype.fields is not None:
        return a
    return torch.from_numpy(a)


def _fixed_tensor(c: _data.Chunk, i: int) -> torch.Tensor:
    """Stream i of chunk c, dense and one sample per sequence, as a tensor sharing its memory.

    A chunk over a buffer set is reused minibatch after minibatch (MinibatchSource._next), and
    so is its tensor: torch.from_numpy once per buffer set, not per minibatch. A tensor that
    the loop changed (its shape or strides in place, requires_grad, its storage) is not handed
    out again: a fresh view replaces it.
    """
    memo = c.memo
    if memo is None:
        memo = c.memo = [None] * len(c.streams)
    t = memo[i]
    if t is not None:
        old: torch.Tensor = t[0]
        if not old.requires_grad and old.shape == t[1] and old.stride() == t[2] and old.data_ptr() == t[3]:
            return old
    x = torch.from_numpy(c._samples(i))
    memo[i] = (x, x.shape, x.stride(), x.data_ptr())
    return x


class MinibatchDataset(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    """An IterableDataset of minibatches: each item is a dict {stream name: torch.Tensor}
    (a sparse stream as a sparse CSR tensor, text as a numpy array of str), one whole
    minibatch, so use it with DataLoader(ds, batch_size=None).

    Takes mlfeed.MinibatchSource's arguments. Each iteration yields one sweep (an epoch) and
    the next iteration continues with the next sweep, the minibatches exactly those `mlfeed
    batches --dump --sweeps N` prints; max_sweeps or max_samples bound the total instead.
    masks=True adds "<stream>.mask" (bool) for streams whose sequences have several samples.

    Distributed: workers and rank default to torchrun's WORLD_SIZE and RANK. With
    DataLoader(num_workers=K), each loader worker reads its share of every minibatch (the
    worker count becomes workers * K), so the loop gets K parts per minibatch. Loader workers
    must be started before the parent uses mlfeed when they fork (the default on Linux); the
    data is opened in each worker, lazily. state_dict/load_state_dict checkpoint the position
    (with num_workers=0).

    The arguments are checked here, before any data is opened: TypeError for an unknown
    keyword (DataLoader's batch_size or shuffle, say) or a wrong type, ValueError naming the
    argument and its range. One iteration runs at a time: an iteration started in another
    thread while one runs raises UsageError, so every minibatch goes to one loop exactly once.
    """

    def __init__(self, paths_or_dataset: Optional[Union[mlfeed.PathsArg, mlfeed.Mix]] = None, masks: bool = False,
                 **kwargs: Any) -> None:
        super().__init__()
        if isinstance(paths_or_dataset, mlfeed.Dataset):
            raise mlfeed.UsageError("MinibatchDataset takes paths, not an open Dataset: it "
                                    "opens the data in each DataLoader worker")
        mlfeed._check_source_arguments(paths_or_dataset, kwargs)
        self._paths = paths_or_dataset
        self._kwargs = dict(kwargs)
        self._masks = _lib.bool_arg(masks, "masks")
        self._per_sweep = kwargs.get("max_sweeps") is None and kwargs.get("max_samples") is None
        self._src: Optional[mlfeed.MinibatchSource] = None
        self._pid: Optional[int] = None
        self._pending: Optional[Dict[str, Any]] = None  # a state to restore when the source is created
        self._schema: Optional[mlfeed.Schema] = None
        self._lock = threading.Lock()
        self._running: Optional[threading.Thread] = None  # the thread whose iteration runs

    @property
    def schema(self) -> mlfeed.Schema:
        """The streams, as mlfeed.Dataset.schema describes them. Asked before the data is
        opened in this process, it is read in a child process, so that DataLoader workers
        forked later can still use mlfeed (Go does not survive fork)."""
        if self._src is not None and self._pid == os.getpid():
            return self._src.schema
        if self._schema is None:
            self._schema = self._read_schema()
        return self._schema

    def _read_schema(self) -> mlfeed.Schema:
        args = {k: self._kwargs[k] for k in ("format", "inputs", "options", "config", "defines", "cache")
                if self._kwargs.get(k) is not None}
        paths: Any = self._paths
        mix = self._kwargs.get("mix")
        if mlfeed._is_mix(paths):
            mix = paths
        if mix is not None:
            # Every data set of a mixture has the same streams: the first one's.
            first = mlfeed._mix_arg(mix)["sources"][0]
            paths = first.pop("paths")
            first.pop("weight")
            first.pop("name", None)
            args.update(first)
        if _lib.usable():
            return mlfeed.open(paths, **args).schema
        code = ("import json, sys, mlfeed\n"
                "a = json.loads(sys.argv[1])\n"
                "try:\n"
                "    with mlfeed.open(a.pop('paths'), **a) as ds: print(json.dumps(ds.schema))\n"
                "except mlfeed.Error as e:\n"
                "    print(json.dumps({'error': type(e).__name__, 'message': str(e), 'file': e.file}))\n")
        arg = dict(args, paths=_lib.paths_arg(paths))
        if "config" in arg:
            arg["config"] = _lib.path_arg(arg["config"], "config")
        env = dict(os.environ)
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(mlfeed.__file__)))
        env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.run([sys.executable, "-c", code, json.dumps(arg)], capture_output=True,
                           text=True, env=env)
        if p.returncode != 0:
            raise mlfeed.InternalError("mlfeed: reading the schema in a child process failed: "
                                       + p.stderr.strip()[-2000:])
        out = json.loads(p.stdout)
        if isinstance(out, dict):
            cls = getattr(mlfeed, out["error"], mlfeed.Error)
            raise cls(out["message"], file=out["file"])
        res: mlfeed.Schema = out
        return res

    def _source(self) -> mlfeed.MinibatchSource:
        if self._src is not None and self._pid != os.getpid():
            self._src = None  # the parent's, in a forked DataLoader worker: unusable here
        if self._src is None:
            kw = dict(self._kwargs)
            info = torch.utils.data.get_worker_info()  # type: ignore[no-untyped-call]
            if info is not None:
                # A loader worker's queue pickles tensors on a thread of its own, later: each
                # minibatch needs memory of its own.
                kw["copy"] = True
            if info is not None and info.num_workers > 1:
                workers = kw.get("workers")
                rank = kw.get("rank")
                if workers is None:
                    workers, rank = mlfeed.env_workers()
                kw["workers"] = workers * info.num_workers
                kw["rank"] = (rank or 0) * info.num_workers + info.id
            if self._per_sweep:
                kw["max_sweeps"] = mlfeed.INFINITELY_REPEAT
            self._src = mlfeed.MinibatchSource(self._paths, **kw)
            self._pid = os.getpid()
            if self._pending is not None:
                self._src.load_state_dict(self._pending)
                self._pending = None
        return self._src

    def __iter__(self) -> Iterator[Batch]:
        me = threading.current_thread()
        with self._lock:
            o = self._running
            if o is not None and o is not me and o.is_alive():
                raise mlfeed.UsageError(
                    "MinibatchDataset: thread %r is iterating over this data set; one iteration "
                    "runs at a time, so that each minibatch goes to one loop" % o.name)
            self._running = me
            try:
                src = self._source()
            except BaseException:
                self._running = None
                raise
        return self._iterate(src, me)

    def _iterate(self, src: mlfeed.MinibatchSource, me: threading.Thread) -> Iterator[Batch]:
        try:
            yield from self._batches(src)
        finally:
            with self._lock:
                if self._running is me:
                    self._running = None
                    src._owner = None  # the next iteration may run in another thread

    def _batches(self, src: mlfeed.MinibatchSource) -> Iterator[Batch]:
        names = [st["name"] for st in src.streams]
        fixed = [st["storage"] == "dense" and st["dim"] > 0 and st["type"] in _TORCH_TYPES
                 for st in src.streams]
        while True:
            r = src._next()
            if r is None:
                return
            m, c = r
            out = Batch()
            for i, name in enumerate(names):
                if fixed[i] and c.one_per_sequence(i):
                    out[name] = _fixed_tensor(c, i)  # the common case, quickly
                    continue
                out[name] = _tensor(c.padded(i))
                if self._masks and not c.one_per_sequence(i):
                    out[name + ".mask"] = torch.from_numpy(c.mask(i))
            yield out
            if self._per_sweep and m[4]:  # the end of a sweep
                return

    def state_dict(self) -> Dict[str, Any]:
        """The position after the last minibatch yielded (MinibatchSource.state_dict)."""
        if self._src is None:
            return dict(self._pending) if self._pending is not None else {"minibatchSourcePosition": 0}
        return self._src.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from state: the next iteration yields what followed it."""
        if self._src is None:
            self._pending = dict(state)
        else:
            self._src.load_state_dict(state)

    def close(self) -> None:
        """Release the reader (also done when collected)."""
        if self._src is not None:
            self._src.close()
            self._src = None

    def __getstate__(self) -> Dict[str, Any]:
        # A DataLoader worker gets the settings, never the parent's open source.
        d = dict(self.__dict__)
        d["_src"] = None
        d["_running"] = None
        del d["_lock"]
        return d

    def __setstate__(self, d: Dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._lock = threading.Lock()
