"""mlfeed's exceptions."""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Base class of every error mlfeed raises.

    Attributes (None when unknown): ``file``, ``line`` and ``column`` (1-based, text formats),
    ``offset`` (byte offset, binary formats), ``field`` (what was being read there).
    """

    def __init__(self, message: str, file: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, offset: Optional[int] = None,
                 field: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.offset = offset
        self.field = field

    def __str__(self) -> str:
        return self.message


class FormatError(Error, ValueError):
    """Invalid or unreadable data (the CLI's exit status 1): names the file and the place. A
    file truncated or rewritten by another program while mlfeed reads it is one too."""


class UsageError(Error, ValueError):
    """Wrong usage or something unsupported: a bad argument value, option, format or state, a
    conversion the output format cannot hold (the CLI's exit status 2)."""


class FileNotFound(Error, FileNotFoundError):
    """A file that does not exist."""


class InternalError(Error):
    """A bug in mlfeed (a recovered panic); please report it with the message."""


class ForkError(Error, RuntimeError):
    """mlfeed used in a process forked after its parent used it."""


class DataWarning(UserWarning):
    """Something worth knowing about the data that does not stop the operation, as the CLI
    prints it on stderr: values of a CTF stream rounded to float32, HDF5 datasets left out
    (and why)."""


class FileError(Error, OSError):
    """Another operating-system error on a file: permission denied, a directory where a file
    was expected, a full disk."""


_KINDS = {1: FormatError, 2: UsageError, 4: InternalError, 5: FileNotFound, 6: FileError}


def _error(kind: int, message: str, file: Optional[str], line: Optional[int],
           column: Optional[int], offset: int, field: Optional[str]) -> BaseException:
    if kind == 3:
        return KeyboardInterrupt(message)
    cls = _KINDS.get(kind, Error)
    return cls(message, file=file, line=line or None, column=column or None,
               offset=offset if offset >= 0 else None, field=field)
