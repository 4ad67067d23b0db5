"""mlfeed for Dask: a data set as dask arrays read on the workers, and conversion as Dask tasks.

    import mlfeed.dask
    from distributed import Client
    client = Client("scheduler:8786")                  # or a LocalCluster, or no client at all
    arrays = mlfeed.dask.read("s3://corpus/train/")    # {"features": dask.array, "labels": ...}
    mean = arrays["features"].mean(axis=0).compute()   # each chunk read on a worker
    mlfeed.dask.convert("train.ctf", "train-cbf/", to="cbf", shards=64, tasks=16,
                        input=["x:sparse:1000"])        # the `--task I/N` conversions, then merge

read() gives one dask array per stream, one block per chunk of the data set's chunk table; a
block is read on the worker that computes it (through mlfeed.open there, kept open per worker
process), so the paths must name the same data on every worker: a shared file system or object
storage. Dense streams are numpy blocks; sparse streams are blocks of one scipy.sparse
csr_matrix each. convert() runs `mlfeed.convert(..., task=(i, n))` for every task i as a Dask
task and then `mlfeed.merge` as one more; the output is byte for byte that of one
`mlfeed.convert` in one process. See docs/scale.md.

Needs Dask (Debian's python3-dask; python3-distributed for a cluster); importing this module
without it raises ImportError saying so.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

try:
    from dask.array.core import Array
    from dask.base import tokenize
    from dask.delayed import delayed
    from dask.highlevelgraph import HighLevelGraph
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("mlfeed.dask needs Dask (Debian: apt-get install python3-dask "
                      "python3-distributed; pip: pip install 'dask[array,distributed]'): %s" % e) from e

from . import _data, _lib
from . import Dataset, Inputs, Params, PathArg, PathsArg, UsageError, FormatError
from . import convert as _convert, merge as _merge

__all__ = ["read", "convert", "close"]

# Dask's functions that lack annotations, typed.
_tokenize: Callable[..., str] = tokenize
_new_array: Callable[..., Array] = Array


def _token(*args: Any) -> str:
    """A name for what args describe (Dask's tokenize, typed)."""
    return _tokenize(*args)


def _spec_paths(paths: Optional[PathsArg]) -> Optional[List[str]]:
    """The paths as the workers will open them: local ones made absolute (a worker's working
    directory need not be the client's), URLs and globs as given."""
    if paths is None:
        return None
    out = []
    for p in _lib.paths_arg(paths):
        out.append(p if "://" in p else os.path.abspath(p))
    return out


# Per worker process: the data sets read() opened, by their open arguments (JSON), kept open
# for the blocks that follow.
_open_lock = threading.Lock()
_opened: Dict[str, Dataset] = {}


def _dataset(spec: str, sequences: int) -> Dataset:
    with _open_lock:
        ds = _opened.get(spec)
        if ds is None:
            a = json.loads(spec)
            ds = Dataset(a.get("paths"), format=a.get("format"), inputs=a.get("inputs"),
                         options=a.get("options"), config=a.get("config"), defines=a.get("defines"),
                         cache=a.get("cache"))
            _opened[spec] = ds
    if len(ds) != sequences:
        raise FormatError("mlfeed.dask: the data set %s has %d sequences on this worker, but had %d "
                          "when the arrays were made: it changed, or the worker sees other files"
                          % (", ".join(json.loads(spec).get("paths") or [spec]), len(ds), sequences))
    return ds


def close() -> int:
    """Close the data sets read() opened in this process (its blocks open them once per
    process, and keep them open for the blocks that follow); returns how many. On a cluster,
    client.run(mlfeed.dask.close) closes them on every worker. A later block opens its data set
    again. Every data set is closed; the first error a close raised (a FormatError for a shard
    that failed its check in the node cache) is raised after them all."""
    with _open_lock:
        sets = list(_opened.values())
        _opened.clear()
    first: Optional[BaseException] = None
    for ds in sets:
        try:
            ds.close()
        except Exception as e:
            first = first or e
    if first is not None:
        raise first
    return len(sets)


def _read_chunk(spec: str, sequences: int, start: int, stop: int,
                names: List[str]) -> Dict[str, Any]:
    """Sequences [start, stop) (one chunk) of the data set, each stream's samples as an array
    (samples, *shape) or a CSR matrix (samples, dim). Runs on a worker."""
    ds = _dataset(spec, sequences)
    h = ds._enter()
    try:
        res = _lib.call("read", {"dataset": h, "start": start, "stop": stop, "streams": names})
        try:
            c = _data.fetch_chunk(res["handle"], res["streams"])
        finally:
            _lib.free(res["handle"])
    finally:
        ds._leave()
    out: Dict[str, Any] = {}
    for i, st in enumerate(c.streams):
        s = c._samples(i)
        if isinstance(s, list):
            raise FormatError("mlfeed.dask: stream %r has samples of varying size (sequences "
                              "%d to %d), which a dask array cannot hold" % (st["name"], start, stop - 1))
        out[st["name"]] = s
    return out


def _block(chunk: Dict[str, Any], name: str, rows: float) -> Any:
    """Stream name's block of a chunk read by _read_chunk, checked against the rows the
    array's chunks promised (NaN: not known in advance)."""
    b = chunk[name]
    if rows == rows and b.shape[0] != rows:  # rows == rows: not NaN
        raise FormatError("mlfeed.dask: stream %r has %d samples in a chunk of %d sequences: "
                          "its sequences do not all have one sample; read the data set with "
                          "mlfeed.open, or convert it so that they do" % (name, b.shape[0], int(rows)))
    return b


def read(paths: Optional[PathsArg] = None, streams: Optional[Union[str, Sequence[str]]] = None,
         format: Optional[str] = None, inputs: Optional[Inputs] = None,
         options: Optional[Params] = None, config: Optional[PathArg] = None,
         defines: Optional[Params] = None, cache: Optional[PathArg] = None) -> Dict[str, Array]:
    """The data set's streams as dask arrays, {stream name: dask.array.Array}, read on the
    workers: one block per chunk of the data set's chunk table (`mlfeed info --chunks`).

    Takes mlfeed.open's arguments (paths, format, inputs, options, config, defines, cache:
    the node cache "DIR[:SIZE]" for s3://, gs:// and azblob:// inputs, which the worker
    processes of a node share, a relative DIR taken from this process's directory); streams
    selects streams by name (KeyError for one the data set lacks). The data set is opened here
    once, for its schema and chunk table, and again in each worker process that computes a
    block. A block reads its chunk once for every stream of the same call: computing
    several of the arrays together (`dask.compute(a["features"], a["labels"])`) reads each
    chunk once.

    Each array has one row per sample: (samples, *shape) in the stream's element type for a
    dense stream (an object array of str or bytes for text and byte strings), and (samples, dim)
    with scipy.sparse.csr_matrix blocks for a sparse stream. When every sequence has one sample
    (the usual case: an image, a label) the rows are the sequences and the block sizes are
    known; otherwise they are NaN until computed (`arr.compute_chunk_sizes()`), and a stream
    of dense samples of varying size raises FormatError when read.
    """
    args = _lib.open_args(_spec_paths(paths), format, inputs, options, config, defines, cache)
    if "config" in args and os.path.exists(args["config"]):
        args["config"] = os.path.abspath(args["config"])
    if args.get("cache") not in (None, "off"):
        # The workers' directory need not be this one ("DIR:SIZE" keeps its size).
        args["cache"] = os.path.abspath(args["cache"])
    with Dataset(args.get("paths"), format=format, inputs=inputs, options=options, config=config,
                 defines=defines, cache=args.get("cache")) as ds:
        names = ds._stream_names(streams) or [st["name"] for st in ds.schema]
        schema = {st["name"]: st for st in ds.schema}
        inf = ds.info(chunks=True)
    table: List[Dict[str, int]] = inf["chunk_table"]
    nseq: int = inf["sequences"]
    one = inf["samples"] == nseq and all(c["samples"] == c["sequences"] for c in table)
    spec = json.dumps(args, sort_keys=True)
    token = _token(spec, nseq, table, names)
    chunk_name = "mlfeed-chunk-" + token
    chunk_layer: Dict[Any, Any] = {}
    start = 0
    bounds: List[Tuple[int, int]] = []
    for k, c in enumerate(table):
        stop = start + c["sequences"]
        bounds.append((start, stop))
        chunk_layer[(chunk_name, k)] = (_read_chunk, spec, nseq, start, stop, names)
        start = stop
    if start != nseq:
        raise FormatError("mlfeed.dask: the chunk table holds %d sequences, the data set %d"
                          % (start, nseq))
    rows: List[float] = [float(b - a) if one else float("nan") for a, b in bounds]
    out: Dict[str, Array] = {}
    for name in names:
        st = schema[name]
        sparse = st["storage"] == "sparse"
        shape = (int(st["dim"]),) if sparse else tuple(int(d) for d in (st["shape"] or ()))
        arr_name = "mlfeed-%s-%s" % (name, token)
        layer = {(arr_name, k) + (0,) * len(shape): (_block, (chunk_name, k), name, rows[k])
                 for k in range(len(table))}
        graph = HighLevelGraph({chunk_name: chunk_layer, arr_name: layer},
                               {chunk_name: set(), arr_name: {chunk_name}})
        chunks = (tuple(int(r) if one else np.nan for r in rows),) + tuple((d,) for d in shape)
        dt = _data.DTYPES[st["type"]]
        meta: Any
        if sparse:
            import scipy.sparse  # type: ignore[import]
            meta = scipy.sparse.csr_matrix((0, shape[0]), dtype=dt)
        else:
            meta = np.empty((0,) + shape, dt)
        out[name] = _new_array(graph, arr_name, chunks, meta=meta)
    return out


def _task(inputs: Any, outdir: str, i: int, n: int, kwargs: Dict[str, Any]) -> str:
    out: str = _convert(inputs, outdir, task=(i, n), **kwargs)
    return out


def _merge_after(outdir: str, done: List[str]) -> Dict[str, Any]:
    return _merge(outdir)


def convert(inputs: PathsArg, outdir: PathArg, to: Optional[str] = None,
            tasks: Optional[int] = None, client: Any = None, shards: Optional[int] = None,
            **kwargs: Any) -> Dict[str, Any]:
    """Convert a data set into a directory of shards as `tasks` Dask tasks, then merge, as
    `mlfeed convert --task I/N` on N machines and `mlfeed merge` do. The directory is byte for
    byte what `mlfeed.convert(inputs, outdir, to=to, shards=...)` writes in one process.

    inputs, outdir, to, shards and every other keyword (type, densify, streams, compress,
    compat, chunk_size, write_options, input, format, options, config, defines) are
    mlfeed.convert's; outdir and the inputs must be reachable from every worker (a shared file
    system or object storage). The number of shards is `shards`, else one per input shard for
    a sharded input, else one per task. tasks: how many tasks (default: the client's workers,
    else the cores here). client: a distributed.Client to run on (default: Dask's current
    scheduler, the client made last if there is one). The conversion tasks run in parallel,
    the merge after them all, on a worker. Returns merge's {"shards", "sequences", "samples"}.
    """
    for k in ("task", "shard_size"):
        if k in kwargs:
            raise UsageError("mlfeed.dask.convert makes the tasks itself and writes a fixed number "
                             "of shards: %s= is not for it (see mlfeed.convert)" % k)
    if tasks is None:
        if client is not None:
            tasks = max(1, len(client.scheduler_info().get("workers", {})))
        else:
            tasks = os.cpu_count() or 1
    n = _lib.int_arg(tasks, "tasks", 1, 2**31 - 1)
    ins: Any = _spec_paths(inputs)
    out = _lib.path_arg(outdir, "outdir")
    out = out if "://" in out else os.path.abspath(out)
    kw = dict(kwargs, to=to, shards=shards)
    parts = [delayed(_task, pure=False)(ins, out, i, n, kw, dask_key_name="mlfeed-convert-%d-of-%d-%s" % (i, n, _token(ins, out, kw)))
             for i in range(n)]
    merged = delayed(_merge_after, pure=False)(out, parts)
    if client is not None:
        res: Dict[str, Any] = client.compute(merged).result()
    else:
        res = merged.compute()
    return res
