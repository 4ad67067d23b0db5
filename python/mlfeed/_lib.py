"""The shared library (libmlfeed.so, built from capi/) and the calls into it.

Everything that touches ctypes lives here. The library is loaded on first use, so a process
that forks before using mlfeed (a DataLoader's workers) loads its own copy in the child.
"""

import ctypes
import json
import os
import threading
import weakref

from ._errors import (Error, FormatError, UsageError, InternalError, ForkError,
                      FileNotFound, _error)

ABI_VERSION = 3
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
_lib = None
_pid = None
_forked = False


def _after_fork_in_child():
    global _forked
    if _lib is not None:
        _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def library_path():
    """The path of the shared library: $MLFEED_LIBRARY, else libmlfeed.so beside this file."""
    p = os.environ.get("MLFEED_LIBRARY")
    if p:
        return p
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmlfeed.so")


def _load():
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


def lib():
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


def usable():
    """Whether calls into the library are safe here (loaded, and not in a forked child)."""
    return _lib is not None and not _forked and _pid == os.getpid()


def new_error():
    return _CError()


def check(e):
    """Raise the exception that the filled error e describes, if any."""
    if e.kind != 0:
        raise _error(e.kind, e.message.decode("utf-8", "replace"),
                     e.file.decode("utf-8", "replace") or None, e.line, e.column, e.offset,
                     e.field.decode("utf-8", "replace") or None)


def free(h):
    """Release handle h (closing what it holds) unless that is unsafe here."""
    if h and usable():
        _lib.mlfeed_free(h)


def _free_keeping(h, keep):
    free(h)


def finalizer(obj, h, keep=None):
    """Release handle h when obj is collected, or at exit (not in a forked child); keep (the
    buffers Go writes into) lives until then."""
    if keep is None:
        return weakref.finalize(obj, free, h)
    return weakref.finalize(obj, _free_keeping, h, keep)


def _result(l, h):
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


def call(op, args):
    """Run operation op with args (JSON-serializable) in Go and return its JSON result.

    The call waits in short slices so that Ctrl-C (KeyboardInterrupt) interrupts it: the Go
    operation is then canceled.
    """
    l = lib()
    h = l.mlfeed_start(op.encode(), json.dumps(args).encode())
    try:
        while l.mlfeed_wait(h, _POLL_MS) == 0:
            pass
        return _result(l, h)
    except BaseException:
        l.mlfeed_cancel(h)
        raise
    finally:
        l.mlfeed_free(h)


def clean(d):
    """d without its None values (arguments left to the Go side's defaults)."""
    return {k: v for k, v in d.items() if v is not None}


def paths_arg(paths):
    if paths is None:
        return []
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fsdecode(paths)]
    return [os.fsdecode(p) for p in paths]


def input_arg(s):
    """A stream declaration as a string NAME:dense|sparse:DIM[:ALIAS[:TYPE]] or a dict."""
    if isinstance(s, str):
        return s
    if isinstance(s, dict):
        parts = [s["name"], s.get("storage", "dense"), str(s["dim"]), s.get("alias") or ""]
        if s.get("type"):
            parts.append(str(s["type"]))
        return ":".join(parts).rstrip(":")
    raise UsageError("an input is a string NAME:dense|sparse:DIM[:ALIAS[:TYPE]] or a dict, not %r" % (s,))


def open_args(paths=None, format=None, inputs=None, options=None, config=None, defines=None):
    """The JSON arguments every operation that reads takes."""
    if config is not None:
        config = os.fsdecode(config)
    return clean({
        "paths": paths_arg(paths),
        "format": format,
        "inputs": [input_arg(s) for s in inputs] if inputs else None,
        "options": {str(k): _param(v) for k, v in options.items()} if options else None,
        "config": config,
        "defines": {str(k): str(v) for k, v in defines.items()} if defines else None,
    })


def _param(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


__all__ = ["Error", "FormatError", "UsageError", "InternalError", "ForkError", "FileNotFound"]
