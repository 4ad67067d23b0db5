#!/usr/bin/env python3
"""tf.train.Example and SequenceExample parsed by Google's protobuf library (Debian's
python3-protobuf), for mlfeed's tests and bench/tfrecord.sh: the message types are built at
run time from the field definitions of TensorFlow's example.proto and feature.proto, so
neither TensorFlow nor protoc is needed. Record CRCs are checked with python3-crc32c.

    pbcheck.py decode FILE [gzip|zlib|none] [example|sequence_example]
        prints one JSON object per record, as decode.py does
    pbcheck.py bench FILE [example|sequence_example]
        reads every record (CRCs checked), parses it and touches every value; prints
        "records SECONDS"
"""
import base64
import gzip
import json
import struct
import sys
import time
import zlib

import crc32c
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _build():
    fd = descriptor_pb2.FileDescriptorProto(name="mlfeed_test/example.proto", package="tensorflow", syntax="proto3")

    def msg(name, *fields, map_entry=False):
        m = fd.message_type.add(name=name)
        if map_entry:
            m.options.map_entry = True
        for num, fname, ftype, label, tname, packed, oneof in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = tname
            if packed:
                f.options.packed = True
            if oneof is not None:
                f.oneof_index = oneof
        return m

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    msg("BytesList", (1, "value", F.TYPE_BYTES, rep, None, False, None))
    msg("FloatList", (1, "value", F.TYPE_FLOAT, rep, None, True, None))
    msg("Int64List", (1, "value", F.TYPE_INT64, rep, None, True, None))
    feat = msg("Feature",
               (1, "bytes_list", F.TYPE_MESSAGE, opt, ".tensorflow.BytesList", False, 0),
               (2, "float_list", F.TYPE_MESSAGE, opt, ".tensorflow.FloatList", False, 0),
               (3, "int64_list", F.TYPE_MESSAGE, opt, ".tensorflow.Int64List", False, 0))
    feat.oneof_decl.add(name="kind")
    feats = msg("Features", (1, "feature", F.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry", False, None))
    e = feats.nested_type.add(name="FeatureEntry")
    e.options.map_entry = True
    e.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    e.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt, type_name=".tensorflow.Feature")
    msg("FeatureList", (1, "feature", F.TYPE_MESSAGE, rep, ".tensorflow.Feature", False, None))
    fls = msg("FeatureLists", (1, "feature_list", F.TYPE_MESSAGE, rep, ".tensorflow.FeatureLists.FeatureListEntry", False, None))
    e = fls.nested_type.add(name="FeatureListEntry")
    e.options.map_entry = True
    e.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    e.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt, type_name=".tensorflow.FeatureList")
    msg("Example", (1, "features", F.TYPE_MESSAGE, opt, ".tensorflow.Features", False, None))
    msg("SequenceExample",
        (1, "context", F.TYPE_MESSAGE, opt, ".tensorflow.Features", False, None),
        (2, "feature_lists", F.TYPE_MESSAGE, opt, ".tensorflow.FeatureLists", False, None))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:
        factory = message_factory.MessageFactory(pool)
        get = factory.GetPrototype
    return (get(pool.FindMessageTypeByName("tensorflow.Example")),
            get(pool.FindMessageTypeByName("tensorflow.SequenceExample")))


Example, SequenceExample = _build()


def _masked(b):
    c = crc32c.crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(data, path="<data>"):
    off, n = 0, len(data)
    while off < n:
        if off + 12 > n:
            raise ValueError("%s: truncated header at %d" % (path, off))
        length, lcrc = struct.unpack_from("<QI", data, off)
        if _masked(data[off:off + 8]) != lcrc:
            raise ValueError("%s: length CRC mismatch at %d" % (path, off))
        end = off + 12 + length
        if end + 4 > n:
            raise ValueError("%s: truncated record at %d" % (path, off))
        rec = data[off + 12:end]
        if _masked(rec) != struct.unpack_from("<I", data, end)[0]:
            raise ValueError("%s: data CRC mismatch at %d" % (path, off))
        yield rec
        off = end + 4


def _feature(f):
    kind = f.WhichOneof("kind")
    if kind is None:
        return {"kind": None, "values": []}
    vals = list(getattr(f, kind).value)
    if kind == "bytes_list":
        vals = [base64.b64encode(v).decode() for v in vals]
    return {"kind": kind, "values": vals}


def as_json(m):
    out = {"features": {}, "feature_lists": {}}
    feats = m.features if isinstance(m, Example) else m.context
    for k, f in feats.feature.items():
        out["features"][k] = _feature(f)
    if not isinstance(m, Example):
        for k, fl in m.feature_lists.feature_list.items():
            out["feature_lists"][k] = [_feature(f) for f in fl.feature]
    return out


def _read(path, comp):
    with open(path, "rb") as f:
        data = f.read()
    if comp == "gzip":
        data = gzip.decompress(data)
    elif comp == "zlib":
        data = zlib.decompress(data)
    return data


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "decode":
        comp = sys.argv[3] if len(sys.argv) > 3 else "none"
        cls = SequenceExample if len(sys.argv) > 4 and sys.argv[4] == "sequence_example" else Example
        for rec in records(_read(path, comp), path):
            m = cls()
            m.ParseFromString(rec)
            sys.stdout.write(json.dumps(as_json(m)) + "\n")
    elif cmd == "bench":
        cls = SequenceExample if len(sys.argv) > 3 and sys.argv[3] == "sequence_example" else Example
        t = time.perf_counter()
        data = _read(path, "none")
        n = 0
        for rec in records(data, path):
            m = cls()
            m.ParseFromString(rec)
            for f in m.features.feature.values():
                kind = f.WhichOneof("kind")
                if kind is not None:
                    len(getattr(f, kind).value)
            n += 1
        print(n, time.perf_counter() - t)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
