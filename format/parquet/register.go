package parquet

import (
	"io"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "lists", Doc: "fixed (default): a list column without mlfeed metadata is a dense stream of the first row's length (variable-size if that list is empty); variable: variable-size dense samples"},
	arrowmap.ColumnsParam,
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "compression", Doc: "zstd (default), snappy, gzip or none"},
	{Name: "sequences", Doc: "auto (default: each column's layout from the first chunk) or list (every column a list of samples per row)"},
	{Name: "time_unit", Doc: "ms, us or ns: datetime streams as TIMESTAMP columns of that unit, which other tools read as timestamps (a value finer than the unit is an error); default: mlfeed's INT64 ticks of 100 ns, which hold every datetime"},
}

func init() {
	open, openReader := arrowmap.Openers(readerOptions, Open, NewReader)
	format.Register(format.Format{
		Name:        "parquet",
		KeepsShape:  true,
		Extensions:  []string{".parquet"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open:        open,
		OpenReader:  openReader,
		Streamable:  true,
		Create:      createFormat,
	})
}

func readerOptions(o *format.Options) (*ReaderOptions, error) {
	ro := &ReaderOptions{}
	if o == nil {
		return ro, nil
	}
	ro.Memory = arrowmap.Budget(o.Context)
	params, err := format.NormalizeParams("parquet", o.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	if ro.VariableLists, err = arrowmap.ParseLists("parquet", params); err != nil {
		return nil, err
	}
	ro.Columns, err = arrowmap.ParseColumns("parquet", params)
	return ro, err
}

func createFormat(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		params, err := format.NormalizeParams("parquet", o.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		if err := arrowmap.CheckCompat("parquet", o); err != nil {
			return nil, err
		}
		if wo.Compression, err = arrowmap.ParseCompression("parquet", o, params, "zstd", "snappy", "gzip", "none"); err != nil {
			return nil, err
		}
		if wo.Sequences, err = arrowmap.ParseSequences("parquet", params); err != nil {
			return nil, err
		}
		if wo.TimeUnit, err = arrowmap.ParseTimeUnit("parquet", params, "ms", "us", "ns"); err != nil {
			return nil, err
		}
	}
	return NewWriter(w, schema, wo)
}
