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
		Name:       "hdf5",
		KeepsShape: true,
		Extensions: []string{".h5", ".hdf5"},
		Match:      Match,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			var params map[string]string
			if o != nil {
				params = o.Params
			}
			if err := format.CheckParams("hdf5", params, "datasets", "chunk_rows"); err != nil {
				return nil, err
			}
			opts := &ReaderOptions{}
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
			if err := format.CheckParams("hdf5", w.Params, "level", "shuffle", "chunk_rows"); err != nil {
				return nil, err
			}
			f, err := format.SeekableFile("hdf5", out)
			if err != nil {
				return nil, err
			}
			opts := &WriterOptions{Rows: w.Sequences}
			if v, ok := w.Params["level"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > 9 {
					return nil, format.UsageErrorf("hdf5: level=%s: want 0..9", v)
				}
				opts.Level = n
			}
			if v, ok := w.Params["shuffle"]; ok {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, format.UsageErrorf("hdf5: shuffle=%s: want true or false", v)
				}
				opts.Shuffle = b
			}
			if v, ok := w.Params["chunk_rows"]; ok {
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
