package mtx

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/binsparse"
)

func init() {
	format.Register(format.Format{
		Name:        "mtx",
		Extensions:  []string{".mtx", ".mtx.gz"},
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Match: func(head []byte) bool {
			return len(head) >= len(banner) && strings.EqualFold(string(head[:len(banner)]), banner)
		},
		Open:       open,
		Create:     create,
		Streamable: true,
	})
}

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "structure", Doc: "expand (default: both triangles of a symmetric, skew-symmetric or hermitian matrix) or keep (the stored triangle only)"},
	{Name: "name", Doc: "the stream's name (default: \"values\")"},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "format", Doc: "coordinate or array (default: coordinate for sparse data, array for dense)"},
}

// open reads the whole file and serves it through binsparse.Source, with ReadParams.
func open(name string, opts *format.Options) (mlfeed.Source, error) {
	so := binsparse.SourceOptions{}
	ctx := context.Background()
	if opts != nil && opts.Context != nil {
		ctx = opts.Context
	}
	if opts != nil {
		params, err := format.NormalizeParams("mtx", opts.Params, ReadParams)
		if err != nil {
			return nil, err
		}
		so.Log, so.Name = opts.Log, params["name"]
		switch v := params["structure"]; v {
		case "", "expand":
		case "keep":
			so.KeepStructure = true
		default:
			return nil, fmt.Errorf("%w: mtx option structure=%q: want expand or keep", format.ErrUsage, v)
		}
	}
	m, err := ReadFileContext(ctx, name)
	if err != nil {
		return nil, err
	}
	return binsparse.NewSource(m, &so)
}

// sink gathers the one stream's samples as matrix rows and writes the file on Close.
type sink struct {
	f      io.Writer
	gzip   bool
	schema mlfeed.Schema
	c      *binsparse.Collector
	opts   WriterOptions
}

// create returns a sink; writer options (--write-opt): format=coordinate|array.
func create(f io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
	var wo WriterOptions
	gz := false
	if o != nil {
		gz = strings.HasSuffix(strings.ToLower(o.Name), ".gz")
		switch o.Compress {
		case "":
		case "gzip":
			gz = true
		case "none":
			gz = false
		default:
			return nil, fmt.Errorf("%w: mtx compression %q: want gzip or none", format.ErrUsage, o.Compress)
		}
		params, err := format.NormalizeParams("mtx", o.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		if o.Compat != "" {
			return nil, fmt.Errorf("%w: mtx has no compatibility modes (compat %q)", format.ErrUsage, o.Compat)
		}
		wo.Format = params["format"]
		if wo.Format != "" && wo.Format != "coordinate" && wo.Format != "array" {
			return nil, fmt.Errorf("%w: mtx option format=%q: want coordinate or array", format.ErrUsage, wo.Format)
		}
	}
	if len(schema.Streams) != 1 {
		return nil, fmt.Errorf("%w: a Matrix Market file holds one matrix; the data set has %d streams", ErrUnsupported, len(schema.Streams))
	}
	c, err := binsparse.NewCollector(schema.Streams[0])
	if err != nil {
		return nil, err
	}
	return &sink{f: f, gzip: gz, schema: schema, c: c, opts: wo}, nil
}

func (s *sink) WriteChunk(c *mlfeed.Chunk) error {
	if err := c.Validate(&s.schema); err != nil {
		return err
	}
	s.c.Add(&c.Streams[0])
	return nil
}

func (s *sink) Close() error {
	m, err := s.c.Matrix()
	if err != nil {
		return err
	}
	m.Descriptor.User = nil
	var out io.Writer = s.f
	var z *gzip.Writer
	if s.gzip {
		z = gzip.NewWriter(s.f)
		out = z
	}
	w := bufio.NewWriterSize(out, 1<<20)
	if err := Write(w, m, &s.opts); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if z != nil {
		return z.Close()
	}
	return nil
}
