package idx

import (
	"io"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/sched"
)

func init() {
	format.Register(format.Format{
		Name:        "idx",
		KeepsShape:  true,
		Extensions:  []string{".idx", ".idx.gz", "-ubyte", "-ubyte.gz"},
		Match:       Match,
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := registryOptions(o)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		OpenReader: func(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := registryOptions(o)
			if err != nil {
				return nil, err
			}
			opts.FileName = name
			var magic [2]byte
			if n, _ := r.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{0x1f, 0x8b} {
				return NewGzipReader(io.NewSectionReader(r, 0, size), size, opts, func() (io.ReadCloser, error) {
					return io.NopCloser(io.NewSectionReader(r, 0, size)), nil
				})
			}
			return NewReader(r, size, opts)
		},
		Streamable: true,
		RawSamples: true,
		NeedsCount: true,
		Create: func(f io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			params, err := format.NormalizeParams("idx", w.Params, WriteParams)
			if err != nil {
				return nil, err
			}
			if w.Compat != "" {
				return nil, format.UsageErrorf("idx: no compatibility modes (compat %q)", w.Compat)
			}
			level := 0
			if v, ok := params["level"]; ok {
				var err error
				if level, err = strconv.Atoi(v); err != nil || level < 1 || level > 9 {
					return nil, format.UsageErrorf("idx: option level=%s: want 1..9", v)
				}
			}
			return newFileSink(f, schema, w.Name, w.Compress, level, w.Sequences)
		},
	})
}

// registryOptions reads the format options and, unless max_memory is set, holds no more
// decompressed payload in memory than a quarter of the memory budget of the scheduler in
// o.Context (--memory), nor DefaultMaxMemory.
func registryOptions(o *format.Options) (*ReaderOptions, error) {
	opts, err := parseOptions(o.Params)
	if err != nil || opts.MaxMemory != 0 || o.Context == nil {
		return opts, err
	}
	if s := sched.FromContext(o.Context); s != nil {
		opts.MaxMemory = max(min(DefaultMaxMemory, s.Memory()/4), 1)
	}
	return opts, nil
}
