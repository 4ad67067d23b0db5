"""mlfeed: machine-learning training data for Python, read by mlfeed's Go engine.

    import mlfeed
    with mlfeed.open(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"]) as ds:
        print(ds.schema, len(ds))
        first = ds.read(0, 10)          # {"images": uint8 array (10, 28, 28), "labels": ...}
    for mb in mlfeed.MinibatchSource(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"],
                                     minibatch_size=256, seed=1):
        x, y = mb["images"], mb["labels"]   # numpy views, valid until the next minibatch

mlfeed.torch.MinibatchDataset feeds PyTorch and mlfeed.cntk offers CNTK 2.x's reader API. The
minibatches are exactly those `mlfeed batches --dump` prints for the same data and settings.
See docs/python.md.
"""

import ctypes
import json
import math
import os

from . import _lib, _data
from ._errors import (Error, FormatError, UsageError, FileNotFound, FileError,
                      InternalError, ForkError)

#: This package's version. In the repository it is the next release's, as a development version;
#: scripts/release.sh writes the release's version here in the sdist and wheel it builds, the one
#: it stamps into the CLI (`mlfeed version`) of the same release.
__version__ = "0.3.0.dev0"

__all__ = ["open", "info", "convert", "merge", "validate", "formats", "Dataset", "MinibatchSource",
           "Minibatch", "Error", "FormatError", "UsageError", "FileNotFound", "FileError",
           "InternalError", "ForkError", "INFINITELY_REPEAT"]

#: For max_sweeps: read sweep after sweep without end.
INFINITELY_REPEAT = float("inf")

def open(paths=None, format=None, inputs=None, options=None, config=None, defines=None):
    """Open a data set: one file, several that hold one record set each (IDX images and
    labels), or the data files of a CNTK config's reader section.

    paths: a path or a list of paths (None with config=).
    format: the input format name (default: detected from the bytes, then the name).
    inputs: CTF stream declarations, "NAME:dense|sparse:DIM[:ALIAS[:TYPE]]" strings or dicts
        {"name", "storage", "dim", "alias", "type"} (the CLI's --input).
    options: format-specific reader options {key: value} (the CLI's --opt).
    config: a CNTK configuration "FILE[:SECTION]" whose reader section declares the files,
        streams and options; defines: {NAME: value} for its $NAME$ variables.

    Returns a Dataset, which is a context manager.
    """
    return Dataset(paths, format=format, inputs=inputs, options=options, config=config,
                   defines=defines)


def info(paths=None, chunks=False, **kw):
    """The description `mlfeed info --json` prints: {"format", "streams", "sequences",
    "samples", "chunks", ...}; chunks=True adds the chunk table. Takes open()'s arguments."""
    args = _lib.open_args(paths, **kw)
    args["chunks"] = bool(chunks)
    return _lib.call("info", args)


def formats():
    """The names of the formats this build reads."""
    return _lib.call("formats", {})


def convert(inputs, output, to=None, type=None, densify=False, streams=None, compress=None,
            compat=None, chunk_size=None, write_options=None, input=None, format=None,
            options=None, config=None, defines=None, shards=None, shard_size=None, task=None):
    """Convert a data set to another format, as `mlfeed convert` does: lossless or an error,
    streamed chunk by chunk, the output written atomically.

    inputs: a path or a list of paths read as one data set; output: the output path, whose
    extension names the format unless to= does. type: convert numeric streams to this element
    type ("float32", ...); densify: store sparse streams densely; streams: keep only these
    streams, in this order; compress, compat, chunk_size, write_options: the writer's options
    (--compress, --compat, --chunk-size, --write-opt). input, format, options, config,
    defines: how to read the inputs (open()'s inputs, format, options, config, defines).

    shards, shard_size, task: write output as a directory of shards and a manifest, as
    `mlfeed convert --shards N / --shard-size SIZE / --task I/N` do (to= names the format);
    task=(i, n) writes only task i's share and a partial manifest, which merge() joins.
    Returns output.
    """
    args = _lib.open_args(inputs, format=format, inputs=input, options=options, config=config,
                          defines=defines)
    args.update(_lib.clean({
        "output": os.fsdecode(output), "to": to, "type": type, "densify": bool(densify),
        "streams": list(streams) if streams else None, "compress": compress, "compat": compat,
        "chunk_size": chunk_size, "shards": shards, "shard_size": shard_size,
        "task": [int(task[0]), int(task[1])] if task is not None else None,
        "write_options": {str(k): _lib._param(v) for k, v in write_options.items()} if write_options else None,
    }))
    return _lib.call("convert", args)


def merge(directory):
    """Join the partial manifests that the tasks of a sharded conversion wrote into directory
    into the data set's manifest, as `mlfeed merge` does. Returns {"shards", "sequences",
    "samples"}."""
    return _lib.call("merge", {"dir": os.fsdecode(directory)})


def validate(paths=None, max_problems=100, **kw):
    """Check files strictly, as `mlfeed validate` does. Returns the list of problems found (at
    most max_problems per file), each a FormatError naming the file and the place; an empty
    list means every file is valid. Takes open()'s arguments; raises for wrong usage."""
    args = _lib.open_args(paths, **kw)
    args["max"] = int(max_problems)
    out = []
    for p in _lib.call("validate", args):
        e = _lib._error(p["kind"], p["message"], p.get("file"), p.get("line"), p.get("column"),
                        p.get("offset", -1), p.get("field"))
        out.append(e)
    return out


class Dataset:
    """An open data set (see mlfeed.open): its schema, length and sequences."""

    def __init__(self, paths=None, format=None, inputs=None, options=None, config=None,
                 defines=None):
        res = _lib.call("open", _lib.open_args(paths, format, inputs, options, config, defines))
        self._h = res["handle"]
        self._finalize = _lib.finalizer(self, self._h)
        self._info = res["info"]

    @property
    def schema(self):
        """The streams, as the "streams" of `info --json`: a list of dicts with name, storage
        ("dense" or "sparse"), type, dim, shape (and alias, key_count, metadata when set)."""
        return self._info["streams"]

    @property
    def format(self):
        """The format's name."""
        return self._info["format"]

    def info(self, chunks=False):
        """This data set's `info --json` document."""
        return _lib.call("info", {"dataset": self._handle(), "chunks": bool(chunks)})

    def __len__(self):
        """The number of sequences (examples)."""
        return self._info["sequences"]

    @property
    def num_samples(self):
        return self._info["samples"]

    def _handle(self):
        if not self._finalize.alive:
            raise UsageError("the data set is closed")
        return self._h

    def read(self, start=0, stop=None, streams=None):
        """Sequences [start, stop) as {stream name: data}. Each stream is a numpy array
        (sequences, *shape) in its stored element type when every sequence has one sample, a
        scipy.sparse.csr_matrix (sequences, dim) for a sparse stream, an object array of str
        for text, and a list of per-sequence arrays (or matrices) when sequences have several
        samples. streams selects streams by name. With ids, the key "id" holds them."""
        n = len(self)
        start, stop, step = slice(start, stop).indices(n)
        res = _lib.call("read", {"dataset": self._handle(), "start": start, "stop": stop,
                                 "streams": list(streams) if streams else []})
        try:
            c = _data.fetch_chunk(res["handle"], res["streams"])
        finally:
            _lib.free(res["handle"])
        out = {}
        if c.ids is not None:
            out["id"] = c.ids
        for i, st in enumerate(c.streams):
            out[st["name"]] = c.read_form(i)
        return out

    def __getitem__(self, k):
        """ds[i] is sequence i, ds[a:b] sequences a to b, as read returns them."""
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise UsageError("a data set slice takes no step")
            return self.read(k.start or 0, k.stop)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self.read(k, k + 1)

    def close(self):
        """Close the files; the data set cannot be used afterwards."""
        self._finalize()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<mlfeed.Dataset %s: %d sequences, streams %s>" % (
            self._info["format"], len(self), ", ".join(s["name"] for s in self.schema))


def _size(v):
    """A memory size in bytes from an int or a string with K, M, G or T."""
    if isinstance(v, int):
        if v < 0:
            raise UsageError("memory must not be negative")
        return v
    s = str(v).strip().upper().rstrip("B").rstrip("I")
    mult = 1
    if s and s[-1] in "KMGT":
        mult = 1 << (10 * ("KMGT".index(s[-1]) + 1))
        s = s[:-1]
    try:
        n = int(s)
    except ValueError:
        raise UsageError("memory %r: want bytes or a size such as 512M or 2G" % (v,)) from None
    if n <= 0:
        raise UsageError("memory %r must be positive" % (v,))
    return n * mult


_META = 10  # entries of mlfeed_next's meta before the sizes (capi/source.go's metaLen)


def _count(v, what):
    """A sweep or sample limit for Go: None or infinite is 0 (no limit)."""
    if v is None or v == INFINITELY_REPEAT or (isinstance(v, float) and math.isinf(v)):
        return 0
    if v < 0:
        raise UsageError("%s must not be negative" % what)
    return int(v)


def env_workers():
    """(workers, rank) from torchrun's $WORLD_SIZE and $RANK, or (1, 0) without them. (Read
    here, not in Go, whose copy of the environment is the one the process started with.)"""
    ws = os.environ.get("WORLD_SIZE", "")
    if not ws:
        return 1, 0
    try:
        n = int(ws)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError("WORLD_SIZE=%r is not a positive worker count" % ws)
    rs = os.environ.get("RANK", "")
    try:
        rank = int(rs)
    except ValueError:
        raise UsageError("RANK=%r with WORLD_SIZE=%d is not a rank" % (rs, n)) from None
    return n, rank


class Minibatch:
    """One minibatch: dict-like access to its streams by name.

    mb[name] is a numpy array (sequences, *shape) when every sequence has one sample of the
    stream, else (sequences, max_len, *shape) padded with zeros (mb.mask(name) says where the
    samples are); a sparse stream is a scipy.sparse.csr_matrix with one row per sample. The
    arrays are views of memory that the next minibatch reuses: keep one with .copy(), or
    create the source with copy=True.
    """

    __slots__ = ("sweep", "num_sequences", "num_samples", "global_samples", "end_of_sweep",
                 "end_of_epoch", "position", "_chunk", "_src", "_gen", "__weakref__")

    def __init__(self, meta, chunk, src=None, gen=0):
        (self.sweep, self.num_sequences, self.num_samples, self.global_samples, eos, eoe,
         self.position) = meta
        self.end_of_sweep, self.end_of_epoch = bool(eos), bool(eoe)
        self._chunk, self._src, self._gen = chunk, src, gen

    def _c(self):
        if self._src is not None and self._src._gen != self._gen:
            raise UsageError("this minibatch's memory has been reused by the next one: keep it "
                             "with mb.copy() or MinibatchSource(..., copy=True)")
        return self._chunk

    @property
    def streams(self):
        """The streams' descriptions (as Dataset.schema)."""
        return self._chunk.streams

    @property
    def ids(self):
        """The sequences' ids (a list of str) when the data has ids, else None."""
        return self._c().ids

    def __getitem__(self, name):
        c = self._c()
        return c.padded(c.index(name))

    def sequences(self, name):
        """A list with one entry per sequence: an array (samples, *shape), or a CSR matrix
        (samples, dim) for a sparse stream."""
        c = self._c()
        return c.sequences(c.index(name))

    def mask(self, name):
        """Boolean (sequences, max_len): True where mb[name] holds a sample, False padding."""
        c = self._c()
        return c.mask(c.index(name))

    def lengths(self, name):
        """The number of samples of each sequence in stream name (an int64 array)."""
        c = self._c()
        return c.lengths(c.index(name))

    def keys(self):
        return [s["name"] for s in self._chunk.streams]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._chunk.streams)

    def __contains__(self, name):
        return any(s["name"] == name for s in self._chunk.streams)

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def copy(self):
        """A minibatch with memory of its own, which later minibatches do not touch."""
        m = Minibatch((self.sweep, self.num_sequences, self.num_samples, self.global_samples,
                       self.end_of_sweep, self.end_of_epoch, self.position), self._c().copy())
        return m

    def __repr__(self):
        return "<mlfeed.Minibatch sweep %d: %d sequences, %d samples%s>" % (
            self.sweep, self.num_sequences, self.num_samples,
            ", end of sweep" if self.end_of_sweep else "")


class MinibatchSource:
    """Minibatches of a data set, as `mlfeed batches` reads them (CNTK's block randomizer,
    minibatches counted in samples, workers, checkpoints).

    paths_or_dataset: a path, a list of paths, or an open Dataset (None with config=).
    minibatch_size: samples per minibatch (of the stream that defines it; over all workers).
    randomize, seed, window, sample_window, frame_mode: the randomization and packing
        (--no-randomize, --seed, --window, --sample-window, --frame-mode); None takes the
        CNTK config's value, else randomize=True, seed 0, the whole data set as the window.
    defines_mb_size: the stream whose samples count toward the minibatch size.
    max_sweeps, max_samples: stop after this many sweeps or at this global sample position,
        counted from the start of training (so a restored source stops where the whole run
        would); neither set means one sweep; INFINITELY_REPEAT means without end.
    workers, rank: distributed reading (default: $WORLD_SIZE and $RANK, else one worker).
    keep_in_memory: decode each chunk once and keep it (CNTK's keepDataInMemory).
    threads: the threads that read, decode and pack (default: every core); packers: the
        goroutines packing minibatches ahead (-1: pack on the calling thread); memory: the
        budget for decoded chunks read ahead, in bytes or as "512M", "2G" (--threads,
        --packers, --memory). cntk_distribution: divide among workers by chunk, as CNTK does.
    epoch_size: minibatches end at multiples of this many samples (end_of_epoch).
    inputs, options, config, defines, format: how to read the files (see mlfeed.open).
    copy: give each minibatch memory of its own instead of reusing the previous one's.

    Iterate over it for Minibatch objects, or call next_minibatch(). state_dict() and
    load_state_dict() checkpoint the position (the JSON of `batches --save-state`).
    """

    def __init__(self, paths_or_dataset=None, minibatch_size=256, randomize=None, seed=None,
                 window=None, sample_window=None, frame_mode=None, defines_mb_size=None,
                 max_sweeps=None, max_samples=None, workers=None, rank=None,
                 keep_in_memory=False, threads=None, inputs=None, options=None, config=None,
                 defines=None, format=None, cntk_distribution=False, epoch_size=None,
                 copy=False, packers=None, memory=None, _deserializers=None):
        if isinstance(paths_or_dataset, Dataset):
            self._dataset = paths_or_dataset
            args = {"dataset": paths_or_dataset._handle()}
            if config is not None:
                args["config"] = os.fsdecode(config)
            if defines:
                args["defines"] = {str(k): str(v) for k, v in defines.items()}
        else:
            self._dataset = None
            args = _lib.open_args(paths_or_dataset, format, inputs, options, config, defines)
            if _deserializers:
                args["deserializers"] = _deserializers
        sweeps, samples = _count(max_sweeps, "max_sweeps"), _count(max_samples, "max_samples")
        if max_sweeps is None and max_samples is None:
            sweeps = 1
        if minibatch_size is None or minibatch_size <= 0:
            raise UsageError("minibatch_size must be positive, not %r" % (minibatch_size,))
        if workers is None and rank is not None:
            raise UsageError("rank needs workers")
        if workers is None:
            workers, rank = env_workers()
        args.update(_lib.clean({
            "minibatch_size": int(minibatch_size),
            "randomize": None if randomize is None else bool(randomize),
            "seed": None if seed is None else int(seed),
            "window": None if window is None else int(window),
            "sample_window": None if sample_window is None else bool(sample_window),
            "frame_mode": None if frame_mode is None else bool(frame_mode),
            "defines_mb_size": defines_mb_size,
            "max_sweeps": sweeps, "max_samples": samples,
            "epoch_size": _count(epoch_size, "epoch_size") or None,
            "workers": None if workers is None else int(workers),
            "rank": None if rank is None else int(rank),
            "keep_in_memory": bool(keep_in_memory),
            "threads": None if threads is None else int(threads),
            "packers": None if packers is None else int(packers),
            "memory": None if memory is None else _size(memory),
            "cntk_distribution": bool(cntk_distribution),
        }))
        res = _lib.call("source", args)
        self._h = res["handle"]
        n = _data.HEADER + _data.PER_STREAM * len(res["streams"])
        # One set of buffers per batch of the engine, which its packers write into (see
        # capi/source.go); the list lives, and grows, until the handle is freed.
        self._sets = []
        self._finalize = _lib.finalizer(self, self._h, self._sets)
        self._streams = res["streams"]
        self._sweep_samples = res["sweep_samples"]
        self._copy = bool(copy)
        # Per set, the Chunk of views last built over it, reused while the sizes stay the
        # same (not for ids and text, which are decoded per minibatch).
        self._views = []
        self._reuse = not res["has_ids"] and all(st["type"] != "string" for st in self._streams)
        self._nmeta = _META + n
        self._meta = (ctypes.c_int64 * self._nmeta)()
        self._nbuf = n
        self._err = _lib.new_error()
        self._eref = ctypes.byref(self._err)
        self._gen = 0
        self._taking = False  # a next_minibatch call has not handed its minibatch out
        self._done = False

    @property
    def streams(self):
        """The streams' descriptions (as Dataset.schema)."""
        return self._streams

    @property
    def sweep_samples(self):
        """The number of samples in one sweep (as the minibatch size counts them)."""
        return self._sweep_samples

    def _handle(self):
        if not self._finalize.alive:
            raise UsageError("the minibatch source is closed")
        return self._h

    def next_minibatch(self):
        """The next Minibatch, or None at the end."""
        r = self._next()
        if r is None:
            return None
        m, chunk = r
        if self._copy:
            return Minibatch(m[:7], chunk)
        return Minibatch(m[:7], chunk, self, self._gen)

    def _next(self):
        """The next minibatch as (meta, Chunk) (meta: mlfeed_next's, a list), or None at the
        end. Unless copy=True the Chunk is that of the minibatch's buffer set, reused."""
        l = _lib.lib()
        h = self._handle()
        meta = self._meta
        # A KeyboardInterrupt can strike as soon as a call into Go returns, before its result
        # is stored: until this call hands a minibatch out, the next one asks Go for the same
        # minibatch again (if Go delivered it) rather than for the one after it.
        again = 1 if self._taking else 0
        self._taking = True
        while True:
            r = l.mlfeed_next(h, again, _lib._POLL_MS, meta, self._nmeta, self._eref)
            if r != 2:
                break
        if r == 0:
            self._taking = False
            self._done = True
            return None
        if r < 0:
            self._taking = False
            _lib.check(self._err)
            raise InternalError("mlfeed: next failed without an error")
        m = meta[:]
        self._gen += 1
        k, sizes = m[7], m[_META:]
        if not m[9]:
            self._fill(l, h, k, sizes)
        v = self._views[k]
        if v is not None and v[0] == m[8] and v[1] == sizes:
            chunk = v[2]
        else:
            chunk = _data.Chunk(self._streams, sizes, self._sets[k].bufs, m[8])
            if self._reuse:
                self._views[k] = (m[8], sizes, chunk)
        if self._copy:
            chunk = chunk.copy()
        self._taking = False
        return m, chunk

    def _fill(self, l, h, k, sizes):
        """Give the engine's batch of the minibatch just returned buffer set k, grown to fit
        it: Go moves the minibatch there, and packs that batch's later ones there."""
        while len(self._sets) <= k:
            self._sets.append(_data._Buffers(self._nbuf))
            self._views.append(None)
        bs = self._sets[k]
        old = list(bs.bufs)  # what the minibatch may be in, alive until Go has moved it
        bs.grow(_data.byte_sizes(sizes, len(self._streams)))
        if l.mlfeed_source_fill(h, k, bs.ptrs, bs.caps(), self._nbuf, self._eref) != 0:
            _lib.check(self._err)
        self._views[k] = None
        del old

    def __iter__(self):
        return self

    def __next__(self):
        mb = self.next_minibatch()
        if mb is None:
            raise StopIteration
        return mb

    def state_dict(self):
        """The position after the last minibatch returned, as a dict: the JSON that `mlfeed
        batches --save-state` writes (and CNTK's "minibatchSourcePosition")."""
        l = _lib.lib()
        e = self._err
        size = 512
        while True:
            buf = ctypes.create_string_buffer(size)
            n = l.mlfeed_state(self._handle(), buf, size, ctypes.byref(e))
            if n < 0:
                _lib.check(e)
            if n <= size:
                return json.loads(buf.raw[:n])
            size = n

    def load_state_dict(self, state):
        """Continue from a state that state_dict (or `batches --save-state`, or CNTK) gave:
        the minibatches that follow are those that followed when it was taken."""
        self._restore(state, None)

    def _restore(self, state, cfg):
        l = _lib.lib()
        st = None if state is None else json.dumps(state).encode()
        c = None if cfg is None else json.dumps(cfg).encode()
        if l.mlfeed_restore(self._handle(), st, c, ctypes.byref(self._err)) != 0:
            _lib.check(self._err)
        self._gen += 1
        self._taking = False
        self._done = False

    def close(self):
        """Stop reading and release the files and memory (also done when collected)."""
        self._finalize()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<mlfeed.MinibatchSource streams %s>" % ", ".join(s["name"] for s in self._streams)
