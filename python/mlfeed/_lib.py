"""The shared library (libmlfeed.so, built from capi/) and the calls into it.

Everything that touches ctypes lives here. The library is loaded on first use, so a process
that forks before using mlfeed (a DataLoader's workers) loads its own copy in the child.
"""

from __future__ import annotations

import ctypes
import json
import warnings
import operator
import os
import threading
import weakref
from typing import Any, Callable, Iterable, List, Mapping, Optional, Union

from ._errors import (Error, FormatError, UsageError, InternalError, ForkError,
                      FileNotFound, DataWarning, _error)

#: What names a file: a str, bytes or os.PathLike path.
PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: One path or several.
PathsArg = Union[PathArg, Iterable[PathArg]]

ABI_VERSION = 4
_POLL_MS = 100  # how long one wait in Go lasts before Python checks for signals


class _CError(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("line", ctypes.c_int64),
        ("column", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("file", ctypes.c_char * 1024),
        ("field", ctypes.c_char * 128),
        ("message", ctypes.c_char * 4096),
    ]


_lock = threading.Lock()
_lib: Any = None
_pid: Optional[int] = None
_forked = False


def _after_fork_in_child() -> None:
    global _forked
    if _lib is not None:
        _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def library_path() -> str:
    """The path of the shared library: $MLFEED_LIBRARY, else libmlfeed.so beside this file."""
    p = os.environ.get("MLFEED_LIBRARY")
    if p:
        return p
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmlfeed.so")


def _load() -> None:
    global _lib, _pid
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            "mlfeed: %s is missing: build it with `bash scripts/python.sh` in the mlfeed "
            "repository, or install the package with `pip install ./python`" % path)
    lib = ctypes.CDLL(path)  # CDLL: the GIL is released during every call
    u, i64, p, c, ip = ctypes.c_size_t, ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    err = ctypes.POINTER(_CError)
    sigs = {
        "mlfeed_abi_version": ([], i64),
        "mlfeed_start": ([c, c], u),
        "mlfeed_wait": ([u, i64], ip),
        "mlfeed_cancel": ([u], None),
        "mlfeed_result": ([u, p, i64, err], i64),
        "mlfeed_free": ([u], None),
        "mlfeed_sizes": ([u, p, i64, err], ip),
        "mlfeed_fill": ([u, p, i64, err], ip),
        "mlfeed_next": ([u, ip, i64, p, i64, err], ip),
        "mlfeed_state": ([u, p, i64, err], i64),
        "mlfeed_source_warnings": ([u, p, i64, err], i64),
        "mlfeed_restore": ([u, c, c, err], ip),
        "mlfeed_goroutines": ([], i64),
        "mlfeed_source_fill": ([u, ip, p, p, i64, err], ip),
    }
    for name, (args, res) in sigs.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    v = lib.mlfeed_abi_version()
    if v != ABI_VERSION:
        raise ImportError("mlfeed: %s has ABI version %d, this package needs %d: rebuild it "
                          "with `bash scripts/python.sh`" % (path, v, ABI_VERSION))
    _lib, _pid = lib, os.getpid()


def lib() -> Any:
    """The loaded library; raises ForkError in a child forked after it was loaded."""
    if _forked or (_lib is not None and _pid != os.getpid()):
        raise ForkError(
            "mlfeed cannot be used in a process forked after the parent used it: Go's runtime "
            "does not survive fork(). Use the 'spawn' or 'forkserver' start method (for a "
            "DataLoader: multiprocessing_context='spawn'), or create mlfeed objects only in "
            "the child (mlfeed.torch.MinibatchDataset does: it opens its data in the worker)")
    if _lib is None:
        with _lock:
            if _lib is None:
                _load()
    return _lib


def usable() -> bool:
    """Whether calls into the library are safe here (loaded, and not in a forked child)."""
    return _lib is not None and not _forked and _pid == os.getpid()


def new_error() -> _CError:
    return _CError()


def check(e: _CError) -> None:
    """Raise the exception that the filled error e describes, if any."""
    if e.kind != 0:
        raise _error(e.kind, e.message.decode("utf-8", "replace"),
                     e.file.decode("utf-8", "replace") or None, e.line, e.column, e.offset,
                     e.field.decode("utf-8", "replace") or None)


def free(h: int) -> None:
    """Release handle h (closing what it holds) unless that is unsafe here."""
    if h and usable():
        _lib.mlfeed_free(h)


def _free_keeping(h: int, keep: object, then: Optional[Callable[[], None]] = None) -> None:
    free(h)
    if then is not None:
        then()


def finalizer(obj: object, h: int, keep: object = None,
              then: Optional[Callable[[], None]] = None) -> weakref.finalize:
    """Release handle h when obj is collected, or at exit (not in a forked child); keep (the
    buffers Go writes into) lives until then; then, if given, runs after the release."""
    if keep is None and then is None:
        return weakref.finalize(obj, free, h)
    return weakref.finalize(obj, _free_keeping, h, keep, then)


def _result(l: Any, h: int) -> Any:
    e = _CError()
    size = 1 << 12
    while True:
        buf = ctypes.create_string_buffer(size)
        n = l.mlfeed_result(h, buf, size, ctypes.byref(e))
        if n < 0:
            check(e)
            raise InternalError("mlfeed: operation failed without an error")
        if n <= size:
            return json.loads(buf.raw[:n]) if n else None
        size = n


def call(op: str, args: Mapping[str, Any]) -> Any:
    """Run operation op with args (JSON-serializable) in Go and return its JSON result.

    The call waits in short slices so that Ctrl-C (KeyboardInterrupt) interrupts it: the Go
    operation is then canceled.
    """
    l = lib()
    h = l.mlfeed_start(op.encode(), json.dumps(args).encode())
    try:
        while l.mlfeed_wait(h, _POLL_MS) == 0:
            pass
        res = _result(l, h)
    except BaseException:
        l.mlfeed_cancel(h)
        l.mlfeed_free(h)
        raise
    l.mlfeed_free(h)
    # {"value": ..., "warnings": [...]}: what the formats logged, as the CLI's stderr has it.
    for w in res.get("warnings") or ():
        warnings.warn(w, DataWarning, stacklevel=3)
    return res["value"]


def clean(d: Mapping[str, Any]) -> dict[str, Any]:
    """d without its None values (arguments left to the Go side's defaults)."""
    return {k: v for k, v in d.items() if v is not None}


def _kind(v: object) -> str:
    return type(v).__name__


def path_arg(p: object, name: str = "path") -> str:
    """A path as a str, or TypeError."""
    if isinstance(p, (str, bytes, os.PathLike)):
        return os.fsdecode(p)
    raise TypeError("%s must be a path (str, bytes or os.PathLike), not %s" % (name, _kind(p)))


def paths_arg(paths: object, name: str = "paths") -> List[str]:
    """One path or an iterable of paths as a list of str, or TypeError."""
    if paths is None:
        return []
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fsdecode(paths)]
    if not isinstance(paths, Iterable) or isinstance(paths, Mapping):
        raise TypeError("%s must be a path or a list of paths, not %s" % (name, _kind(paths)))
    out = []
    for k, p in enumerate(paths):
        out.append(path_arg(p, "%s[%d]" % (name, k)))
    return out


def str_arg(v: object, name: str) -> Optional[str]:
    """None or a str, or TypeError."""
    if v is None or isinstance(v, str):
        return v
    raise TypeError("%s must be a str, not %s" % (name, _kind(v)))


def int_arg(v: object, name: str, lo: int, hi: int, what: str = "") -> int:
    """An int (or numpy integer) in [lo, hi]: TypeError for another type (a bool or a float
    too), ValueError (UsageError) naming the argument and the range otherwise."""
    if isinstance(v, bool) or v is None:
        raise TypeError("%s must be an int, not %s" % (name, _kind(v)))
    try:
        n = operator.index(v)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError("%s must be an int, not %s %r" % (name, _kind(v), v)) from None
    if not lo <= n <= hi:
        raise UsageError("%s=%d is out of range: %s" % (name, n, what or _range(lo, hi)))
    return n


def _range(lo: int, hi: int) -> str:
    def fmt(x: int) -> str:
        for b in (64, 63, 32, 31):
            if x == 2**b - 1:
                return "2**%d-1" % b
        return str(x)
    return "it must be from %s to %s" % (fmt(lo), fmt(hi))


def bool_arg(v: object, name: str) -> bool:
    """A bool (or numpy bool), or TypeError."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return bool(v)
    raise TypeError("%s must be True or False, not %s %r" % (name, _kind(v), v))


def input_arg(s: object) -> str:
    """A stream declaration as a string NAME:dense|sparse:DIM[:ALIAS[:TYPE]] or a dict."""
    if isinstance(s, str):
        return s
    if isinstance(s, Mapping):
        unknown = set(s) - {"name", "storage", "dim", "alias", "type"}
        if unknown or "name" not in s or "dim" not in s:
            raise TypeError("an input dict has the keys name, dim (needed), storage, alias and "
                            "type; got %s" % ", ".join(sorted(map(str, s))))
        dim = int_arg(s["dim"], "input %r: dim" % (s["name"],), 0, 2**31 - 1)
        parts = [str(s["name"]), str(s.get("storage", "dense")), str(dim), str(s.get("alias") or "")]
        if s.get("type"):
            parts.append(str(s["type"]))
        return ":".join(parts).rstrip(":")
    raise TypeError("an input is a string NAME:dense|sparse:DIM[:ALIAS[:TYPE]] or a dict, not %s"
                    % _kind(s))


def inputs_arg(inputs: object) -> Optional[List[str]]:
    if inputs is None:
        return None
    if isinstance(inputs, (str, Mapping)):
        inputs = [inputs]
    if not isinstance(inputs, Iterable):
        raise TypeError("inputs must be a list of stream declarations, not %s" % _kind(inputs))
    return [input_arg(s) for s in inputs] or None


def params_arg(d: object, name: str) -> Optional[dict[str, str]]:
    """A mapping of option names to values (str, int, float, bool, or a list or tuple of str,
    which options naming several things take joined by commas: {"columns": ["a", "b"]}) as
    strings, or TypeError."""
    if d is None:
        return None
    if not isinstance(d, Mapping):
        raise TypeError("%s must be a dict {name: value}, not %s" % (name, _kind(d)))
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise TypeError("%s: the names must be str, not %s" % (name, _kind(k)))
        if isinstance(v, (list, tuple)):
            for x in v:
                if not isinstance(x, str):
                    raise TypeError("%s[%r] must list names (str), not %s" % (name, k, _kind(x)))
                if "," in x:
                    raise UsageError("%s[%r]: %r holds a comma, which the option takes as a "
                                     "separator" % (name, k, x))
            out[k] = ",".join(v)
            continue
        if not isinstance(v, (str, int, float, bool, os.PathLike)):
            raise TypeError("%s[%r] must be a str, number, bool or list of str, not %s"
                            % (name, k, _kind(v)))
        out[k] = _param(v)
    return out or None


def open_args(paths: object = None, format: object = None, inputs: object = None,
              options: object = None, config: object = None, defines: object = None,
              cache: object = None, outside_shards: object = False) -> dict[str, Any]:
    """The JSON arguments every operation that reads takes, checked (TypeError for a wrong
    type)."""
    return clean({
        "cache": cache_arg(cache),
        "outside_shards": bool_arg(outside_shards, "outside_shards") or None,
        "paths": paths_arg(paths),
        "format": str_arg(format, "format"),
        "inputs": inputs_arg(inputs),
        "options": params_arg(options, "options"),
        "config": None if config is None else path_arg(config, "config"),
        "defines": params_arg(defines, "defines"),
    })


def cache_arg(cache: object) -> Optional[str]:
    """The node cache "DIR[:SIZE]" (str or a path), or TypeError; "" is a UsageError."""
    if cache is None:
        return None
    if not isinstance(cache, (str, os.PathLike)):
        raise TypeError("cache must be a str \"DIR[:SIZE]\" or a path, not %s" % _kind(cache))
    c = os.fsdecode(cache)
    if c == "":
        raise UsageError("cache=\"\": give a directory, \"DIR[:SIZE]\", or \"off\"")
    return c


def _param(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, os.PathLike):
        return os.fsdecode(v)
    return str(v)


def explain_directory(e: Error, paths: List[str]) -> Error:
    """e, or, when a path given is a directory that holds no mlfeed data set (no manifest, and
    no files, or one whose format cannot be told), an error of e's class that names the
    directory and says so, rather than blaming whichever file of it came first."""
    msg = e.message
    if not ("unknown format" in msg or "holds no shards" in msg):
        return e
    for d in paths:
        if not os.path.isdir(d) or os.path.exists(os.path.join(d, "mlfeed.json")):
            continue
        if not msg.startswith(os.path.join(d, "")) and not msg.startswith(d + ":"):
            continue
        return type(e)("%s: the directory holds no mlfeed data set: it has no mlfeed.json "
                       "manifest, and its files are not the shards of one data set (%s)"
                       % (d, msg), file=d)
    return e


__all__ = ["Error", "FormatError", "UsageError", "InternalError", "ForkError", "FileNotFound"]
