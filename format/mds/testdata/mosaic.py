"""Import MosaicML Streaming's own MDS writer and reader from a copy of its source.

Streaming's package imports cloud clients, torch.distributed and more on import; its MDS
writer and shard reader need none of that. load() copies just the modules they use out of a
Streaming source tree (a checkout, or a git directory read with `git show`) into a temporary
package, with small stand-ins of our own for the two modules that pull in the rest
(streaming.base.storage.upload: local output only; streaming.base.util: bytes_to_int).
Streaming's own code is never kept in this repository (Apache-2.0, github.com/mosaicml/streaming).

The copied modules import numpy, PIL, typing_extensions, xxhash, zstd, brotli and snappy
(Debian: python3-numpy python3-pil python3-typing-extensions python3-xxhash python3-zstd
python3-brotli python3-snappy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

# The modules MDSWriter and MDSReader use, copied as they are.
COPIED = [
    "streaming/base/compression.py",
    "streaming/base/hashing.py",
    "streaming/base/array.py",
    "streaming/base/format/index.py",
    "streaming/base/format/base/writer.py",
    "streaming/base/format/base/reader.py",
    "streaming/base/format/mds/encodings.py",
    "streaming/base/format/mds/writer.py",
    "streaming/base/format/mds/reader.py",
]

UPLOAD_STANDIN = '''
class CloudUploader:
    """Local output only: the writer's files stay where it writes them."""

    def __init__(self, out):
        self.local, self.remote = out, None

    @classmethod
    def get(cls, out, keep_local=False, progress_bar=False, retry=2):
        if not isinstance(out, str):
            raise ValueError("local output only")
        os.makedirs(out, exist_ok=True)
        return cls(out)

    def upload_file(self, filename):
        pass
'''

UTIL_STANDIN = '''
def bytes_to_int(value):
    """Sizes as plain numbers of bytes only."""
    return int(value)
'''


def source_env() -> str | None:
    """The Streaming source named by $STREAMING_SRC, if any."""
    return os.environ.get("STREAMING_SRC") or None


def _read(src: str, path: str) -> str:
    if os.path.isfile(os.path.join(src, path)):
        with open(os.path.join(src, path), encoding="utf-8") as f:
            return f.read()
    return subprocess.run(["git", "--git-dir", src, "show", "HEAD:" + path],
                          check=True, capture_output=True, text=True).stdout


def load(src: str) -> tuple[Any, Any]:
    """Return Streaming's (MDSWriter, MDSReader) classes, imported from the source src."""
    root = tempfile.mkdtemp(prefix="mlfeed-streaming-")
    for path in COPIED:
        dst = os.path.join(root, path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(_read(src, path))
    for pkg in ["streaming", "streaming/base", "streaming/base/format", "streaming/base/format/base",
                "streaming/base/format/mds", "streaming/base/storage"]:
        os.makedirs(os.path.join(root, pkg), exist_ok=True)
        open(os.path.join(root, pkg, "__init__.py"), "a").close()
    with open(os.path.join(root, "streaming/base/storage/upload.py"), "w") as f:
        f.write("import os\n" + UPLOAD_STANDIN)
    with open(os.path.join(root, "streaming/base/util.py"), "w") as f:
        f.write(UTIL_STANDIN)
    sys.path.insert(0, root)
    from streaming.base.format.mds.reader import MDSReader  # type: ignore[import-not-found]
    from streaming.base.format.mds.writer import MDSWriter  # type: ignore[import-not-found]
    return MDSWriter, MDSReader
