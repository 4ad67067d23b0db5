package arrow

import (
	"io"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "lists", Doc: "fixed (default): a List column without mlfeed metadata is a dense stream of the first row's length; variable: variable-size dense samples"},
	{Name: "mmap", Doc: "false reads the file with ReadAt instead of mapping it (default true)"},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "format", Doc: "file or stream (default: stream for a name ending in .arrows, else file)"},
	{Name: "sequences", Doc: "auto (default: each column's layout from the first chunk) or list (every column a list of samples per row)"},
	{Name: "compression", Doc: "none (default), lz4 or zstd: record batch body compression"},
}

func init() {
	format.Register(format.Format{
		Name:        "arrow",
		KeepsShape:  true,
		Extensions:  []string{".arrow", ".feather", ".arrows"},
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
		params, err := format.NormalizeParams("arrow", o.Params, ReadParams)
		if err != nil {
			return nil, err
		}
		switch v := params["lists"]; v {
		case "", "fixed":
		case "variable":
			ro.VariableLists = true
		default:
			return nil, format.UsageErrorf("arrow: option lists=%q: want fixed or variable", v)
		}
		switch v := params["mmap"]; v {
		case "", "true":
		case "false":
			ro.NoMmap = true
		default:
			return nil, format.UsageErrorf("arrow: option mmap=%q: want true or false", v)
		}
	}
	return ro, nil
}

func createFormat(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		params, err := format.NormalizeParams("arrow", o.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		if o.Compat != "" {
			return nil, format.UsageErrorf("arrow: no compatibility modes (compat %q)", o.Compat)
		}
		wo.Stream = strings.HasSuffix(strings.ToLower(o.Name), ".arrows")
		switch v := params["format"]; v {
		case "":
		case "file":
			wo.Stream = false
		case "stream":
			wo.Stream = true
		default:
			return nil, format.UsageErrorf("arrow: option format=%q: want file or stream", v)
		}
		wo.Sequences = params["sequences"]
		if wo.Sequences != "" && wo.Sequences != "auto" && wo.Sequences != "list" {
			return nil, format.UsageErrorf("arrow: option sequences=%q: want auto or list", wo.Sequences)
		}
		wo.Compression = o.Compress
		if v, ok := params["compression"]; ok {
			wo.Compression = v
		}
		switch wo.Compression {
		case "", "none", "lz4", "zstd":
		default:
			return nil, format.UsageErrorf("arrow: compression %q: want none, lz4 or zstd", wo.Compression)
		}
	}
	return NewWriter(w, schema, wo)
}
