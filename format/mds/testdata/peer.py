"""Read an MDS data set with MosaicML Streaming's own MDSReader and print it as JSON lines.

    STREAMING_SRC=path/to/streaming /usr/bin/python3 peer.py DIR

Each shard is read as StreamingDataset reads it (MDSReader.from_json on index.json's entry,
zstd shards decompressed with Streaming's decompress), every sample through get_sample_data
and decode_sample; images and arrays are printed in a form the Go tests compare.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from decimal import Decimal
from typing import Any

import numpy as np
from PIL import Image

import mosaic


def plain(v: Any) -> Any:
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode()}
    if isinstance(v, Image.Image):
        return {"image": [v.width, v.height, v.mode], "b64": base64.b64encode(v.tobytes()).decode()}
    if isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "values": v.ravel().tolist()}
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, Decimal):
        return {"decimal": str(v)}
    return v


def main() -> None:
    src = mosaic.source_env()
    if not src:
        sys.exit("set STREAMING_SRC to a checkout of mosaicml/streaming")
    _, R = mosaic.load(src)
    from streaming.base.compression import decompress  # type: ignore[import-not-found]
    from streaming.base.hashing import get_hash  # type: ignore[import-not-found]

    d = sys.argv[1]
    with open(os.path.join(d, "index.json")) as f:
        index = json.load(f)
    for info in index["shards"]:
        shard = R.from_json(d, "", info)
        shard.validate(allow_unsafe_types=False)
        raw = os.path.join(d, info["raw_data"]["basename"])
        if info["zip_data"]:
            with open(os.path.join(d, info["zip_data"]["basename"]), "rb") as f:
                z = f.read()
            for algo, h in info["zip_data"]["hashes"].items():
                assert get_hash(algo, z) == h, (algo, info["zip_data"]["basename"])
            data = decompress(info["compression"], z)
            with open(raw, "wb") as f:
                f.write(data)
        with open(raw, "rb") as f:
            data = f.read()
        assert len(data) == info["raw_data"]["bytes"]
        for algo, h in info["raw_data"]["hashes"].items():
            assert get_hash(algo, data) == h, (algo, info["raw_data"]["basename"])
        for k in range(info["samples"]):
            sample = shard.decode_sample(shard.get_sample_data(k))
            print(json.dumps({c: plain(v) for c, v in sample.items()}, sort_keys=True))
        if info["zip_data"]:
            os.remove(raw)


if __name__ == "__main__":
    main()
