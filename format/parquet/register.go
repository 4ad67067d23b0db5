package parquet

import (
	"os"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

func init() {
	format.Register(format.Format{
		Name:       "parquet",
		Extensions: []string{".parquet"},
		Match:      Match,
		Open:       openFormat,
		Create:     createFormat,
	})
}

// openFormat translates the registry's options: lists=fixed|variable.
func openFormat(name string, o *format.Options) (mlfeed.Source, error) {
	ro := &ReaderOptions{}
	if o != nil {
		if err := format.CheckParams("parquet", o.Params, "lists"); err != nil {
			return nil, err
		}
		switch v := o.Params["lists"]; v {
		case "", "fixed":
		case "variable":
			ro.VariableLists = true
		default:
			return nil, format.UsageErrorf("parquet: option lists=%q: want fixed or variable", v)
		}
	}
	return Open(name, ro)
}

// createFormat translates the write options: compression=zstd|snappy|gzip|none (or the
// common compression setting), sequences=auto|list.
func createFormat(f *os.File, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	wo := &WriterOptions{}
	if o != nil {
		if err := format.CheckParams("parquet", o.Params, "compression", "sequences"); err != nil {
			return nil, err
		}
		wo.Compression = o.Compress
		if v, ok := o.Params["compression"]; ok {
			wo.Compression = v
		}
		switch wo.Compression {
		case "", "zstd", "snappy", "gzip", "none":
		default:
			return nil, format.UsageErrorf("parquet: compression %q: want zstd, snappy, gzip or none", wo.Compression)
		}
		wo.Sequences = o.Params["sequences"]
		if wo.Sequences != "" && wo.Sequences != "auto" && wo.Sequences != "list" {
			return nil, format.UsageErrorf("parquet: option sequences=%q: want auto or list", wo.Sequences)
		}
	}
	return NewWriter(f, schema, wo)
}
