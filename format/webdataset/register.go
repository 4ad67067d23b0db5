package webdataset

import (
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader options (--opt key=value).
var ReadParams = []format.Param{
	{Name: "decode", Doc: "default (streams typed by extension as webdataset's default decoders: cls/id int64, txt/json text, npy arrays, else bytes) or none (every stream bytes)"},
	{Name: "compression", Doc: "none or gzip; default: from the data"},
	{Name: "chunk_size", Doc: "bytes of members per chunk (default 4194304)"},
	{Name: "max_memory", Doc: "bytes of a gzip shard's decompressed data kept in memory; beyond, a temporary file (default 1073741824)"},
	{Name: "max_member", Doc: "largest member accepted, in bytes (default 1073741824)"},
	{Name: "cache_index", Doc: "true: keep the member-offset index in NAME.mlfeed-index beside the input (default false)"},
}

// WriteParams are the writer options (--write-opt key=value).
var WriteParams = []format.Param{
	{Name: "compression", Doc: "none or gzip; default: gzip for a name ending .gz or .tgz, else none (also --compress)"},
	{Name: "level", Doc: "gzip level 1-9 (default 6)"},
}

func init() {
	format.Register(format.Format{
		Name:        "webdataset",
		Extensions:  []string{".tar", ".tar.gz", ".tgz"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Streamable:  true,
		KeepsShape:  true,
		RawSamples:  true,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := parseOptions(o)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		OpenReader: func(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := parseOptions(o)
			if err != nil {
				return nil, err
			}
			opts.FileName = name
			return NewReader(r, size, opts)
		},
		Create: func(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
			params, err := format.NormalizeParams("webdataset", o.Params, WriteParams)
			if err != nil {
				return nil, err
			}
			if o.Compat != "" {
				return nil, format.UsageErrorf("webdataset: no compatibility modes (compat %q)", o.Compat)
			}
			wo := &WriterOptions{Compression: strings.ToLower(params["compression"])}
			if wo.Compression == "" {
				wo.Compression = o.Compress
			}
			if wo.Compression == "" {
				wo.Compression = CompressionNone
				if n := strings.ToLower(o.Name); strings.HasSuffix(n, ".gz") || strings.HasSuffix(n, ".tgz") {
					wo.Compression = CompressionGzip
				}
			}
			if v, ok := params["level"]; ok {
				if wo.Level, err = strconv.Atoi(v); err != nil || wo.Level < 1 || wo.Level > 9 {
					return nil, format.UsageErrorf("webdataset: option level=%s: want 1..9", v)
				}
			}
			return NewWriter(w, schema, wo)
		},
	})
}

// parseOptions turns the registry's options into ReaderOptions.
func parseOptions(o *format.Options) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("webdataset", o.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	ro := &ReaderOptions{}
	for k, v := range params {
		var err error
		switch k {
		case "decode":
			switch strings.ToLower(v) {
			case "default", "":
				ro.Decode = DecodeDefault
			case DecodeNone:
				ro.Decode = DecodeNone
			default:
				return nil, format.UsageErrorf("webdataset: option decode=%s: want default or none", v)
			}
		case "compression":
			switch ro.Compression = strings.ToLower(v); ro.Compression {
			case "auto":
				ro.Compression = CompressionAuto
			case CompressionNone, CompressionGzip:
			default:
				return nil, format.UsageErrorf("webdataset: option compression=%s: want none or gzip", v)
			}
		case "chunk_size":
			ro.ChunkSize, err = strconv.ParseInt(v, 10, 64)
		case "max_memory":
			ro.MaxMemory, err = strconv.ParseInt(v, 10, 64)
		case "max_member":
			ro.MaxMember, err = strconv.ParseInt(v, 10, 64)
		case "cache_index":
			ro.CacheIndex, err = strconv.ParseBool(v)
		}
		if err != nil {
			return nil, format.UsageErrorf("webdataset: option %s=%s: %v", k, v, err)
		}
	}
	return ro, nil
}
