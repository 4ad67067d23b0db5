package hdf5

import (
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

func init() {
	format.Register(format.Format{
		Name:        "hdf5",
		KeepsShape:  true,
		Extensions:  []string{".h5", ".hdf5"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			var params map[string]string
			opts := &ReaderOptions{}
			if o != nil {
				params, opts.Log, opts.Context = o.Params, o.Log, o.Context
			}
			params, err := format.NormalizeParams("hdf5", params, ReadParams)
			if err != nil {
				return nil, err
			}
			if v := params["datasets"]; v != "" {
				opts.Datasets = strings.Split(v, ",")
			}
			if v, ok := params["chunk_rows"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return nil, format.UsageErrorf("hdf5: chunk_rows=%s: want a positive integer", v)
				}
				opts.ChunkRows = n
			}
			return Open(name, opts)
		},
		Create: func(out io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			if w == nil {
				w = &format.WriteOptions{}
			}
			params, err := format.NormalizeParams("hdf5", w.Params, WriteParams)
			if err != nil {
				return nil, err
			}
			f, err := format.SeekableFile("hdf5", out)
			if err != nil {
				return nil, err
			}
			opts := &WriterOptions{Rows: w.Sequences, Context: w.Context}
			if v, ok := params["level"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 9 {
					return nil, format.UsageErrorf("hdf5: level=%s: want 0..9", v)
				}
				opts.Level = n
			}
			if v, ok := params["shuffle"]; ok {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, format.UsageErrorf("hdf5: shuffle=%s: want true or false", v)
				}
				opts.Shuffle = b
			}
			if v, ok := params["chunk_rows"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return nil, format.UsageErrorf("hdf5: chunk_rows=%s: want a positive integer", v)
				}
				opts.ChunkRows = n
			}
			return NewWriter(f, schema, opts)
		},
	})
}

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "datasets", Doc: "PATH,PATH,...: the datasets to read, in stream order (default: every dataset of numbers or strings)", Selects: true},
	{Name: "chunk_rows", Doc: "rows per chunk, an integer > 0 (default: about 4 MiB of rows, whole HDF5 chunks)"},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "level", Doc: "deflate level 0..9 (default 0: chunks stored uncompressed)"},
	{Name: "shuffle", Doc: "true: the shuffle filter before deflate, with level > 0 (default false)"},
	{Name: "chunk_rows", Doc: "rows per HDF5 chunk, an integer > 0 (default: about 1 MiB of rows)"},
}
