"""Write the MDS data sets of this directory with MosaicML Streaming's own MDSWriter.

    STREAMING_SRC=path/to/streaming /usr/bin/python3 make.py

STREAMING_SRC is a checkout of github.com/mosaicml/streaming (or its git directory); see
mosaic.py for what is imported from it. Each data set DIR gets DIR.expected.json: the values
the writer was given, as the Go tests compare them (bytes in base64, floats as their repr).
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import sys
from decimal import Decimal
from typing import Any

import numpy as np
from PIL import Image

import mosaic

HERE = os.path.dirname(os.path.abspath(__file__))


def image(k: int, fmt: str) -> bytes:
    im = Image.new("RGB", (4, 3), (k * 20 % 256, 7, 200))
    out = io.BytesIO()
    im.save(out, format=fmt)
    return out.getvalue()


def plain(v: Any) -> Any:
    """v as JSON for the Go tests."""
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode()}
    if isinstance(v, Image.Image):
        return {"image": [v.width, v.height, v.mode]}
    if isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "values": [plain(x) for x in v.ravel().tolist()]}
    if isinstance(v, (np.floating, float)):
        return {"float": repr(float(v))}
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def write(W: Any, name: str, columns: dict[str, str], samples: list[dict[str, Any]], **kw: Any) -> None:
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    with W(out=out, columns=columns, **kw) as w:
        for s in samples:
            w.write(s)
    with open(out + ".expected.json", "w") as f:
        json.dump({"columns": columns, "samples": [{k: plain(v) for k, v in s.items()} for s in samples]}, f,
                  indent=0, sort_keys=True)


def main() -> None:
    src = mosaic.source_env()
    if not src:
        sys.exit("set STREAMING_SRC to a checkout of mosaicml/streaming")
    W, _ = mosaic.load(src)

    # Every fixed-size number, text and bytes; several shards, hashes.
    cols = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
            "u32": "uint32", "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64",
            "int": "int", "s": "str", "si": "str_int", "sf": "str_float", "sd": "str_decimal",
            "j": "json", "b": "bytes"}
    samples = []
    for k in range(40):
        samples.append({
            "i8": np.int8(-100 + k), "i16": np.int16(-30000 + k), "i32": np.int32(-2**31 + k),
            "i64": np.int64(-2**63 + k), "u8": np.uint8(255 - k), "u16": np.uint16(65535 - k),
            "u32": np.uint32(2**32 - 1 - k), "u64": np.uint64(2**64 - 1 - k),
            "f16": np.float16(k / 8 - 2), "f32": np.float32(k * 0.1), "f64": np.float64(k / 3),
            "int": k * 1000003 - 7, "s": f"héllo {k} ✓", "si": -(10**17) + k, "sf": k * 1e-5 - 1e16 * (k % 2),
            "sd": Decimal(f"{k}.{k:03d}0"), "j": {"k": k, "tags": ["a", "b"][: k % 3]}, "b": bytes(range(k % 7)),
        })
    write(W, "scalars", cols, samples, size_limit=1500, hashes=["sha1", "xxh64"])

    # ndarrays of every kind, images and lists of them; zstd shards.
    cols = {"fixed": "ndarray:uint8:4,3", "dyn": "ndarray:float32", "any": "ndarray", "half": "ndarray:float16:2",
            "jpg": "jpeg", "png": "png", "pil": "pil", "lj": "list[jpeg]", "lp": "list[png]", "lpil": "list[pil]",
            "ja": "jpeg_array"}
    samples = []
    for k in range(12):
        samples.append({
            "fixed": np.arange(12, dtype=np.uint8).reshape(4, 3) + k,
            "dyn": np.arange((k % 3 + 1) * 2, dtype=np.float32).reshape(k % 3 + 1, 2) / 4,
            "any": np.arange(k % 4 + 1, dtype=np.int16) - k,
            "half": np.array([k / 4, -k], dtype=np.float16),
            "jpg": Image.open(io.BytesIO(image(k, "JPEG"))), "png": Image.open(io.BytesIO(image(k, "PNG"))),
            "pil": Image.new("L", (2, 2), k),
            "lj": [Image.open(io.BytesIO(image(k + e, "JPEG"))) for e in range(k % 3)],
            "lp": [Image.new("RGB", (2, 1), (e, k, 0)) for e in range(1 + k % 2)],
            "lpil": [Image.new("L", (1, 1), e) for e in range(2)],
            "ja": [image(k + e, "JPEG") for e in range(1 + k % 2)],
        })
    write(W, "arrays", cols, samples, size_limit=3000, compression="zstd")

    # A pickled column, which mlfeed refuses (or reads as bytes with pkl=bytes).
    write(W, "pickled", {"x": "int32", "obj": "pkl"}, [{"x": np.int32(k), "obj": {"k": k}} for k in range(3)])


if __name__ == "__main__":
    main()
