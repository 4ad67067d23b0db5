package npy

import (
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// ReadParams are the reader options (--opt key=value) of .npy files and .npz archives.
var ReadParams = []format.Param{
	{Name: "name", Doc: "the stream's name for a .npy file (default: labels for rank 0 or 1, features above; an .npz's arrays are named by their members)"},
	{Name: "chunk_size", Doc: "bytes of data per chunk, over all arrays, whole records (default 4194304)"},
	{Name: "mmap", Doc: "false reads with ReadAt instead of mapping the file (default true)"},
	{Name: "arrays", Doc: "NAME,NAME,...: the arrays of an .npz to read, in stream order (default: every array); the others are not read (mnist.npz: arrays=x_train,y_train)", Selects: true},
}

func init() {
	open := func(name string, o *format.Options) (mlfeed.Source, error) {
		opts, err := readerOptions(o.Params)
		if err != nil {
			return nil, err
		}
		if o.Context != nil {
			if s := sched.FromContext(o.Context); s != nil {
				opts.Memory = s.Memory()
			}
		}
		return Open(name, opts)
	}
	format.Register(format.Format{
		Name:       "npy",
		KeepsShape: true,
		Extensions: []string{".npy"},
		ReadParams: ReadParams,
		Match:      Match,
		Open:       open,
		Streamable: true,
		Create: func(out io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			if _, err := format.NormalizeParams("npy", w.Params, nil); err != nil {
				return nil, err
			}
			return NewWriter(out, schema, &WriterOptions{Records: w.Sequences})
		},
	})
	format.Register(format.Format{
		Name:       "npz",
		KeepsShape: true,
		Extensions: []string{".npz"},
		ReadParams: ReadParams,
		Match:      MatchNPZ,
		Open:       open,
		Streamable: true,
		Create: func(out io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			if _, err := format.NormalizeParams("npz", w.Params, nil); err != nil {
				return nil, err
			}
			opts := &WriterOptions{Archive: true}
			switch w.Compress {
			case "", "none":
			case "deflate":
				opts.Compress = true
			default:
				return nil, format.UsageErrorf("npz: compression %q (want deflate or none)", w.Compress)
			}
			return NewWriter(out, schema, opts)
		},
	})
}

// readerOptions reads the format-specific parameters: name, chunk_size, mmap.
func readerOptions(params map[string]string) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("npy", params, ReadParams)
	if err != nil {
		return nil, err
	}
	o := &ReaderOptions{Name: params["name"]}
	if v, ok := params["chunk_size"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, format.UsageErrorf("npy: chunk_size=%s: want a positive number of bytes", v)
		}
		o.ChunkSize = n
	}
	if v, ok := params["arrays"]; ok {
		o.Arrays = strings.Split(v, ",")
		seen := map[string]bool{}
		for _, a := range o.Arrays {
			if a == "" || seen[a] {
				return nil, format.UsageErrorf("npy: arrays=%q: each array named once, none empty (NAME,NAME,...)", v)
			}
			seen[a] = true
		}
	}
	if v, ok := params["mmap"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, format.UsageErrorf("npy: mmap=%s: want true or false", v)
		}
		o.NoMmap = !b
	}
	return o, nil
}
