"""An independent reader of WebDataset shards for the tests: Python's tarfile and numpy,
grouping members as webdataset's tar_file_iterator and group_by_keys do and decoding them
as its default decoders do. Prints one JSON list of samples:
{"key": KEY, "streams": {EXT: {"int": "N"} | {"text": S} | {"b64": B} |
{"dtype": D, "shape": [...], "values": [repr, ...]}}}."""
import base64
import io
import json
import re
import sys
import tarfile

import numpy as np

INT = {"cls", "cls2", "index", "inx", "id"}
TEXT = {"txt", "text", "transcript", "json", "jsn"}


def split(name):
    m = re.match(r"^((?:.*/|)[^.]+)[.]([^/]*)$", name)
    return (m.group(1), m.group(2)) if m else (None, None)


def value(ext, data):
    last = ext.rsplit(".", 1)[-1]
    if last in INT:
        return {"int": str(int(data))}
    if last in TEXT:
        return {"text": data.decode("utf-8")}
    if last == "npy":
        a = np.load(io.BytesIO(data))
        fl = a.dtype.kind in "fc"
        return {"dtype": a.dtype.name, "shape": list(a.shape),
                "values": [repr(float(x)) if fl else str(int(x)) for x in a.ravel(order="C")]}
    return {"b64": base64.b64encode(data).decode()}


def main(path):
    out, cur = [], None
    with tarfile.open(path) as t:
        for m in t:
            if not m.isreg() or re.match(r"__[^/]*__($|/)", m.name):
                continue
            key, ext = split(m.name)
            if key is None:
                continue
            ext = ext.lower()
            data = t.extractfile(m).read()
            if cur is None or cur["key"] != key:
                cur = {"key": key, "streams": {}}
                out.append(cur)
            assert ext not in cur["streams"], m.name
            cur["streams"][ext] = value(ext, data)
    json.dump(out, sys.stdout)


main(sys.argv[1])
