"""CNTK 2.x's reader API (cntk.io) over mlfeed, so that a CNTK script's reader code runs with
its import changed. Both of CNTK's forms work: `from cntk.io import ...` becomes

    from mlfeed.cntk.io import (MinibatchSource, CTFDeserializer, StreamDef, StreamDefs,
                                INFINITELY_REPEAT)
    source = MinibatchSource(CTFDeserializer("Train-28x28_cntk_text.txt", StreamDefs(
        features=StreamDef(field="features", shape=784),
        labels=StreamDef(field="labels", shape=10))), max_sweeps=INFINITELY_REPEAT)
    mb = source.next_minibatch(64, input_map={x: source.streams.features, y: source.streams.labels})
    mb[x].asarray()     # numpy (64, 1, 784)

and `import cntk as C` becomes `import mlfeed.cntk as C`, after which C.io.MinibatchSource,
C.io.CTFDeserializer, C.io.StreamDef, C.io.INFINITELY_REPEAT, ... are the same objects. (The
names are also here, in mlfeed.cntk itself.)

The semantics follow cntk/io/__init__.py: max_samples and max_sweeps (mutually exclusive),
randomization windows in chunks or samples (a window of 0 turns randomization off, as does
randomize=False), randomization_seed, frame_mode, next_minibatch's size, input_map and
num_data_partitions/partition_index (which may change from call to call), an empty dict at
the end, get_checkpoint_state/restore_from_checkpoint. The minibatches are mlfeed's engine's,
which follows CNTK's block randomizer. MinibatchData holds numpy arrays (and scipy CSR
matrices for sparse streams) of its own, valid after the next call, as CNTK's Values are.
Not provided: image, HTK and user deserializers, truncated BPTT (truncation_length), devices.

Beyond CNTK's API, MinibatchSource takes one keyword more: cache="DIR[:SIZE]", the node cache
for deserializers whose files are objects (s3://, gs://, azblob://), as mlfeed.open's cache=:
what object storage serves is kept in DIR, shared by the node's processes (default: the cache
$MLFEED_CACHE names; "off" turns it off).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import NDArray

import mlfeed
from mlfeed import PathArg, UsageError

__all__ = ["MinibatchSource", "MinibatchData", "CTFDeserializer", "CBFDeserializer",
           "StreamDef", "StreamDefs", "StreamInformation", "INFINITELY_REPEAT",
           "FULL_DATA_SWEEP", "DEFAULT_RANDOMIZATION_WINDOW_IN_CHUNKS"]

_SIZE_MAX = 2**64 - 1
#: No limit (CNTK's MinibatchSource::InfinitelyRepeat, SIZE_MAX).
INFINITELY_REPEAT = _SIZE_MAX
#: One whole sweep (CNTK's MinibatchSource::FullDataSweep, SIZE_MAX - 2).
FULL_DATA_SWEEP = _SIZE_MAX - 2
#: CNTK's default randomization window: 4 GiB / 32 MiB chunks.
DEFAULT_RANDOMIZATION_WINDOW_IN_CHUNKS = 128


class Record(Dict[str, Any]):
    """A dict whose keys are also attributes (cntk.variables.Record)."""

    def __getattr__(self, k: str) -> Any:
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None

    def __setattr__(self, k: str, v: Any) -> None:
        self[k] = v


#: StreamDefs(name=StreamDef(...), ...): the streams of a deserializer.
StreamDefs = Record


#: A stream's shape: its dimension, or a tuple of dimensions.
Shape = Union[int, Sequence[int]]


def StreamDef(field: Optional[str] = None, shape: Optional[Shape] = None,
              is_sparse: bool = False, transforms: object = None, context: object = None,
              scp: object = None, mlf: object = None, broadcast: object = None,
              defines_mb_size: bool = False) -> Record:
    """A stream of a deserializer: field is its name in the file, shape its dimension (an int,
    or a tuple whose product is the dimension), is_sparse its storage. transforms, context,
    scp, mlf and broadcast belong to readers mlfeed does not provide and must be None."""
    for k, v in (("transforms", transforms), ("context", context), ("scp", scp), ("mlf", mlf),
                 ("broadcast", broadcast)):
        if v is not None:
            raise UsageError("StreamDef(%s=...): image and HTK readers are not supported" % k)
    cfg = Record(stream_alias=field, is_sparse=bool(is_sparse))
    if shape is not None:
        cfg["dim"] = shape
    cfg["defines_mb_size"] = bool(defines_mb_size)
    return cfg


def _dim(shape: Optional[Shape], name: str) -> Tuple[int, Tuple[int, ...]]:
    if shape is None:
        raise UsageError("stream %r: StreamDef needs shape" % name)
    if isinstance(shape, int):
        return shape, (shape,)
    d = 1
    for v in shape:
        d *= int(v)
    return d, tuple(shape)


class _Deserializer(Dict[str, Any]):
    """A deserializer's configuration, as CNTK's are dictionaries."""


def CTFDeserializer(filename: PathArg, streams: Mapping[str, Mapping[str, Any]],
                    precision: str = "float") -> _Deserializer:
    """The CNTK text format reader over filename; streams maps stream names to StreamDefs,
    whose field is the name in the file. precision ("float" or "double"; an mlfeed addition,
    as CNTK takes it from the network) is the values' type. With "float", CNTK's default, a
    value float32 does not hold as written (Python's 17-digit floats) is rounded to float32
    as CNTK reads it, and counted; a value float32 cannot hold at all (1e39, 1e-50) raises
    FormatError, never read as infinity or 0."""
    types = {"float": "float32", "double": "float64"}
    if precision not in types:
        raise UsageError("precision must be 'float' or 'double', not %r" % (precision,))
    inputs: List[str] = []
    shapes: Dict[str, Tuple[int, ...]] = {}
    defines: Optional[str] = None
    for k, s in streams.items():
        if s.get("stream_alias") is None:
            raise ValueError("CTFDeserializer: stream name for key %s must be specified" % k)
        dim, shape = _dim(s.get("dim"), k)
        storage = "sparse" if s.get("is_sparse") else "dense"
        inputs.append("%s:%s:%d:%s:%s" % (k, storage, dim, s["stream_alias"], types[precision]))
        shapes[k] = shape
        if s.get("defines_mb_size"):
            defines = k
    return _Deserializer(type="CNTKTextFormatDeserializer", file=str(filename), format="ctf",
                         inputs=inputs, shapes=shapes, defines_mb_size=defines, rename=None)


def CBFDeserializer(filename: PathArg,
                    streams: Mapping[str, Mapping[str, Any]] = {}) -> _Deserializer:
    """The CNTK binary format reader over filename. The file names its streams; streams, when
    given, selects and renames them: each key is the name to use, the StreamDef's field the
    name in the file."""
    rename: Optional[Dict[str, str]] = None
    shapes: Dict[str, Tuple[int, ...]] = {}
    if streams:
        rename = {}
        for k, s in streams.items():
            rename[s.get("stream_alias") or k] = k
            if s.get("dim") is not None:
                shapes[k] = _dim(s["dim"], k)[1]
    return _Deserializer(type="CNTKBinaryFormatDeserializer", file=str(filename), format="cbf",
                         inputs=[], shapes=shapes, defines_mb_size=None, rename=rename)


class StreamInformation:
    """A stream of a MinibatchSource: name, storage_format ("dense"/"sparse"), dtype,
    sample_shape. Minibatches are keyed by these objects."""

    def __init__(self, name: str, stream_id: int, storage_format: str, dtype: np.dtype[Any],
                 shape: Sequence[int]) -> None:
        self.m_name = self.name = name
        self.m_id = stream_id
        self.storage_format = storage_format
        self.is_sparse = storage_format == "sparse"
        self.m_element_type = self.dtype = dtype
        self.sample_shape = self.shape = tuple(shape)

    def __repr__(self) -> str:
        return "StreamInformation(name=%r, storage_format=%r, dtype=%s, shape=%r)" % (
            self.name, self.storage_format, self.dtype, self.shape)


class MinibatchData:
    """One stream of a minibatch: num_sequences, num_samples, end_of_sweep, asarray(),
    as_sequences(), mask, shape, is_sparse."""

    def __init__(self, mb: mlfeed.Minibatch, index: int, info: StreamInformation,
                 shape: Tuple[int, ...]) -> None:
        self._mb, self._i, self._info, self._sample_shape = mb, index, info, shape
        c = mb._c()
        self.num_sequences = mb.num_sequences
        self.num_samples = int(c.lengths(index).sum())
        self.end_of_sweep = mb.end_of_sweep
        self.is_sparse = info.is_sparse

    @property
    def data(self) -> MinibatchData:
        """CNTK's Value; here the MinibatchData itself, which has asarray and as_sequences."""
        return self

    @property
    def number_of_sequences(self) -> int:
        return self.num_sequences

    @property
    def number_of_samples(self) -> int:
        return self.num_samples

    @property
    def sweep_end(self) -> bool:
        return self.end_of_sweep

    def asarray(self) -> Any:
        """Dense: a numpy array (sequences, max_len, *shape), padded with zeros (see mask).
        Sparse: a scipy CSR matrix with one row per sample."""
        c = self._mb._c()
        if self.is_sparse:
            return c._samples(self._i)
        if c.one_per_sequence(self._i):
            a = c._samples(self._i)
            a = a.reshape((a.shape[0], 1) + self._sample_shape)
            return a
        a = c.padded(self._i)
        return a.reshape(a.shape[:2] + self._sample_shape)

    def as_sequences(self, variable: object = None) -> List[Any]:
        """A list, one entry per sequence: arrays (samples, *shape), or CSR matrices."""
        seqs = self._mb._c().sequences(self._i)
        if self.is_sparse:
            return seqs
        return [s.reshape((s.shape[0],) + self._sample_shape) for s in seqs]

    @property
    def mask(self) -> NDArray[np.int8]:
        """(sequences, max_len): 2 at a sequence's first sample, 1 at the others, 0 padding."""
        m = self._mb._c().mask(self._i).astype("int8")
        if m.shape[1]:
            m[:, 0] *= 2
        return m

    @property
    def shape(self) -> Tuple[int, ...]:
        c = self._mb._c()
        lens = c.lengths(self._i)
        return (self.num_sequences, int(lens.max()) if len(lens) else 0) + self._sample_shape

    def __len__(self) -> int:
        return self.num_sequences

    def __repr__(self) -> str:
        return "MinibatchData(%s: %d sequences, %d samples)" % (
            self._info.name, self.num_sequences, self.num_samples)


class MinibatchSource:
    """CNTK's composite minibatch source over one or more deserializers (joined by sequence
    id when they have ids, else line by line). See the module's documentation; cache (an
    mlfeed keyword beyond CNTK's) is the node cache for object-storage files, as
    mlfeed.open's."""

    def __init__(self, deserializers: Union[_Deserializer, List[_Deserializer],
                                            Tuple[_Deserializer, ...]],
                 max_samples: int = INFINITELY_REPEAT, max_sweeps: int = INFINITELY_REPEAT,
                 randomization_window_in_chunks: int = DEFAULT_RANDOMIZATION_WINDOW_IN_CHUNKS,
                 randomization_window_in_samples: int = 0, randomization_seed: int = 0,
                 trace_level: Optional[int] = None,
                 multithreaded_deserializer: Optional[bool] = None, frame_mode: bool = False,
                 truncation_length: int = 0, randomize: bool = True,
                 cache: Optional[PathArg] = None) -> None:
        if isinstance(deserializers, (list, tuple)):
            ds: Sequence[_Deserializer] = deserializers
        else:
            ds = [deserializers]
        for d in ds:
            if not isinstance(d, _Deserializer):
                raise UsageError("MinibatchSource takes CTFDeserializer and CBFDeserializer "
                                 "objects, not %r" % (d,))
        if max_samples != INFINITELY_REPEAT and max_sweeps != INFINITELY_REPEAT:
            raise ValueError("max_samples and max_sweeps are mutually exclusive")
        if randomization_window_in_chunks and randomization_window_in_samples:
            raise ValueError("randomization_window_in_chunks and randomization_window_in_samples "
                             "are mutually exclusive")
        if truncation_length:
            raise UsageError("truncation_length (truncated BPTT) is not supported")
        if not randomize:
            randomization_window_in_chunks = randomization_window_in_samples = 0
        kw: Dict[str, Any] = dict(seed=int(randomization_seed), frame_mode=bool(frame_mode))
        if randomization_window_in_samples:
            kw.update(randomize=True, window=int(randomization_window_in_samples), sample_window=True)
        elif randomization_window_in_chunks:
            kw.update(randomize=True, window=int(randomization_window_in_chunks))
        else:
            kw.update(randomize=False)
        if max_samples == FULL_DATA_SWEEP:
            max_samples, max_sweeps = INFINITELY_REPEAT, 1
        if max_sweeps == FULL_DATA_SWEEP:
            max_sweeps = 1
        kw["max_samples"] = None if max_samples == INFINITELY_REPEAT else int(max_samples)
        kw["max_sweeps"] = None if max_sweeps == INFINITELY_REPEAT else int(max_sweeps)
        if kw["max_samples"] is None and kw["max_sweeps"] is None:
            kw["max_sweeps"] = mlfeed.INFINITELY_REPEAT
        defines = [d["defines_mb_size"] for d in ds if d["defines_mb_size"]]
        if defines:
            kw["defines_mb_size"] = defines[0]
        self._kw = kw
        self._deserializers = ds
        self._args = [{"path": d["file"], "format": d["format"], "inputs": d["inputs"]}
                      for d in ds]
        # Open once to learn the streams (the data is not read until the first minibatch).
        self._key = (1, 1, 0)
        self._src = mlfeed.MinibatchSource(None, minibatch_size=1, workers=1, rank=0, copy=True,
                                           _deserializers=self._args, cache=cache, **self._kw)
        self._infos: List[StreamInformation] = []
        self._index: Dict[str, Tuple[int, StreamInformation]] = {}
        shapes: Dict[str, Tuple[int, ...]] = {}
        for d in ds:
            shapes.update(d["shapes"])
        rename: Dict[str, str] = {}
        for d in ds:
            if d["rename"]:
                rename.update(d["rename"])
        for i, st in enumerate(self._src.streams):
            name = st["name"]
            if rename:
                if name not in rename:
                    continue
                name = rename[name]
            shape = shapes.get(name) or tuple(st["shape"] or (st["dim"],))
            info = StreamInformation(name, i, st["storage"], mlfeed._data.DTYPES[st["type"]], shape)
            self._infos.append(info)
            self._index[name] = (i, info)
        self.streams = Record((info.name, info) for info in self._infos)

    def _open(self, size: int, parts: int, index: int) -> None:
        key = (size, parts, index)
        if key != self._key:
            self._src._restore(None, {"minibatch_size": size, "workers": parts, "rank": index})
        self._key = key

    def stream_infos(self) -> List[StreamInformation]:
        """The streams, as StreamInformation objects."""
        return list(self._infos)

    def stream_info(self, name: str) -> StreamInformation:
        """The StreamInformation of the stream name."""
        try:
            return self._index[name][1]
        except KeyError:
            raise ValueError("no stream %r (streams: %s)" % (name, ", ".join(self._index))) from None

    def __getitem__(self, name: str) -> StreamInformation:
        return self.stream_info(name)

    def next_minibatch(self, minibatch_size_in_samples: int,
                       input_map: Optional[Mapping[Any, Union[StreamInformation, str]]] = None,
                       device: object = None, num_data_partitions: Optional[int] = None,
                       partition_index: Optional[int] = None) -> Dict[Any, MinibatchData]:
        """The next minibatch: {StreamInformation: MinibatchData}, or with input_map
        {key: MinibatchData} for each key: stream of input_map; {} when the data is exhausted."""
        if minibatch_size_in_samples is None or minibatch_size_in_samples <= 0:
            raise ValueError("minibatch_size_in_samples must be > 0")
        parts = 1 if num_data_partitions is None else int(num_data_partitions)
        index = 0 if partition_index is None else int(partition_index)
        self._open(int(minibatch_size_in_samples), parts, index)
        mb = self._src.next_minibatch()
        if mb is None:
            return {}
        out: Dict[Any, MinibatchData] = {}
        for i, info in self._infos_indexed():
            out[info] = MinibatchData(mb, i, info, info.sample_shape)
        if not input_map:
            return out
        return {k: out[self._resolve(v)] for k, v in input_map.items()}

    def _infos_indexed(self) -> List[Tuple[int, StreamInformation]]:
        return [self._index[info.name] for info in self._infos]

    def _resolve(self, v: object) -> StreamInformation:
        if isinstance(v, StreamInformation):
            return v
        if isinstance(v, str):
            return self.stream_info(v)
        raise UsageError("input_map values are StreamInformation objects (source.streams.NAME)")

    def get_checkpoint_state(self) -> Dict[str, Any]:
        """The position as a dict (its "minibatchSourcePosition" is CNTK's key)."""
        return self._src.state_dict()

    def restore_from_checkpoint(self, checkpoint: Mapping[str, Any]) -> None:
        """Continue from a state get_checkpoint_state returned."""
        self._src.load_state_dict(dict(checkpoint))

    @property
    def current_position(self) -> Dict[str, Any]:
        return self.get_checkpoint_state()

    @current_position.setter
    def current_position(self, position: Mapping[str, Any]) -> None:
        self.restore_from_checkpoint(position)


# cntk.io's names under CNTK's module path (mlfeed.cntk.io), imported last: io.py takes them
# from this module.
from mlfeed.cntk import io  # noqa: E402
