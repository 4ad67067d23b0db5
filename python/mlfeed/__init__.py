"""mlfeed: machine-learning training data for Python, read by mlfeed's Go engine.

    import mlfeed
    with mlfeed.open(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"]) as ds:
        print(ds.schema, len(ds))       # streams "features" and "labels", 60000 sequences
        first = ds.read(0, 10)          # {"features": uint8 (10, 28, 28), "labels": uint8 (10,)}
    for mb in mlfeed.MinibatchSource(["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"],
                                     minibatch_size=256, seed=1):
        x, y = mb["features"], mb["labels"]   # numpy views, valid until the next minibatch

mlfeed.torch.MinibatchDataset feeds PyTorch and mlfeed.cntk offers CNTK 2.x's reader API. The
minibatches are exactly those `mlfeed batches --dump` prints for the same data and settings.
Arguments are checked when an object is made (TypeError for an unknown keyword or a wrong
type, ValueError naming the argument and its range). See docs/python.md.
"""

from __future__ import annotations

import ctypes
import inspect as _inspect
import json
import math
import numbers
import os
import re
import threading
import warnings
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)

from . import _lib, _data, _errors
from ._errors import (Error, FormatError, UsageError, FileNotFound, FileError,
                      InternalError, ForkError, DataWarning)
from ._lib import PathArg, PathsArg

#: This package's version. In the repository it is the next release's, as a development version;
#: scripts/release.sh writes the release's version here in the sdist and wheel it builds, the one
#: it stamps into the CLI (`mlfeed version`) of the same release.
__version__ = "0.3.0.dev0"

__all__ = ["open", "info", "convert", "merge", "validate", "formats", "Dataset", "MinibatchSource",
           "Minibatch", "Error", "FormatError", "UsageError", "FileNotFound", "FileError",
           "InternalError", "ForkError", "DataWarning", "INFINITELY_REPEAT", "env_workers", "PathArg",
           "PathsArg", "Inputs", "Params", "Schema", "Mix", "MixSource", "STOP_RULES"]

#: For max_sweeps: read sweep after sweep without end.
INFINITELY_REPEAT: float = float("inf")

#: A reader or writer option's value; a list of names for the options that take several
#: (columns, arrays, datasets), which the CLI writes NAME,NAME,...
Param = Union[str, int, float, bool, Sequence[str]]
#: Reader or writer options {name: value} (the CLI's --opt, --write-opt).
Params = Mapping[str, Param]
#: CTF stream declarations: "NAME:dense|sparse:DIM[:ALIAS[:TYPE]]" strings or dicts.
Inputs = Union[str, Mapping[str, Any], Sequence[Union[str, Mapping[str, Any]]]]
#: The streams' descriptions: [{"name", "storage", "type", "dim", "shape", ...}, ...].
Schema = List[Dict[str, Any]]
#: One data set of a mixture: (weight, paths), or a dict {"weight", "path" or "paths", and
#: optionally "format", "inputs", "options", "name"}.
MixSource = Union[Tuple[float, PathsArg], Mapping[str, Any]]
#: A mixture's data sets (MinibatchSource's mix=).
Mix = Sequence[MixSource]
#: Stopping rules of a mixture.
STOP_RULES = ("first_exhausted", "all_exhausted", "never")

_I64 = 2**63 - 1
_INT = 2**31 - 1


def _call(op: str, args: Dict[str, Any]) -> Any:
    """_lib.call, with a directory that holds no data set named as such."""
    try:
        return _lib.call(op, args)
    except Error as e:
        better = _lib.explain_directory(e, args.get("paths", []))
        if better is e:
            raise
        raise better from None


def open(paths: Optional[PathsArg] = None, format: Optional[str] = None,
         inputs: Optional[Inputs] = None, options: Optional[Params] = None,
         config: Optional[PathArg] = None, defines: Optional[Params] = None,
         cache: Optional[PathArg] = None,
         outside_shards: bool = False) -> "Dataset":
    """Open a data set: one file, several that hold one record set each (IDX images and
    labels), a directory of shards, or the data files of a CNTK config's reader section.

    paths: a path or a list of paths (None with config=).
    format: the input format name (default: detected from the bytes, then the name).
    inputs: CTF stream declarations, "NAME:dense|sparse:DIM[:ALIAS[:TYPE]]" strings or dicts
        {"name", "storage", "dim", "alias", "type"} (the CLI's --input).
    options: format-specific reader options {key: value} (the CLI's --opt).
    config: a CNTK configuration "FILE[:SECTION]" whose reader section declares the files,
        streams and options; defines: {NAME: value} for its $NAME$ variables.
    cache: the node cache for s3://, gs:// and azblob:// inputs, "DIR[:SIZE]" (the CLI's
        --cache; SIZE as "50GB", default 10 GiB): objects are fetched once into DIR, shared by
        the node's processes (DataLoader workers, ranks); default: $MLFEED_CACHE; "off": none.
        cache_stats() tells what this process fetched.
    outside_shards: let a manifest's shards be symbolic links to files outside the data set's
        directory (the CLI's --outside-shards; refused by default).

    Returns a Dataset, which is a context manager.
    """
    return Dataset(paths, format=format, inputs=inputs, options=options, config=config,
                   defines=defines, cache=cache,
                   outside_shards=outside_shards)


def info(paths: Optional[PathsArg] = None, chunks: bool = False, format: Optional[str] = None,
         inputs: Optional[Inputs] = None, options: Optional[Params] = None,
         config: Optional[PathArg] = None, defines: Optional[Params] = None,
         cache: Optional[PathArg] = None,
         outside_shards: bool = False) -> Dict[str, Any]:
    """The description `mlfeed info --json` prints: {"format", "streams", "sequences",
    "samples", "chunks", ...}; chunks=True adds the chunk table. Takes open()'s arguments."""
    args = _lib.open_args(paths, format, inputs, options, config, defines, cache,
                          outside_shards)
    args["chunks"] = _lib.bool_arg(chunks, "chunks")
    out: Dict[str, Any] = _call("info", args)
    return out


def stats(paths: Optional[PathsArg] = None, limit: int = 0, sample: int = 0, seed: int = 0,
          bins: int = 20, top: int = 10, format: Optional[str] = None,
          inputs: Optional[Inputs] = None, options: Optional[Params] = None,
          config: Optional[PathArg] = None, defines: Optional[Params] = None,
          cache: Optional[PathArg] = None,
          outside_shards: bool = False) -> Dict[str, Any]:
    """The statistics `mlfeed stats --json` prints, from one streaming pass over the data set:
    {"sequences", "samples", "total_sequences", "sequence_lengths", "streams": [...]}, each
    stream with its counts and, by kind, "numeric" (min, max, mean, std, NaN/Inf/zero counts,
    histogram), "classes", "sparse", "values_per_sample", "text", "bytes" or "times"
    (docs/view.md).

    limit: read only the first `limit` sequences (0: all); sample: read `sample` sequences
    drawn at random (0: all), the same ones for the same seed; bins: histogram bins (at most,
    1 to 10000); top: most frequent values and indices reported (1 to 1000). Takes open()'s
    arguments (paths, format, inputs, options, config, defines, cache).
    """
    args = _lib.open_args(paths, format, inputs, options, config, defines, cache,
                          outside_shards)
    args.update(limit=_lib.int_arg(limit, "limit", 0, 2**63 - 1),
                sample=_lib.int_arg(sample, "sample", 0, 2**63 - 1),
                seed=_lib.int_arg(seed, "seed", 0, 2**64 - 1),
                bins=_lib.int_arg(bins, "bins", 1, 10000),
                top=_lib.int_arg(top, "top", 1, 1000))
    out: Dict[str, Any] = _call("stats", args)
    return out


__all__ += ["stats"]


def cache_stats(cache: Optional[PathArg] = None) -> Optional[Dict[str, Any]]:
    """What this process fetched through the node cache "DIR[:SIZE]" (default: the one
    $MLFEED_CACHE names), as `--cache-stats` prints it: {"dir", "limit", "fetched_bytes",
    "fills", "hits", "hit_bytes", "bypassed", "bypassed_bytes"}; None when there is no cache.
    A second sweep of a data set that fits the cache adds 0 to fetched_bytes."""
    args = {} if cache is None else {"cache": _lib.cache_arg(cache)}
    out: Optional[Dict[str, Any]] = _lib.call("cache_stats", args)
    return out


__all__ += ["cache_stats"]


def formats() -> List[str]:
    """The names of the formats this build reads."""
    out: List[str] = _lib.call("formats", {})
    return out


def _names(v: object, name: str) -> Optional[List[str]]:
    """None, or a str or a list of str as a list, or TypeError."""
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if not isinstance(v, Iterable):
        raise TypeError("%s must be a stream name or a list of them, not %s" % (name, type(v).__name__))
    out = list(v)
    for x in out:
        if not isinstance(x, str):
            raise TypeError("%s must hold stream names (str), not %s" % (name, type(x).__name__))
    return out


def convert(inputs: PathsArg, output: PathArg, to: Optional[str] = None,
            type: Optional[str] = None, densify: bool = False,
            streams: Optional[Union[str, Sequence[str]]] = None, compress: Optional[str] = None,
            compat: Optional[str] = None, chunk_size: Optional[int] = None,
            write_options: Optional[Params] = None, input: Optional[Inputs] = None,
            format: Optional[str] = None, options: Optional[Params] = None,
            config: Optional[PathArg] = None, defines: Optional[Params] = None,
            shards: Optional[int] = None, shard_size: Optional[Union[int, str]] = None,
            task: Optional[Tuple[int, int]] = None, cache: Optional[PathArg] = None,
            outside_shards: bool = False) -> str:
    """Convert a data set to another format, as `mlfeed convert` does: lossless or an error,
    streamed chunk by chunk, the output written atomically.

    inputs: a path or a list of paths read as one data set; output: the output path, whose
    extension names the format unless to= does. type: convert numeric streams to this element
    type ("float32", ...); densify: store sparse streams densely; streams: keep only these
    streams, in this order; compress, compat, chunk_size, write_options: the writer's options
    (--compress, --compat, --chunk-size, --write-opt). input, format, options, config,
    defines, cache: how to read the inputs (open()'s inputs, format, options, config, defines,
    cache).

    shards, shard_size, task: write output as a directory of shards and a manifest, as
    `mlfeed convert --shards N / --shard-size SIZE / --task I/N` do (to= names the format);
    task=(i, n) writes only task i's share and a partial manifest, which merge() joins.
    Data the output format cannot hold (a type, a sparse stream) raises UsageError, as the
    CLI's exit status 2. Returns output.
    """
    args = _lib.open_args(inputs, format=format, inputs=input, options=options, config=config,
                          defines=defines, cache=cache,
                          outside_shards=outside_shards)
    tk: Any = task
    if tk is not None:
        if isinstance(tk, (str, bytes)) or not isinstance(tk, Sequence) or len(tk) != 2:
            raise TypeError("task must be a pair (index, count), not %r" % (tk,))
        n = _lib.int_arg(tk[1], "task count", 1, _INT)
        i = _lib.int_arg(tk[0], "task index", 0, _INT)
        if i >= n:
            raise UsageError("task=(%d, %d): the index must be from 0 to %d" % (i, n, n - 1))
        tk = [i, n]
    args.update(_lib.clean({
        "output": _lib.path_arg(output, "output"), "to": _lib.str_arg(to, "to"),
        "type": _lib.str_arg(type, "type"), "densify": _lib.bool_arg(densify, "densify"),
        "streams": _names(streams, "streams"), "compress": _lib.str_arg(compress, "compress"),
        "compat": _lib.str_arg(compat, "compat"),
        "chunk_size": None if chunk_size is None else _lib.int_arg(chunk_size, "chunk_size", 1, _I64),
        "shards": None if shards is None else _lib.int_arg(shards, "shards", 1, _INT),
        "shard_size": None if shard_size is None else _size(shard_size, "shard_size"),
        "task": tk,
        "write_options": _lib.params_arg(write_options, "write_options"),
    }))
    try:
        out: str = _call("convert", args)
    except FormatError as e:
        m = _NO_STREAM.match(e.message)
        if m is None:
            raise
        raise KeyError("no stream %r in the input: its streams are %s" % (
            m.group(1), ", ".join(repr(n) for n in m.group(2).split()))) from None
    return out


# Go's mlfeed.Select error for a stream the data lacks.
_NO_STREAM = re.compile(r'mlfeed: no stream "(.*)" \(streams: \[(.*)\]\)$')


def merge(directory: PathArg) -> Dict[str, Any]:
    """Join the partial manifests that the tasks of a sharded conversion wrote into directory
    into the data set's manifest, as `mlfeed merge` does. Returns {"shards", "sequences",
    "samples"}."""
    out: Dict[str, Any] = _lib.call("merge", {"dir": _lib.path_arg(directory, "directory")})
    return out


def validate(paths: Optional[PathsArg] = None, max_problems: int = 100,
             format: Optional[str] = None, inputs: Optional[Inputs] = None,
             options: Optional[Params] = None, config: Optional[PathArg] = None,
             defines: Optional[Params] = None, outside_shards: bool = False) -> List[Error]:
    """Check files strictly, as `mlfeed validate` does. Returns the list of problems found (at
    most max_problems per file), each a FormatError naming the file and the place; an empty
    list means every file is valid. Takes open()'s arguments; raises for wrong usage."""
    args = _lib.open_args(paths, format, inputs, options, config, defines,
                          outside_shards=outside_shards)
    args["max"] = _lib.int_arg(max_problems, "max_problems", 1, _INT)
    out: List[Error] = []
    for p in _call("validate", args):
        e = _errors._error(p["kind"], p["message"], p.get("file"), p.get("line"), p.get("column"),
                        p.get("offset", -1), p.get("field"))
        assert isinstance(e, Error)
        out.append(e)
    return out


class Dataset:
    """An open data set (see mlfeed.open): its schema, length and sequences.

    A Dataset may be read from several threads at once. close() waits for the reads in
    flight; a MinibatchSource made over it keeps its files open until it is closed too.
    """

    def __init__(self, paths: Optional[PathsArg] = None, format: Optional[str] = None,
                 inputs: Optional[Inputs] = None, options: Optional[Params] = None,
                 config: Optional[PathArg] = None, defines: Optional[Params] = None,
                 cache: Optional[PathArg] = None, outside_shards: bool = False) -> None:
        res = _call("open", _lib.open_args(paths, format, inputs, options, config, defines, cache,
                                           outside_shards))
        self._h: int = res["handle"]
        self._cond = threading.Condition()
        self._busy = 0       # calls in flight that use the handle
        self._users = 0      # open MinibatchSources over this data set
        self._closed = False
        self._close_error: Optional[Error] = None  # what closing the files raised, not yet raised
        self._finalize = _lib.finalizer(self, self._h)
        self._info: Dict[str, Any] = res["info"]

    @property
    def schema(self) -> Schema:
        """The streams, as the "streams" of `info --json`: a list of dicts with name, storage
        ("dense" or "sparse"), type, dim, shape (and alias, key_count, metadata when set). The
        shape is that of one sample as read gives it: [] for a stream of single values (a
        rank-1 IDX file, a 1-D npy array), whose arrays are (sequences,)."""
        out: Schema = self._info["streams"]
        return out

    @property
    def format(self) -> str:
        """The format's name."""
        out: str = self._info["format"]
        return out

    def info(self, chunks: bool = False) -> Dict[str, Any]:
        """This data set's `info --json` document."""
        c = _lib.bool_arg(chunks, "chunks")
        h = self._enter()
        try:
            out: Dict[str, Any] = _lib.call("info", {"dataset": h, "chunks": c})
            return out
        finally:
            self._leave()

    def __len__(self) -> int:
        """The number of sequences (examples)."""
        out: int = self._info["sequences"]
        return out

    @property
    def num_samples(self) -> int:
        """The number of samples (of all sequences)."""
        out: int = self._info["samples"]
        return out

    def _enter(self) -> int:
        """The handle, counted in use until _leave: close waits for it."""
        with self._cond:
            if self._closed or not self._finalize.alive:
                raise UsageError("the data set is closed")
            self._busy += 1
            return self._h

    def _leave(self) -> None:
        with self._cond:
            self._busy -= 1
            self._release_if_done()

    def _add_user(self) -> int:
        """The handle, for a MinibatchSource over the data set, which calls _drop_user when it
        is released."""
        with self._cond:
            if self._closed or not self._finalize.alive:
                raise UsageError("the data set is closed")
            self._users += 1
            return self._h

    def _drop_user(self) -> None:
        with self._cond:
            self._users -= 1
            self._release_if_done()

    def _release_if_done(self) -> None:
        self._cond.notify_all()
        if self._closed and self._busy == 0 and self._users == 0 and self._finalize.alive:
            # Closed in Go first, for its error (a shard that failed its node-cache check),
            # which the close that asked for this (or the last MinibatchSource's) raises.
            try:
                if _lib.usable():
                    _lib.call("close", {"dataset": self._h})
            except Error as e:
                self._close_error = e
            finally:
                self._finalize()

    def _take_close_error(self) -> Optional[Error]:
        with self._cond:
            err, self._close_error = self._close_error, None
            return err

    def _stream_names(self, streams: object) -> Optional[List[str]]:
        names = _names(streams, "streams")
        if names:
            known = {st["name"] for st in self.schema}
            for n in names:
                if n not in known:
                    raise KeyError("no stream %r in this data set: its streams are %s" % (
                        n, ", ".join(repr(st["name"]) for st in self.schema)))
        return names

    def read(self, start: int = 0, stop: Optional[int] = None,
             streams: Optional[Union[str, Sequence[str]]] = None) -> Dict[str, Any]:
        """Sequences [start, stop) as {stream name: data}. Each stream is a numpy array
        (sequences, *shape) in its stored element type when every sequence has one sample, a
        scipy.sparse.csr_matrix (sequences, dim) for a sparse stream, an object array of str
        for text, and a list of per-sequence arrays (or matrices) when sequences have several
        samples. streams selects streams by name (KeyError for one the data set lacks). With
        ids, the key "id" holds them. Negative start and stop count from the end, as in a
        slice."""
        a = _lib.int_arg(start, "start", -_I64, _I64)
        b = None if stop is None else _lib.int_arg(stop, "stop", -_I64, _I64)
        names = self._stream_names(streams)
        a, b, _ = slice(a, b).indices(len(self))
        b = max(a, b)
        h = self._enter()
        try:
            res = _lib.call("read", {"dataset": h, "start": a, "stop": b, "streams": names or []})
            try:
                c = _data.fetch_chunk(res["handle"], res["streams"])
            finally:
                _lib.free(res["handle"])
        finally:
            self._leave()
        out: Dict[str, Any] = {}
        if c.ids is not None:
            out["id"] = c.ids
        for i, st in enumerate(c.streams):
            out[st["name"]] = c.read_form(i)
        return out

    def __getitem__(self, k: Union[int, slice]) -> Dict[str, Any]:
        """ds[i] is sequence i, ds[a:b] sequences a to b, as read returns them."""
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise UsageError("a data set slice takes no step, not %r" % (k.step,))
            return self.read(k.start or 0, k.stop)
        i = _lib.int_arg(k, "index", -_I64, _I64)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("sequence %d is outside the data set's %d" % (k, len(self)))
        return self.read(i, i + 1)

    def close(self) -> None:
        """Close the files; the data set cannot be used afterwards. Waits for reads in flight
        in other threads; a MinibatchSource over the data set keeps the files open until it is
        closed or collected.

        Raises FormatError naming a shard read through the node cache (cache=) whose bytes
        are not its manifest's: a shard is checked once all of it has come, which can be
        after the last read where only part of it was read (docs/scale.md)."""
        with self._cond:
            self._closed = True
            while self._busy:
                self._cond.wait()
            self._release_if_done()
        err = self._take_close_error()
        if err is not None:
            raise err

    def __enter__(self) -> "Dataset":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<mlfeed.Dataset %s: %d sequences, streams %s>" % (
            self._info["format"], len(self), ", ".join(s["name"] for s in self.schema))


def _size(v: object, name: str = "memory") -> int:
    """A size in bytes from an int or a string with K, M, G or T."""
    if isinstance(v, str):
        s = v.strip().upper().rstrip("B").rstrip("I")
        mult = 1
        if s and s[-1] in "KMGT":
            mult = 1 << (10 * ("KMGT".index(s[-1]) + 1))
            s = s[:-1]
        try:
            n = int(s)
        except ValueError:
            raise UsageError("%s=%r: want bytes or a size such as 512M or 2G" % (name, v)) from None
        return _lib.int_arg(n * mult, name, 1, _I64, "it must be from 1 byte to 2**63-1")
    if isinstance(v, float) or not hasattr(v, "__index__"):
        raise TypeError("%s must be an int (bytes) or a str such as \"2G\", not %s"
                        % (name, type(v).__name__))
    return _lib.int_arg(v, name, 1, _I64, "it must be from 1 byte to 2**63-1")


_META = 10  # entries of mlfeed_next's meta before the sizes (capi/source.go's metaLen)


def _count(v: object, name: str) -> int:
    """A sweep or sample limit for Go: None or infinite is 0 (no limit)."""
    if v is None or (isinstance(v, float) and math.isinf(v) and v > 0):
        return 0
    return _lib.int_arg(v, name, 0, _I64,
                        "it must be from 0 to 2**63-1, or mlfeed.INFINITELY_REPEAT")


def env_workers() -> Tuple[int, int]:
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
    if not 0 <= rank < n:
        raise UsageError("RANK=%d with WORLD_SIZE=%d: the rank must be from 0 to %d" % (rank, n, n - 1))
    return n, rank


def _is_mix(v: object) -> bool:
    """Whether a positional data argument is a mixture: a list whose entries are (weight,
    paths) pairs or dicts with a "weight"."""
    if isinstance(v, (str, bytes, os.PathLike, Mapping)) or not isinstance(v, Sequence) or not v:
        return False
    e = v[0]
    if isinstance(e, Mapping):
        return "weight" in e
    return (isinstance(e, (tuple, list)) and len(e) == 2 and not isinstance(e[0], bool)
            and isinstance(e[0], numbers.Real))


def _weight(v: object, name: str) -> float:
    """A weight: a finite number, not negative."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError("%s must be a number, not %s" % (name, type(v).__name__))
    w = float(v)
    if not math.isfinite(w) or w < 0:
        raise UsageError("%s=%r: a weight must be finite and not negative" % (name, v))
    return w


_MIX_KEYS = {"weight", "path", "paths", "format", "inputs", "options", "name"}


def _mix_arg(mix: object, stop: object = None, schedule: object = None) -> Dict[str, Any]:
    """A mixture checked and as Go takes it (the JSON of `mlfeed batches --mix-file`):
    TypeError for a wrong type, UsageError naming the entry otherwise."""
    if isinstance(mix, (str, bytes, os.PathLike, Mapping)) or not isinstance(mix, Sequence):
        raise TypeError("mix must be a list of (weight, paths) pairs or dicts, not %s"
                        % type(mix).__name__)
    if not mix:
        raise UsageError("mix=[]: a mixture needs a data set")
    sources: List[Dict[str, Any]] = []
    for k, e in enumerate(mix):
        name = "mix[%d]" % k
        if isinstance(e, Mapping):
            unknown = set(e) - _MIX_KEYS
            if unknown:
                raise TypeError("%s: unknown keys %s (a data set has %s)" % (
                    name, ", ".join(sorted(map(str, unknown))), ", ".join(sorted(_MIX_KEYS))))
            if "weight" not in e:
                raise UsageError("%s has no weight" % name)
            if ("path" in e) == ("paths" in e):
                raise UsageError("%s needs a path or paths (one of them)" % name)
            src = _lib.open_args(e.get("path", e.get("paths")), e.get("format"), e.get("inputs"),
                                 e.get("options"))
            src["weight"] = _weight(e["weight"], name + "['weight']")
            if e.get("name") is not None:
                src["name"] = _lib.str_arg(e["name"], name + "['name']")
        elif isinstance(e, (tuple, list)) and len(e) == 2:
            src = _lib.open_args(e[1])
            src["weight"] = _weight(e[0], name + "[0]")
        else:
            raise TypeError("%s must be a (weight, paths) pair or a dict, not %s"
                            % (name, type(e).__name__))
        if not src.get("paths"):
            raise UsageError("%s has no paths" % name)
        sources.append(src)
    out: Dict[str, Any] = {"sources": sources}
    if stop is not None:
        if not isinstance(stop, str):
            raise TypeError("stop must be a str, not %s" % type(stop).__name__)
        if stop not in STOP_RULES:
            raise UsageError("stop=%r: want one of %s" % (stop, ", ".join(STOP_RULES)))
        out["stop"] = stop
    if schedule is not None:
        if isinstance(schedule, (str, bytes, Mapping)) or not isinstance(schedule, Sequence):
            raise TypeError("schedule must be a list of (position, weights) pairs, not %s"
                            % type(schedule).__name__)
        phases = []
        for k, ph in enumerate(schedule):
            name = "schedule[%d]" % k
            if isinstance(ph, Mapping):
                if set(ph) != {"at", "weights"}:
                    raise TypeError("%s: a dict has the keys at and weights" % name)
                at, ws = ph["at"], ph["weights"]
            elif isinstance(ph, (tuple, list)) and len(ph) == 2:
                at, ws = ph
            else:
                raise TypeError("%s must be a (position, weights) pair, not %s" % (name, type(ph).__name__))
            if isinstance(ws, (str, bytes)) or not isinstance(ws, Sequence):
                raise TypeError("%s: the weights must be a list of numbers" % name)
            if len(ws) != len(sources):
                raise UsageError("%s has %d weights for %d data sets" % (name, len(ws), len(sources)))
            phases.append({"at": _lib.int_arg(at, name + " position", 1, _I64),
                           "weights": [_weight(w, "%s weight %d" % (name, i)) for i, w in enumerate(ws)]})
        out["schedule"] = phases
    return out


def _settings(minibatch_size: object = 256, randomize: object = None, seed: object = None,
              window: object = None, sample_window: object = None, frame_mode: object = None,
              defines_mb_size: object = None, max_sweeps: object = None,
              max_samples: object = None, workers: object = None, rank: object = None,
              keep_in_memory: object = False, threads: object = None,
              cntk_distribution: object = False, epoch_size: object = None,
              packers: object = None, memory: object = None) -> Dict[str, Any]:
    """MinibatchSource's engine settings checked and as Go takes them: TypeError for a wrong
    type, UsageError (a ValueError) naming the argument and its range."""
    def opt_bool(v: object, name: str) -> Optional[bool]:
        return None if v is None else _lib.bool_arg(v, name)

    sweeps, samples = _count(max_sweeps, "max_sweeps"), _count(max_samples, "max_samples")
    if max_sweeps is None and max_samples is None:
        sweeps = 1
    size = _lib.int_arg(minibatch_size, "minibatch_size", 1, _INT)
    if workers is None and rank is not None:
        raise UsageError("rank=%r needs workers" % (rank,))
    if workers is None:
        nw, nr = env_workers()
    else:
        nw = _lib.int_arg(workers, "workers", 1, _INT)
        nr = _lib.int_arg(0 if rank is None else rank, "rank", 0, nw - 1)
    return _lib.clean({
        "minibatch_size": size,
        "randomize": opt_bool(randomize, "randomize"),
        "seed": None if seed is None else _lib.int_arg(seed, "seed", 0, 2**64 - 1),
        "window": None if window is None else _lib.int_arg(window, "window", 0, _I64),
        "sample_window": opt_bool(sample_window, "sample_window"),
        "frame_mode": opt_bool(frame_mode, "frame_mode"),
        "defines_mb_size": _lib.str_arg(defines_mb_size, "defines_mb_size"),
        "max_sweeps": sweeps, "max_samples": samples,
        "epoch_size": _count(epoch_size, "epoch_size") or None,
        "workers": nw, "rank": nr,
        "keep_in_memory": _lib.bool_arg(keep_in_memory, "keep_in_memory"),
        "threads": None if threads is None else _lib.int_arg(
            threads, "threads", 0, 65536, "it must be from 0 (every core) to 65536"),
        "packers": None if packers is None else _lib.int_arg(
            packers, "packers", -1, 1024, "it must be from -1 (pack on the calling thread) to 1024"),
        "memory": None if memory is None else _size(memory),
        "cntk_distribution": _lib.bool_arg(cntk_distribution, "cntk_distribution"),
    })


class Minibatch:
    """One minibatch: dict-like access to its streams by name.

    mb[name] is a numpy array (sequences, *shape) when every sequence has one sample of the
    stream, else (sequences, max_len, *shape) padded with zeros (mb.mask(name) says where the
    samples are); a sparse stream is a scipy.sparse.csr_matrix with one row per sample. A name
    the minibatch lacks raises KeyError listing its streams. The arrays are views of memory
    that the next minibatch reuses: keep one with .copy(), or create the source with copy=True.
    """

    __slots__ = ("sweep", "num_sequences", "num_samples", "global_samples", "end_of_sweep",
                 "end_of_epoch", "position", "_chunk", "_src", "_gen", "__weakref__")

    def __init__(self, meta: Sequence[Any], chunk: _data.Chunk,
                 src: Optional["MinibatchSource"] = None, gen: int = 0) -> None:
        self.sweep: int = int(meta[0])
        self.num_sequences: int = int(meta[1])
        self.num_samples: int = int(meta[2])
        self.global_samples: int = int(meta[3])
        self.end_of_sweep: bool = bool(meta[4])
        self.end_of_epoch: bool = bool(meta[5])
        self.position: int = int(meta[6])
        self._chunk, self._src, self._gen = chunk, src, gen

    def _c(self) -> _data.Chunk:
        if self._src is not None and self._src._gen != self._gen:
            raise UsageError("this minibatch's memory has been reused by the next one: keep it "
                             "with mb.copy() or MinibatchSource(..., copy=True)")
        return self._chunk

    @property
    def streams(self) -> Schema:
        """The streams' descriptions (as Dataset.schema)."""
        return self._chunk.streams

    schema = streams

    @property
    def ids(self) -> Optional[List[str]]:
        """The sequences' ids (a list of str) when the data has ids, else None."""
        return self._c().ids

    def __getitem__(self, name: str) -> Any:
        c = self._c()
        return c.padded(c.index(name))

    def sequences(self, name: str) -> List[Any]:
        """A list with one entry per sequence: an array (samples, *shape), or a CSR matrix
        (samples, dim) for a sparse stream."""
        c = self._c()
        return c.sequences(c.index(name))

    def mask(self, name: str) -> Any:
        """Boolean (sequences, max_len): True where mb[name] holds a sample, False padding."""
        c = self._c()
        return c.mask(c.index(name))

    def lengths(self, name: str) -> Any:
        """The number of samples of each sequence in stream name (an int64 array)."""
        c = self._c()
        return c.lengths(c.index(name))

    def keys(self) -> List[str]:
        """The streams' names."""
        return [s["name"] for s in self._chunk.streams]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._chunk.streams)

    def __contains__(self, name: object) -> bool:
        return any(s["name"] == name for s in self._chunk.streams)

    def values(self) -> List[Any]:
        """The streams' data, in keys() order."""
        return [self[k] for k in self.keys()]

    def items(self) -> List[Tuple[str, Any]]:
        """(name, data) for each stream."""
        return [(k, self[k]) for k in self.keys()]

    def copy(self) -> "Minibatch":
        """A minibatch with memory of its own, which later minibatches do not touch."""
        return Minibatch((self.sweep, self.num_sequences, self.num_samples, self.global_samples,
                          self.end_of_sweep, self.end_of_epoch, self.position), self._c().copy())

    def __repr__(self) -> str:
        return "<mlfeed.Minibatch sweep %d: %d sequences, %d samples%s>" % (
            self.sweep, self.num_sequences, self.num_samples,
            ", end of sweep" if self.end_of_sweep else "")


class MinibatchSource:
    """Minibatches of a data set, as `mlfeed batches` reads them (CNTK's block randomizer,
    minibatches counted in samples, workers, checkpoints).

    paths_or_dataset: a path, a list of paths, or an open Dataset (None with config=), or a
        mixture as mix= takes it.
    mix: a mixture of data sets in set proportions, in place of paths: a list of (weight,
        paths) pairs, [(0.7, "wiki/"), (0.3, "code/")], or dicts {"weight", "path" or
        "paths", "format", "inputs", "options", "name"} (the format, inputs and options
        arguments are every data set's defaults). Each sequence's data set is drawn by the
        weights from the seed and its sample position; each data set keeps its own randomized
        order. stop: when a sweep of the mixture ends, "first_exhausted" (the default: when a
        data set ends its own sweep), "all_exhausted" (when every one has), or "never" (give
        max_samples, or stop iterating). schedule: weight changes, a list of (position,
        weights) pairs: from that global sample position on, the weights (one per data set).
        state_dict() covers the mixture. See docs/minibatch.md.
    minibatch_size: samples per minibatch (of the stream that defines it; over all workers),
        from 1 to 2**31-1.
    randomize, seed, window, sample_window, frame_mode: the randomization and packing
        (--no-randomize, --seed, --window, --sample-window, --frame-mode); None takes the
        CNTK config's value, else randomize=True, seed 0 (0 to 2**64-1), the whole data set as
        the window.
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
    inputs, options, config, defines, format, cache: how to read the files (see mlfeed.open;
        cache= shares what object storage served among the node's processes).
    copy: give each minibatch memory of its own instead of reusing the previous one's.

    Every argument is checked here: TypeError for an unknown keyword or a wrong type,
    ValueError (UsageError) naming the argument and its range.

    Iterate over it for Minibatch objects, or call next_minibatch(). state_dict() and
    load_state_dict() checkpoint the position (the JSON of `batches --save-state`).

    Threads: with copy=True, any number of threads may take minibatches from one source, each
    minibatch going to exactly one of them. With copy=False (the default) a minibatch's memory
    is reused by the next call, so the source belongs to the thread that takes minibatches
    from it (handed on when that thread ends): another thread's call raises UsageError.
    close() from another thread makes a call waiting for a minibatch raise UsageError.
    """

    def __init__(self, paths_or_dataset: Optional[Union[PathsArg, Dataset, Mix]] = None,
                 minibatch_size: int = 256, randomize: Optional[bool] = None,
                 seed: Optional[int] = None, window: Optional[int] = None,
                 sample_window: Optional[bool] = None, frame_mode: Optional[bool] = None,
                 defines_mb_size: Optional[str] = None,
                 max_sweeps: Optional[Union[int, float]] = None,
                 max_samples: Optional[Union[int, float]] = None,
                 workers: Optional[int] = None, rank: Optional[int] = None,
                 keep_in_memory: bool = False, threads: Optional[int] = None,
                 inputs: Optional[Inputs] = None, options: Optional[Params] = None,
                 config: Optional[PathArg] = None, defines: Optional[Params] = None,
                 format: Optional[str] = None, cntk_distribution: bool = False,
                 epoch_size: Optional[int] = None, copy: bool = False,
                 packers: Optional[int] = None, memory: Optional[Union[int, str]] = None,
                 mix: Optional[Mix] = None, stop: Optional[str] = None,
                 schedule: Optional[Sequence[Tuple[int, Sequence[float]]]] = None,
                 cache: Optional[PathArg] = None,
                 outside_shards: bool = False,
                 _deserializers: Optional[List[Dict[str, Any]]] = None) -> None:
        if _is_mix(paths_or_dataset):
            if mix is not None:
                raise UsageError("give the mixture once: as the first argument or as mix=")
            mix, paths_or_dataset = paths_or_dataset, None  # type: ignore[assignment]
        mixture = None
        if mix is not None:
            if paths_or_dataset is not None or config is not None:
                raise UsageError("mix= takes the place of paths, a Dataset and config=")
            mixture = _mix_arg(mix, stop, schedule)
        elif stop is not None or schedule is not None:
            raise UsageError("stop= and schedule= apply to a mixture (mix=)")
        settings = _settings(minibatch_size, randomize, seed, window, sample_window, frame_mode,
                             defines_mb_size, max_sweeps, max_samples, workers, rank,
                             keep_in_memory, threads, cntk_distribution, epoch_size, packers,
                             memory)
        self._copy = _lib.bool_arg(copy, "copy")
        self._dataset: Optional[Dataset] = None
        if isinstance(paths_or_dataset, Dataset):
            if inputs is not None or options is not None or format is not None or cache is not None:
                raise UsageError("inputs, options, format and cache apply to paths, not to an "
                                 "open Dataset (give them to mlfeed.open)")
            args = _lib.open_args(None, None, None, None, config, defines)
            ds = paths_or_dataset
            args["dataset"] = ds._add_user()
        else:
            ds = None
            args = _lib.open_args(paths_or_dataset, format, inputs, options, config, defines,
                                  cache, outside_shards)
            if _deserializers:
                args["deserializers"] = _deserializers
            if mixture is not None:
                args["mix"] = mixture
        opened = dict(args)
        args.update(settings)
        made = False
        try:
            res = _call("source", args)
            made = True
        except UsageError as e:
            m = re.search(r'definesMBSize: no stream "(.*?)"', e.message)
            if m is None:
                raise
            names = [st["name"] for st in (ds.schema if ds is not None else _call("info", opened)["streams"])]
            raise KeyError("defines_mb_size=%r: no such stream: the streams are %s" % (
                m.group(1), ", ".join(repr(n) for n in names))) from None
        finally:
            if ds is not None and not made:
                ds._drop_user()
        self._dataset = ds
        self._h: int = res["handle"]
        n = _data.HEADER + _data.PER_STREAM * len(res["streams"])
        # One set of buffers per batch of the engine, which its packers write into (see
        # capi/source.go); the list lives, and grows, until the handle is freed.
        self._sets: List[_data._Buffers] = []
        self._finalize = _lib.finalizer(self, self._h, self._sets,
                                        None if ds is None else ds._drop_user)
        self._streams: Schema = res["streams"]
        self._sweep_samples: int = res["sweep_samples"]
        # Per set, the Chunk of views last built over it, reused while the sizes stay the
        # same (not for ids and text, which are decoded per minibatch).
        self._views: List[Optional[Tuple[int, List[int], _data.Chunk]]] = []
        self._reuse = not res["has_ids"] and all(st["type"] not in _data.VARLEN for st in self._streams)
        self._nmeta = _META + n
        self._meta = (ctypes.c_int64 * self._nmeta)()
        self._nbuf = n
        self._err = _lib.new_error()
        self._eref = ctypes.byref(self._err)
        self._gen = 0
        self._taking = False  # a next_minibatch call has not handed its minibatch out
        self._done = False
        # Threads: _lock serializes the calls into Go; _owner is the thread a copy=False
        # source belongs to; _closing tells a call waiting for a minibatch that close() wants
        # the source.
        self._lock = threading.Lock()
        self._owner: Optional[threading.Thread] = None
        self._closing = False

    @property
    def streams(self) -> Schema:
        """The streams' descriptions (as Dataset.schema)."""
        return self._streams

    @property
    def schema(self) -> Schema:
        """The streams' descriptions, as Dataset.schema: [{"name", "storage", "type", "dim",
        "shape", ...}, ...]."""
        return self._streams

    @property
    def sweep_samples(self) -> int:
        """The number of samples in one sweep (as the minibatch size counts them)."""
        return self._sweep_samples

    def _handle(self) -> int:
        if self._closing or not self._finalize.alive:
            raise UsageError("the minibatch source is closed")
        return self._h

    def next_minibatch(self) -> Optional[Minibatch]:
        """The next Minibatch, or None at the end."""
        r = self._next()
        if r is None:
            self._warn()
            return None
        m, chunk = r
        if m[4]:  # the end of a sweep: what reading it logged (CTF's values rounded to float32)
            self._warn()
        if self._copy:
            return Minibatch(m[:7], chunk)
        return Minibatch(m[:7], chunk, self, self._gen)

    def _claim(self) -> None:
        """Check that this thread may take a minibatch (see the class's doc), and take the
        lock."""
        t = threading.current_thread()
        if not self._copy:
            o = self._owner
            if o is not None and o is not t and o.is_alive():
                raise UsageError(
                    "this MinibatchSource belongs to thread %r, which takes its minibatches: "
                    "with copy=False a minibatch's memory is reused by the next call, so "
                    "another thread may not call it. Create it with copy=True to share it "
                    "between threads (each minibatch then goes to one of them)" % o.name)
            self._owner = t
            if not self._lock.acquire(blocking=False):
                raise UsageError("the minibatch source is being closed or restored")
            return
        self._lock.acquire()

    def _next(self) -> Optional[Tuple[List[int], _data.Chunk]]:
        """The next minibatch as (meta, Chunk) (meta: mlfeed_next's, a list), or None at the
        end. Unless copy=True the Chunk is that of the minibatch's buffer set, reused."""
        self._claim()
        try:
            return self._next_locked()
        finally:
            self._lock.release()

    def _next_locked(self) -> Optional[Tuple[List[int], _data.Chunk]]:
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
            if self._closing:
                self._taking = False
                raise UsageError("the minibatch source was closed by another thread while this "
                                 "call waited for a minibatch")
        if r == 0:
            self._taking = False
            self._done = True
            return None
        if r < 0:
            self._taking = False
            _lib.check(self._err)
            raise InternalError("mlfeed: next failed without an error")
        m: List[int] = meta[:]
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

    def _fill(self, l: Any, h: int, k: int, sizes: List[int]) -> None:
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

    def __iter__(self) -> "MinibatchSource":
        return self

    def __next__(self) -> Minibatch:
        mb = self.next_minibatch()
        if mb is None:
            raise StopIteration
        return mb

    def _warn(self) -> None:
        """Raise what the source's formats logged since the last call as DataWarnings."""
        if self._closing or not self._finalize.alive:
            return
        l = _lib.lib()
        e = _lib.new_error()
        size = 1024
        while True:
            buf = ctypes.create_string_buffer(size)
            n = l.mlfeed_source_warnings(self._h, buf, size, ctypes.byref(e))
            if n < 0:
                _lib.check(e)
            if n <= size:
                break
            size = n
        for w in json.loads(buf.raw[:n]) if n else ():
            warnings.warn(w, DataWarning, stacklevel=3)

    def state_dict(self) -> Dict[str, Any]:
        """The position after the last minibatch returned, as a dict: the JSON that `mlfeed
        batches --save-state` writes (and CNTK's "minibatchSourcePosition")."""
        with self._lock:
            l = _lib.lib()
            e = self._err
            size = 512
            while True:
                buf = ctypes.create_string_buffer(size)
                n = l.mlfeed_state(self._handle(), buf, size, ctypes.byref(e))
                if n < 0:
                    _lib.check(e)
                if n <= size:
                    out: Dict[str, Any] = json.loads(buf.raw[:n])
                    return out
                size = n

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from a state that state_dict (or `batches --save-state`, or CNTK) gave:
        the minibatches that follow are those that followed when it was taken."""
        self._restore(_check_state(state), None)

    def _restore(self, state: Optional[Dict[str, Any]], cfg: Optional[Dict[str, Any]]) -> None:
        with self._lock:
            l = _lib.lib()
            try:
                st = None if state is None else json.dumps(state).encode()
            except (TypeError, ValueError) as e:
                raise TypeError("state: %s" % e) from None
            c = None if cfg is None else json.dumps(cfg).encode()
            if l.mlfeed_restore(self._handle(), st, c, ctypes.byref(self._err)) != 0:
                _lib.check(self._err)
            self._gen += 1
            self._taking = False
            self._done = False

    def close(self) -> None:
        """Stop reading and release the files and memory (also done when collected). A call
        in another thread that waits for a minibatch raises UsageError; one that is handing a
        minibatch over finishes first.

        Raises FormatError naming a shard read through the node cache (cache=) whose bytes
        are not its manifest's, as Dataset.close does, where closing the source closes the
        files: the source opened its data set (paths), or its Dataset was closed first."""
        self._closing = True
        with self._lock:
            try:
                if self._dataset is None and self._finalize.alive and _lib.usable():
                    _lib.call("close", {"source": self._h})
            finally:
                self._finalize()
        # Over a Dataset closed before it, this source's release closed the files.
        err = None if self._dataset is None else self._dataset._take_close_error()
        if err is not None:
            raise err

    def __enter__(self) -> "MinibatchSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<mlfeed.MinibatchSource streams %s>" % ", ".join(s["name"] for s in self._streams)


# The keys of a state (minibatch.State), and their ranges.
_STATE_INTS = {"minibatchSourcePosition": _I64, "sweep": _I64, "next": _INT, "sequences": _INT,
               "samples": _I64, "chunks": _INT, "window": _I64, "seed": 2**64 - 1}
_STATE_BOOLS = ("randomize", "sampleBasedWindow")


def _check_state(state: object) -> Dict[str, Any]:
    """A state dict checked: TypeError or ValueError naming the key (other keys, which CNTK's
    checkpoints may hold, pass)."""
    if not isinstance(state, Mapping):
        raise TypeError("state must be a dict (from state_dict()), not %s" % type(state).__name__)
    out = dict(state)
    for k, hi in _STATE_INTS.items():
        if k in out:
            out[k] = _lib.int_arg(out[k], "state[%r]" % k, 0, hi)
    for k in _STATE_BOOLS:
        if k in out:
            out[k] = _lib.bool_arg(out[k], "state[%r]" % k)
    return out


def _check_source_arguments(paths_or_dataset: object, kwargs: Mapping[str, Any]) -> None:
    """Check MinibatchSource's arguments without opening anything (mlfeed.torch's datasets
    open the data later, in each DataLoader worker): TypeError for an unknown keyword or a
    wrong type, UsageError (a ValueError) for a value out of range."""
    sig = _inspect.signature(MinibatchSource.__init__)
    bound = sig.bind(None, paths_or_dataset, **kwargs)
    bound.apply_defaults()
    a = dict(bound.arguments)
    del a["self"], a["_deserializers"]
    mix, stop, schedule = a.pop("mix"), a.pop("stop"), a.pop("schedule")
    if _is_mix(paths_or_dataset):
        if mix is not None:
            raise UsageError("give the mixture once: as the first argument or as mix=")
        mix, paths_or_dataset = paths_or_dataset, None
    if mix is not None:
        if paths_or_dataset is not None or a["config"] is not None:
            raise UsageError("mix= takes the place of paths, a Dataset and config=")
        _mix_arg(mix, stop, schedule)
        _lib.open_args(None, a["format"], a["inputs"], a["options"])
    elif stop is not None or schedule is not None:
        raise UsageError("stop= and schedule= apply to a mixture (mix=)")
    elif not isinstance(paths_or_dataset, Dataset):
        _lib.open_args(paths_or_dataset, a["format"], a["inputs"], a["options"], a["config"],
                       a["defines"], a["cache"], a["outside_shards"])
    _lib.bool_arg(a["copy"], "copy")
    _settings(**{k: a[k] for k in _inspect.signature(_settings).parameters})
