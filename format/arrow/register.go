package arrow

import (
	"io"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "lists", Doc: "fixed (default): a List column without mlfeed metadata is a dense stream of the first row's length (variable-size if that list is empty); variable: variable-size dense samples"},
	{Name: "mmap", Doc: "false reads the file with ReadAt instead of mapping it (default true)"},
	arrowmap.ColumnsParam,
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "format", Doc: "file or stream (default: stream for a name ending in .arrows, else file)"},
	{Name: "sequences", Doc: "auto (default: each column's layout from the first chunk) or list (every column a list of samples per row)"},
	{Name: "compression", Doc: "none (default), lz4 or zstd: record batch body compression"},
	{Name: "time_unit", Doc: "s, ms, us or ns: datetime streams as timestamps of that unit, which other tools read as timestamps (a value finer than the unit is an error); default: mlfeed's Int64 ticks of 100 ns, which hold every datetime"},
}

func init() {
	open, openReader := arrowmap.Openers(readerOptions, Open, NewReader)
	format.Register(format.Format{
		Name:        "arrow",
		KeepsShape:  true,
		Extensions:  []string{".arrow", ".feather", ".arrows"},
		Match:       Match,
		MatchFile:   MatchFile,
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
	params, err := format.NormalizeParams("arrow", o.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	if ro.VariableLists, err = arrowmap.ParseLists("arrow", params); err != nil {
		return nil, err
	}
	if ro.Columns, err = arrowmap.ParseColumns("arrow", params); err != nil {
		return nil, err
	}
	mmap, err := arrowmap.ParseBool("arrow", params, "mmap", true)
	ro.NoMmap = !mmap
	return ro, err
}

func createFormat(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		params, err := format.NormalizeParams("arrow", o.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		if err := arrowmap.CheckCompat("arrow", o); err != nil {
			return nil, err
		}
		wo.Stream = strings.HasSuffix(strings.ToLower(o.Name), ".arrows")
		switch v, err := arrowmap.Choice("arrow", params, "format", "file", "stream"); {
		case err != nil:
			return nil, err
		case v != "":
			wo.Stream = v == "stream"
		}
		if wo.Sequences, err = arrowmap.ParseSequences("arrow", params); err != nil {
			return nil, err
		}
		if wo.Compression, err = arrowmap.ParseCompression("arrow", o, params, "none", "lz4", "zstd"); err != nil {
			return nil, err
		}
		if wo.TimeUnit, err = arrowmap.ParseTimeUnit("arrow", params, "s", "ms", "us", "ns"); err != nil {
			return nil, err
		}
	}
	return NewWriter(w, schema, wo)
}
