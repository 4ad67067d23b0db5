package arrow

import (
	"os"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

func init() {
	format.Register(format.Format{
		Name:       "arrow",
		Extensions: []string{".arrow", ".feather", ".arrows"},
		Match:      Match,
		Open:       openFormat,
		Create:     createFormat,
	})
}

// openFormat translates the registry's options: lists=fixed|variable, mmap=true|false.
func openFormat(name string, o *format.Options) (mlfeed.Source, error) {
	ro := &ReaderOptions{}
	if o != nil {
		if err := format.CheckParams("arrow", o.Params, "lists", "mmap"); err != nil {
			return nil, err
		}
		switch v := o.Params["lists"]; v {
		case "", "fixed":
		case "variable":
			ro.VariableLists = true
		default:
			return nil, format.UsageErrorf("arrow: option lists=%q: want fixed or variable", v)
		}
		switch v := o.Params["mmap"]; v {
		case "", "true":
		case "false":
			ro.NoMmap = true
		default:
			return nil, format.UsageErrorf("arrow: option mmap=%q: want true or false", v)
		}
	}
	return Open(name, ro)
}

// createFormat translates the write options: format=file|stream (default: stream for a name
// ending in .arrows), sequences=auto|list, compression=none|lz4|zstd.
func createFormat(f *os.File, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		if err := format.CheckParams("arrow", o.Params, "format", "sequences", "compression"); err != nil {
			return nil, err
		}
		wo.Stream = strings.HasSuffix(strings.ToLower(o.Name), ".arrows")
		switch v := o.Params["format"]; v {
		case "":
		case "file":
			wo.Stream = false
		case "stream":
			wo.Stream = true
		default:
			return nil, format.UsageErrorf("arrow: option format=%q: want file or stream", v)
		}
		wo.Sequences = o.Params["sequences"]
		if wo.Sequences != "" && wo.Sequences != "auto" && wo.Sequences != "list" {
			return nil, format.UsageErrorf("arrow: option sequences=%q: want auto or list", wo.Sequences)
		}
		wo.Compression = o.Compress
		if v, ok := o.Params["compression"]; ok {
			wo.Compression = v
		}
		switch wo.Compression {
		case "", "none", "lz4", "zstd":
		default:
			return nil, format.UsageErrorf("arrow: compression %q: want none, lz4 or zstd", wo.Compression)
		}
	}
	return NewWriter(f, schema, wo)
}
