package mds

import (
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader options (--opt key=value).
var ReadParams = []format.Param{
	{Name: "chunk_size", Doc: "bytes of samples per chunk, whole samples of one shard (default 4194304)"},
	{Name: "max_memory", Doc: "bytes of decompressed shards held in memory; a compressed shard that decompresses to more is an error (default 1073741824)"},
	{Name: "pkl", Doc: "refuse (default): pkl columns are an error; bytes: read the pickled payload as bytes, never unpickled"},
	{Name: "verify_hashes", Doc: "true: check every shard file against a digest index.json records for it when first read (default false)"},
}

// WriteParams are the writer options (--write-opt key=value).
var WriteParams = []format.Param{
	{Name: "size_limit", Doc: "most bytes of a shard before compression, or none for one shard (default 67108864, MDSWriter's)"},
	{Name: "compression", Doc: "none (default), zstd, gz or snappy, levelled as zstd:7 (also --compress gzip)"},
	{Name: "hashes", Doc: "hash algorithms recorded for each file, comma-separated and sorted: md5, sha1, sha224, sha256, sha384, sha512, sha3_224 ... sha3_512, xxh64"},
	{Name: "encodings", Doc: "COLUMN:ENCODING,... where a type allows several: json or str_decimal (text), str_int (int64), str_float (float64), float16 or ndarray:float16:SHAPE (float32), jpeg, png, pil (bytes), list[jpeg], list[png], list[pil], jpeg_array (sequences of bytes)"},
}

func init() {
	format.Register(format.Format{
		Name:        "mds",
		MatchDir:    IsDataset,
		KeepsShape:  true,
		RawSamples:  true,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := parseOptions(o)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		CreateDir: func(dir string, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
			wo, err := parseWriteOptions(o)
			if err != nil {
				return nil, err
			}
			return NewWriter(dir, schema, wo)
		},
	})
}

// parseOptions turns the registry's options into ReaderOptions.
func parseOptions(o *format.Options) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("mds", o.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	ro := &ReaderOptions{}
	for k, v := range params {
		var err error
		switch k {
		case "chunk_size":
			ro.ChunkSize, err = strconv.ParseInt(v, 10, 64)
		case "max_memory":
			ro.MaxMemory, err = strconv.ParseInt(v, 10, 64)
		case "verify_hashes":
			ro.VerifyHashes, err = strconv.ParseBool(v)
		case "pkl":
			switch v {
			case "refuse":
			case "bytes":
				ro.PickleAsBytes = true
			default:
				return nil, format.UsageErrorf("mds: option pkl=%s: want refuse or bytes", v)
			}
		}
		if err != nil {
			return nil, format.UsageErrorf("mds: option %s=%s: %v", k, v, err)
		}
	}
	return ro, nil
}

// parseWriteOptions turns the registry's write options into WriterOptions.
func parseWriteOptions(o *format.WriteOptions) (*WriterOptions, error) {
	params, err := format.NormalizeParams("mds", o.Params, WriteParams)
	if err != nil {
		return nil, err
	}
	if o.Compat != "" {
		return nil, format.UsageErrorf("mds: no compatibility modes (compat %q)", o.Compat)
	}
	wo := &WriterOptions{Compression: params["compression"]}
	if wo.Compression == "" {
		switch o.Compress {
		case "", "none":
		case "gzip":
			wo.Compression = "gz"
		default:
			return nil, format.UsageErrorf("mds: --compress %s: MDS compresses with zstd, gz or snappy (--write-opt compression=zstd)", o.Compress)
		}
	}
	if v, ok := params["size_limit"]; ok {
		if v == "none" || v == "0" {
			wo.SizeLimit = -1
		} else if wo.SizeLimit, err = strconv.ParseInt(v, 10, 64); err != nil || wo.SizeLimit <= 0 {
			return nil, format.UsageErrorf("mds: option size_limit=%s: want a positive number of bytes or none", v)
		}
	}
	if v := params["hashes"]; v != "" {
		wo.Hashes = strings.Split(v, ",")
	}
	if v := params["encodings"]; v != "" {
		wo.Encodings = map[string]string{}
		// An ndarray's shape has commas of its own: a part without a colon continues the one before.
		var pairs []string
		for _, p := range strings.Split(v, ",") {
			if len(pairs) > 0 && !strings.Contains(p, ":") {
				pairs[len(pairs)-1] += "," + p
				continue
			}
			pairs = append(pairs, p)
		}
		for _, p := range pairs {
			col, enc, ok := strings.Cut(p, ":")
			if !ok || col == "" || enc == "" {
				return nil, format.UsageErrorf("mds: option encodings: %q is not COLUMN:ENCODING", p)
			}
			wo.Encodings[col] = enc
		}
	}
	return wo, nil
}
