package idx

import (
	"io"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

func init() {
	format.Register(format.Format{
		Name:       "idx",
		Extensions: []string{".idx", ".idx.gz", "-ubyte", "-ubyte.gz"},
		Match:      Match,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			if err := format.CheckParams("idx", o.Params, "name", "chunkSize", "maxMemory", "mmap"); err != nil {
				return nil, err
			}
			opts, err := parseOptions(o.Params)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		OpenReader: func(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
			if err := format.CheckParams("idx", o.Params, "name", "chunkSize", "maxMemory", "mmap"); err != nil {
				return nil, err
			}
			opts, err := parseOptions(o.Params)
			if err != nil {
				return nil, err
			}
			var magic [2]byte
			if n, _ := r.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{0x1f, 0x8b} {
				return NewGzipReader(io.NewSectionReader(r, 0, size), size, name, opts, func() (io.ReadCloser, error) {
					return io.NopCloser(io.NewSectionReader(r, 0, size)), nil
				})
			}
			return NewReader(r, size, name, opts)
		},
		Streamable: true,
		Create: func(f io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			if err := format.CheckParams("idx", w.Params, "level"); err != nil {
				return nil, err
			}
			if w.Compat != "" {
				return nil, format.UsageErrorf("idx: no compatibility modes (compat %q)", w.Compat)
			}
			level := 0
			if v, ok := w.Params["level"]; ok {
				var err error
				if level, err = strconv.Atoi(v); err != nil || level < 1 || level > 9 {
					return nil, format.UsageErrorf("idx: --write-opt level=%s: want 1..9", v)
				}
			}
			return newFileSink(f, schema, w.Name, w.Compress, level, w.Sequences)
		},
	})
}
