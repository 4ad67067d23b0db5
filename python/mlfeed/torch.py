"""PyTorch: mlfeed minibatches as a torch.utils.data.IterableDataset of dicts of tensors.

    from torch.utils.data import DataLoader
    from mlfeed.torch import MinibatchDataset
    ds = MinibatchDataset(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"],
                          minibatch_size=256, seed=1)
    for epoch in range(3):
        for mb in DataLoader(ds, batch_size=None):   # one sweep per epoch
            x, y = mb["features"], mb["labels"]     # torch tensors

The tensors share memory with the minibatch (torch.from_numpy): they are valid until the next
minibatch unless copy=True (in DataLoader workers, whose queues pickle tensors later, every
minibatch has memory of its own). The engine packs minibatches straight into that memory, and
the tensors over each buffer are made once and handed out again when the buffer comes back.
"""

import os

import torch
import torch.utils.data

import mlfeed

__all__ = ["MinibatchDataset"]


# The element types torch.from_numpy takes.
_TORCH_TYPES = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                "complex64", "complex128", "duration", "datetime"}


def _tensor(a):
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


def _fixed_tensor(c, i):
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
        x = t[0]
        if not x.requires_grad and x.shape == t[1] and x.stride() == t[2] and x.data_ptr() == t[3]:
            return x
    x = torch.from_numpy(c._samples(i))
    memo[i] = (x, x.shape, x.stride(), x.data_ptr())
    return x


class MinibatchDataset(torch.utils.data.IterableDataset):
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
    """

    def __init__(self, paths_or_dataset=None, masks=False, **kwargs):
        super().__init__()
        if isinstance(paths_or_dataset, mlfeed.Dataset):
            raise mlfeed.UsageError("MinibatchDataset takes paths, not an open Dataset: it "
                                    "opens the data in each DataLoader worker")
        self._paths = paths_or_dataset
        self._kwargs = dict(kwargs)
        self._masks = masks
        self._per_sweep = kwargs.get("max_sweeps") is None and kwargs.get("max_samples") is None
        self._src = None
        self._pid = None
        self._pending = None  # a state to restore when the source is created

    def _source(self):
        if self._src is not None and self._pid != os.getpid():
            self._src = None  # the parent's, in a forked DataLoader worker: unusable here
        if self._src is None:
            kw = dict(self._kwargs)
            info = torch.utils.data.get_worker_info()
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

    def __iter__(self):
        src = self._source()
        names = [st["name"] for st in src.streams]
        fixed = [st["storage"] == "dense" and st["dim"] > 0 and st["type"] in _TORCH_TYPES
                 for st in src.streams]
        while True:
            r = src._next()
            if r is None:
                return
            m, c = r
            out = {}
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

    def state_dict(self):
        """The position after the last minibatch yielded (MinibatchSource.state_dict)."""
        if self._src is None:
            return dict(self._pending) if self._pending is not None else {"minibatchSourcePosition": 0}
        return self._src.state_dict()

    def load_state_dict(self, state):
        """Continue from state: the next iteration yields what followed it."""
        if self._src is None:
            self._pending = dict(state)
        else:
            self._src.load_state_dict(state)

    def close(self):
        """Release the reader (also done when collected)."""
        if self._src is not None:
            self._src.close()
            self._src = None

    def __getstate__(self):
        # A DataLoader worker gets the settings, never the parent's open source.
        d = dict(self.__dict__)
        d["_src"] = None
        return d
