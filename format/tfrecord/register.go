package tfrecord

import (
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader options (--opt key=value).
var ReadParams = []format.Param{
	{Name: "records", Doc: "what records hold: example, sequence_example or raw (one bytes stream \"record\"); default: example, or sequence_example when a record has feature_lists"},
	{Name: "compression", Doc: "none, gzip or zlib (TensorFlow's compression_type); default: from the data"},
	{Name: "chunk_size", Doc: "bytes of records per chunk (default 4194304)"},
	{Name: "max_memory", Doc: "bytes of decompressed data kept in memory; beyond, a temporary file (default 1073741824)"},
	{Name: "max_record", Doc: "largest record length accepted, in bytes (default 1073741824)"},
	{Name: "cache_index", Doc: "true: keep the record-offset index in NAME.mlfeed-index beside the input (default false)"},
}

// WriteParams are the writer options (--write-opt key=value).
var WriteParams = []format.Param{
	{Name: "records", Doc: "example (default) or sequence_example (every stream a feature list)"},
	{Name: "compression", Doc: "none, gzip or zlib; default: gzip for a name ending .gz, else none (also --compress)"},
	{Name: "level", Doc: "gzip/zlib level 1-9 (default 6)"},
}

func init() {
	format.Register(format.Format{
		Name:        "tfrecord",
		Extensions:  []string{".tfrecord", ".tfrecords", ".tfrecord.gz", ".tfrecords.gz", ".tfrecord.zz"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Streamable:  true,
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
			params, err := format.NormalizeParams("tfrecord", o.Params, WriteParams)
			if err != nil {
				return nil, err
			}
			if o.Compat != "" {
				return nil, format.UsageErrorf("tfrecord: no compatibility modes (compat %q)", o.Compat)
			}
			wo := &WriterOptions{Records: params["records"], Compression: params["compression"]}
			if wo.Compression == "" {
				wo.Compression = o.Compress
			}
			if wo.Compression == "" {
				wo.Compression = CompressionNone
				if strings.HasSuffix(strings.ToLower(o.Name), ".gz") {
					wo.Compression = CompressionGzip
				} else if strings.HasSuffix(strings.ToLower(o.Name), ".zz") {
					wo.Compression = CompressionZlib
				}
			}
			if v, ok := params["level"]; ok {
				if wo.Level, err = strconv.Atoi(v); err != nil || wo.Level < 1 || wo.Level > 9 {
					return nil, format.UsageErrorf("tfrecord: option level=%s: want 1..9", v)
				}
			}
			return NewWriter(w, schema, wo)
		},
	})
}

// parseOptions turns the registry's options into ReaderOptions.
func parseOptions(o *format.Options) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("tfrecord", o.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	ro := &ReaderOptions{Log: o.Log}
	for k, v := range params {
		var err error
		switch k {
		case "records":
			ro.Records = v
			if v == "auto" {
				ro.Records = RecordsAuto
			}
			err = checkRecords(ro.Records)
		case "compression":
			ro.Compression = strings.ToLower(v)
			if ro.Compression == "auto" {
				ro.Compression = CompressionAuto
			}
		case "chunk_size":
			ro.ChunkSize, err = strconv.ParseInt(v, 10, 64)
		case "max_memory":
			ro.MaxMemory, err = strconv.ParseInt(v, 10, 64)
		case "max_record":
			ro.MaxRecord, err = strconv.ParseInt(v, 10, 64)
		case "cache_index":
			ro.CacheIndex, err = strconv.ParseBool(v)
		}
		if err != nil {
			return nil, format.UsageErrorf("tfrecord: option %s=%s: %v", k, v, err)
		}
	}
	return ro, nil
}
