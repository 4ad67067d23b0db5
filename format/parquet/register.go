package parquet

import (
	"io"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "lists", Doc: "fixed (default): a list column without mlfeed metadata is a dense stream of the first row's length; variable: variable-size dense samples"},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "compression", Doc: "zstd (default), snappy, gzip or none"},
	{Name: "sequences", Doc: "auto (default: each column's layout from the first chunk) or list (every column a list of samples per row)"},
}

func init() {
	format.Register(format.Format{
		Name:        "parquet",
		KeepsShape:  true,
		Extensions:  []string{".parquet"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open:        openFormat,
		OpenReader:  openReader,
		Streamable:  true,
		Create:      createFormat,
	})
}

func openFormat(name string, o *format.Options) (mlfeed.Source, error) {
	ro, err := readerOptions(o)
	if err != nil {
		return nil, err
	}
	return Open(name, ro)
}

// openReader reads the ranges it needs of r (an object in object storage).
func openReader(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
	ro, err := readerOptions(o)
	if err != nil {
		return nil, err
	}
	return NewReader(r, size, name, ro)
}

func readerOptions(o *format.Options) (*ReaderOptions, error) {
	ro := &ReaderOptions{}
	if o != nil {
		params, err := format.NormalizeParams("parquet", o.Params, ReadParams)
		if err != nil {
			return nil, err
		}
		switch v := params["lists"]; v {
		case "", "fixed":
		case "variable":
			ro.VariableLists = true
		default:
			return nil, format.UsageErrorf("parquet: option lists=%q: want fixed or variable", v)
		}
	}
	return ro, nil
}

func createFormat(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		params, err := format.NormalizeParams("parquet", o.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		if o.Compat != "" {
			return nil, format.UsageErrorf("parquet: no compatibility modes (compat %q)", o.Compat)
		}
		wo.Compression = o.Compress
		if v, ok := params["compression"]; ok {
			wo.Compression = v
		}
		switch wo.Compression {
		case "", "zstd", "snappy", "gzip", "none":
		default:
			return nil, format.UsageErrorf("parquet: compression %q: want zstd, snappy, gzip or none", wo.Compression)
		}
		wo.Sequences = params["sequences"]
		if wo.Sequences != "" && wo.Sequences != "auto" && wo.Sequences != "list" {
			return nil, format.UsageErrorf("parquet: option sequences=%q: want auto or list", wo.Sequences)
		}
	}
	return NewWriter(w, schema, wo)
}
