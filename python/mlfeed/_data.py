"""Columnar data from Go (a read result or a minibatch) as numpy arrays.

The data lives in numpy arrays this module allocates (_Buffers): Go copies a read result into
them (see capi/data.go), and the minibatch engine's packers write minibatches straight into
them (capi/source.go); the arrays handed to the user are views of them. A MinibatchSource has
one set of buffers per batch of the engine, reused minibatch after minibatch, so that in steady
state a minibatch costs no allocation and no copy: its arrays are views of an earlier
minibatch's memory, refilled. Views keep their memory alive, so an array kept past the next
minibatch is overwritten but never dangling.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from . import _lib

HEADER, PER_STREAM = 2, 6

# The element types' numpy dtypes. duration and datetime are int64 ticks of 100 ns (datetime
# since 0001-01-01); datetimeoffset and rowid are structured.
DTYPES: Dict[str, "np.dtype[Any]"] = {
    "float32": np.dtype("<f4"), "float64": np.dtype("<f8"),
    "int8": np.dtype("i1"), "int16": np.dtype("<i2"), "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"), "uint8": np.dtype("u1"), "uint16": np.dtype("<u2"),
    "uint32": np.dtype("<u4"), "uint64": np.dtype("<u8"), "bool": np.dtype("?"),
    "complex64": np.dtype("<c8"), "complex128": np.dtype("<c16"),
    "duration": np.dtype("<i8"), "datetime": np.dtype("<i8"),
    "datetimeoffset": np.dtype([("ticks", "<i8"), ("offset_minutes", "<i2"), ("pad", "V6")]),
    "rowid": np.dtype([("low", "<u8"), ("high", "<u8")]),
    "string": np.dtype(object),
    "bytes": np.dtype(object),
}

# The types whose values cross the ABI as offsets and bytes: text (str) and opaque byte
# strings (bytes, never decoded).
VARLEN = ("string", "bytes")

_EMPTY: NDArray[Any] = np.empty(0, np.uint8)


# Buffers start on a cache line: the engine copies samples in with 32-byte vector stores, and
# with malloc's 16-byte alignment half of those straddle two cache lines, which made the copy of
# a shuffled minibatch (byte-swapped from an IDX file) twice as slow.
_ALIGN = 64


def _aligned(n: int) -> NDArray[Any]:
    """n bytes (uint8) starting on a multiple of _ALIGN."""
    raw = np.empty(n + _ALIGN, np.uint8)
    off = -raw.ctypes.data % _ALIGN
    return raw[off:off + n]


class _Buffers:
    """Numpy byte buffers for the slots of a chunk's layout, reused while they are big enough."""

    def __init__(self, nslots: int) -> None:
        self.bufs: List[NDArray[Any]] = [_EMPTY] * nslots
        self.ptrs: Any = (ctypes.c_void_p * nslots)()

    def ensure(self, sizes: Sequence[int]) -> Any:
        """Make slot k hold sizes[k] bytes or more; returns the pointer array."""
        self.grow(sizes)
        return self.ptrs

    def grow(self, sizes: Sequence[int]) -> bool:
        """Make slot k hold sizes[k] bytes or more; returns whether a slot was replaced."""
        bufs, ptrs = self.bufs, self.ptrs
        grown = False
        for k, n in enumerate(sizes):
            if n > len(bufs[k]):
                b = _aligned(max(n, len(bufs[k]) * 3 // 2))
                bufs[k] = b
                ptrs[k] = b.ctypes.data
                grown = True
        return grown

    def caps(self) -> Any:
        return (ctypes.c_int64 * len(self.bufs))(*[len(b) for b in self.bufs])


def byte_sizes(sizes: Sequence[int], nstreams: int) -> List[int]:
    """The byte size of each slot from the element counts Go reports."""
    out = [8 * (sizes[0] + 1) if sizes[0] else 0, sizes[1]]
    for i in range(nstreams):
        s = sizes[HEADER + PER_STREAM * i: HEADER + PER_STREAM * (i + 1)]
        out += [8 * s[0], 8 * s[1], 4 * s[2], s[3], 8 * (s[4] + 1) if s[4] else 0, s[5]]
    return out


def _strings(offs: NDArray[Any], data: NDArray[Any], n: int, text: bool = True) -> NDArray[Any]:
    """n values from offsets and bytes: str when text, else bytes."""
    if n == 0:
        return np.empty(0, object)
    o = offs[: n + 1].tolist()
    raw = data.tobytes()
    out = np.empty(n, object)
    if text:
        out[:] = [raw[o[k]:o[k + 1]].decode("utf-8") for k in range(n)]
    else:
        out[:] = [raw[o[k]:o[k + 1]] for k in range(n)]
    return out


class Chunk:
    """One chunk's streams as views of the buffers Go filled."""

    __slots__ = ("streams", "num_sequences", "ids", "_cols", "_one", "memo")

    def __init__(self, streams: List[Dict[str, Any]], sizes: Sequence[int],
                 bufs: Sequence[NDArray[Any]], unit: Optional[int] = None) -> None:
        """unit, when known, is a bit mask of the streams whose every sequence has one sample."""
        self.streams = streams
        n = len(streams)
        nb = byte_sizes(sizes, n)
        self.ids: Optional[List[str]] = None
        if sizes[0]:
            self.ids = _strings(bufs[0][: nb[0]].view("<i8"), bufs[1][: nb[1]], sizes[0]).tolist()
        cols: List[Tuple[NDArray[Any], Optional[NDArray[Any]], Optional[NDArray[Any]], NDArray[Any]]] = []
        for i, st in enumerate(streams):
            k = HEADER + PER_STREAM * i
            seq = bufs[k][: nb[k]].view("<i8")
            samp = bufs[k + 1][: nb[k + 1]].view("<i8") if nb[k + 1] else None
            idx = bufs[k + 2][: nb[k + 2]].view("<i4") if nb[k + 2] or st["storage"] == "sparse" else None
            vals: NDArray[Any]
            if st["type"] in VARLEN:
                vals = _strings(bufs[k + 4][: nb[k + 4]].view("<i8"), bufs[k + 5][: nb[k + 5]], sizes[k + 4],
                                st["type"] == "string")
            else:
                vals = bufs[k + 3][: nb[k + 3]].view(DTYPES[st["type"]])
            cols.append((seq, samp, idx, vals))
        self._cols = cols
        self._one: List[Optional[bool]]
        if unit is None or n > 63:
            self._one = [None] * n
        else:
            self._one = [bool(unit >> i & 1) for i in range(n)]
        self.num_sequences = len(cols[0][0]) - 1 if cols else 0
        self.memo: Any = None  # for users of a chunk that is reused (mlfeed.torch's tensors)

    def index(self, name: str) -> int:
        """The index of stream name (or alias); KeyError naming the streams there are."""
        for i, st in enumerate(self.streams):
            if st["name"] == name or st.get("alias") == name:
                return i
        raise KeyError("no stream %r: the streams are %s" % (
            name, ", ".join(repr(st["name"]) for st in self.streams)))

    def one_per_sequence(self, i: int) -> bool:
        """Whether every sequence has exactly one sample of stream i."""
        o = self._one[i]
        if o is None:
            seq = self._cols[i][0]
            o = bool(seq[-1] == len(seq) - 1 and (len(seq) < 3 or (np.diff(seq) == 1).all()))
            self._one[i] = o
        return o

    def lengths(self, i: int) -> NDArray[Any]:
        return np.diff(self._cols[i][0])

    def _samples(self, i: int) -> Any:
        """Stream i's samples as an array (samples, *shape), a CSR matrix (samples, dim), or,
        for samples of varying size, a list of arrays."""
        st = self.streams[i]
        seq, samp, idx, vals = self._cols[i]
        ns = int(seq[-1]) if len(seq) else 0
        if st["storage"] == "sparse":
            import scipy.sparse  # type: ignore[import]
            indptr = samp if samp is not None else np.zeros(ns + 1, np.int64)
            assert idx is not None  # a sparse stream has indices
            if len(idx) < 2**31 - 1:
                indptr = indptr.astype(np.int32)
            else:
                idx = idx.astype(np.int64)
            return scipy.sparse.csr_matrix((vals, idx, indptr), shape=(ns, st["dim"]), copy=False)
        if samp is not None:  # dense samples of varying size
            s = samp.tolist()
            return [vals[s[k]:s[k + 1]] for k in range(ns)]
        return vals.reshape((ns,) + tuple(st["shape"] or ()))

    def read_form(self, i: int) -> Any:
        """Stream i as Dataset.read returns it: an array (sequences, *shape) or CSR matrix when
        every sequence has one sample, else a list of per-sequence arrays or matrices."""
        if self.one_per_sequence(i):
            return self._samples(i)
        return self.sequences(i)

    def sequences(self, i: int) -> List[Any]:
        """Stream i as a list, one entry per sequence: an array (samples, *shape) or a CSR
        matrix (samples, dim)."""
        seq = self._cols[i][0].tolist()
        s = self._samples(i)
        return [s[seq[q]:seq[q + 1]] for q in range(len(seq) - 1)]

    def padded(self, i: int) -> Any:
        """Stream i as a minibatch gives it: (sequences, *shape) when every sequence has one
        sample, else (sequences, max_len, *shape) padded with zeros (see mask)."""
        st = self.streams[i]
        if self.one_per_sequence(i):
            return self._samples(i)
        if st["storage"] == "sparse" or st["dim"] == 0 or st["type"] in VARLEN:
            return self.sequences(i)
        seq = self._cols[i][0]
        lens = np.diff(seq)
        n = len(lens)
        width = int(lens.max()) if n else 0
        s = self._samples(i)
        out = np.zeros((n, width) + s.shape[1:], s.dtype)
        rows = np.repeat(np.arange(n), lens)
        cols = np.arange(len(s)) - np.repeat(seq[:-1], lens)
        out[rows, cols] = s
        return out

    def mask(self, i: int) -> NDArray[Any]:
        """A boolean array (sequences, max_len): True where padded(i) holds a sample."""
        lens = np.diff(self._cols[i][0])
        width = int(lens.max()) if len(lens) else 0
        return np.arange(width)[None, :] < lens[:, None]

    def copy(self) -> "Chunk":
        """A chunk whose buffers are its own."""
        c = Chunk.__new__(Chunk)
        c.streams, c.num_sequences, c.ids, c._one = self.streams, self.num_sequences, self.ids, list(self._one)
        c.memo = None
        c._cols = [(seq.copy(), None if samp is None else samp.copy(),
                    None if idx is None else idx.copy(), vals.copy())
                   for seq, samp, idx, vals in self._cols]
        return c


def fetch_chunk(h: int, streams: List[Dict[str, Any]]) -> Chunk:
    """Read result h's chunk into fresh buffers."""
    l = _lib.lib()
    n = HEADER + PER_STREAM * len(streams)
    raw = (ctypes.c_int64 * n)()
    e = _lib.new_error()
    if l.mlfeed_sizes(h, raw, n, ctypes.byref(e)) != 0:
        _lib.check(e)
    sizes = list(raw)
    b = _Buffers(n)
    ptrs = b.ensure(byte_sizes(sizes, len(streams)))
    if l.mlfeed_fill(h, ptrs, n, ctypes.byref(e)) != 0:
        _lib.check(e)
    return Chunk(streams, sizes, b.bufs)
