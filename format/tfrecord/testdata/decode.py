#!/usr/bin/env python3
"""An independent TFRecord reader for mlfeed's tests, written from the public specifications
(TensorFlow's record framing, the protobuf wire format, example.proto and feature.proto) with
Python's standard library only.

    decode.py FILE [gzip|zlib|none]

prints one JSON object per record:
    {"features": {NAME: {"kind": "float_list"|"int64_list"|"bytes_list"|null, "values": [...]}},
     "feature_lists": {NAME: [FEATURE, ...]}}
bytes values as standard base64. Exits 1 with a message on a CRC mismatch or truncation.
"""
import base64
import gzip
import json
import struct
import sys
import zlib

_POLY = 0x82F63B78  # CRC-32C (Castagnoli), reflected
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint runs past the end")
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, i
        if shift >= 70:
            raise ValueError("varint too long")


def fields(b):
    """(number, wire type, value) of every field of message b."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("length-delimited field runs past the end")
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def feature(b):
    kind, vals = None, []
    for num, wt, v in fields(b):
        if num == 1:
            kind = "bytes_list"
            vals = [base64.b64encode(x).decode() for n2, w2, x in fields(v) if n2 == 1]
        elif num == 2:
            kind = "float_list"
            vals = []
            for n2, w2, x in fields(v):
                if n2 != 1:
                    continue
                if w2 == 2:
                    vals += list(struct.unpack("<%df" % (len(x) // 4), x))
                else:
                    vals.append(struct.unpack("<f", x)[0])
        elif num == 3:
            kind = "int64_list"
            vals = []
            for n2, w2, x in fields(v):
                if n2 != 1:
                    continue
                if w2 == 2:
                    j = 0
                    while j < len(x):
                        u, j = varint(x, j)
                        vals.append(signed64(u))
                else:
                    vals.append(signed64(x))
    return {"kind": kind, "values": vals}


def entries(b):
    for num, wt, e in fields(b):
        if num != 1:
            continue
        key, val = b"", b""
        for n2, w2, x in fields(e):
            if n2 == 1:
                key = x
            elif n2 == 2:
                val = x
        yield key.decode("utf-8"), val


def record(b):
    out = {"features": {}, "feature_lists": {}}
    for num, wt, v in fields(b):
        if num == 1:
            for k, f in entries(v):
                out["features"][k] = feature(f)
        elif num == 2:
            for k, fl in entries(v):
                out["feature_lists"][k] = [feature(f) for n2, w2, f in fields(fl) if n2 == 1]
    return out


def main():
    path = sys.argv[1]
    comp = sys.argv[2] if len(sys.argv) > 2 else "none"
    with open(path, "rb") as f:
        data = f.read()
    if comp == "gzip":
        data = gzip.decompress(data)
    elif comp == "zlib":
        data = zlib.decompress(data)
    off = 0
    out = sys.stdout
    while off < len(data):
        if off + 12 > len(data):
            sys.exit("%s: truncated header at %d" % (path, off))
        (n,) = struct.unpack_from("<Q", data, off)
        (lc,) = struct.unpack_from("<I", data, off + 8)
        if masked(data[off:off + 8]) != lc:
            sys.exit("%s: length CRC mismatch at %d" % (path, off))
        if off + 12 + n + 4 > len(data):
            sys.exit("%s: truncated record at %d" % (path, off))
        rec = data[off + 12:off + 12 + n]
        (dc,) = struct.unpack_from("<I", data, off + 12 + n)
        if masked(rec) != dc:
            sys.exit("%s: data CRC mismatch at %d" % (path, off))
        out.write(json.dumps(record(rec)) + "\n")
        off += 12 + n + 4


if __name__ == "__main__":
    main()
