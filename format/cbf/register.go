package cbf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

func init() {
	format.Register(format.Format{
		Name:       "cbf",
		Extensions: []string{".cbf", ".bin"},
		Match:      Match,
		ReadParams: ReadParams,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := ParseOptions(o)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		OpenReader: func(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := ParseOptions(o)
			if err != nil {
				return nil, err
			}
			opts.FileName = name
			return NewReader(r, size, opts)
		},
		Streamable: true,
		RawSamples: true,
		Create: func(w io.Writer, schema mlfeed.Schema, o *format.WriteOptions) (mlfeed.Sink, error) {
			if _, err := format.NormalizeParams("cbf", o.Params, nil); err != nil {
				return nil, err
			}
			switch {
			case o.Compat != "" && o.Compat != CompatCTF2Bin:
				return nil, format.UsageErrorf("cbf: unknown compat mode %q (known: %s)", o.Compat, CompatCTF2Bin)
			case o.Compress != "" && o.Compress != "none":
				return nil, format.UsageErrorf("cbf: no compression is defined for CBF (compression %q)", o.Compress)
			case o.ChunkSize < 0:
				return nil, format.UsageErrorf("cbf: chunk size %d: want a positive size in bytes", o.ChunkSize)
			}
			return NewWriter(w, schema, &WriterOptions{ChunkSize: o.ChunkSize, Compat: o.Compat})
		},
		Validate: func(name string, o *format.Options, report func(error) bool) error {
			opts, err := ParseOptions(o)
			if err != nil {
				return err
			}
			return Validate(name, opts, report)
		},
	})
}

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE),
// with CNTK's reader option name as an alias. Besides these, a key input.NAME.alias=STREAM
// exposes the file's stream STREAM as NAME (ReaderOptions.Alias), as CNTK's configuration
// does.
var ReadParams = []format.Param{
	{Name: "keep_in_memory", Doc: "true: keep every decoded chunk, decoding each once (default false)", Aliases: []string{"keepDataInMemory"}},
	{Name: "mmap", Doc: "false reads chunks with ReadAt instead of mapping the file (default true)"},
	{Name: "input.NAME.alias", Doc: "expose the file's stream given as the value under the name NAME"},
}

// ParseOptions turns the registry's reader options into ReaderOptions: the Params of
// ReadParams, and streams declared in o.Inputs, which expose the file's stream Alias (or
// Name) as Name and, when they give a dimension, must match the file's storage and
// dimension. Their element type is not checked: both precisions are read as stored. Unknown
// keys and bad values are errors wrapping format.ErrUsage.
func ParseOptions(o *format.Options) (*ReaderOptions, error) {
	opts := &ReaderOptions{}
	if o == nil {
		return opts, nil
	}
	plain := map[string]string{}
	for k, v := range o.Params {
		if strings.HasPrefix(k, "input.") && strings.HasSuffix(k, ".alias") && len(k) > len("input..alias") {
			name := k[len("input.") : len(k)-len(".alias")]
			if v == "" {
				return nil, format.UsageErrorf("cbf: option %s: empty alias", k)
			}
			if err := addAlias(opts, name, v); err != nil {
				return nil, err
			}
			continue
		}
		plain[k] = v
	}
	params, err := format.NormalizeParams("cbf", plain, ReadParams[:2])
	if err != nil {
		return nil, err
	}
	for k, v := range params {
		b, err := parseBool(v)
		if err != nil {
			return nil, format.UsageErrorf("cbf: option %s=%s: %v", k, v, err)
		}
		switch k {
		case "keep_in_memory":
			opts.KeepDataInMemory = b
		case "mmap":
			opts.NoMmap = !b
		}
	}
	for _, in := range o.Inputs {
		if err := addAlias(opts, in.Name, in.FileName()); err != nil {
			return nil, err
		}
		opts.inputs = append(opts.inputs, in)
	}
	return opts, nil
}

func addAlias(opts *ReaderOptions, name, inFile string) error {
	if opts.Alias == nil {
		opts.Alias = map[string]string{}
	}
	if prev, ok := opts.Alias[name]; ok && prev != inFile {
		return format.UsageErrorf("cbf: stream %q declared as the alias of both %q and %q", name, prev, inFile)
	}
	opts.Alias[name] = inFile
	return nil
}

// parseBool accepts CNTK's boolean spellings: 1, t, true, T, True, TRUE and 0, f, false, F,
// False, FALSE, and the empty string for false.
func parseBool(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	return strconv.ParseBool(s)
}

// Validate checks the named file more strictly than reading does and reports each problem
// found to report, stopping when report returns false. Besides every check reading makes, it
// reports bytes that no structure accounts for (between the prefix and the first chunk,
// after a chunk's data, between the chunk table and the trailer) and sparse indices that do
// not increase within a sample, which CNTK's reader assumes. It returns an error only when it
// cannot check at all (the file cannot be opened, wrong options).
func Validate(name string, opts *ReaderOptions, report func(error) bool) error {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	o.strict = true
	rd, err := Open(name, &o)
	if err != nil {
		var pe *mlfeed.PosError
		if errors.As(err, &pe) {
			report(err)
			return nil
		}
		return err
	}
	defer rd.Close()
	var prev *mlfeed.Chunk
	for i := range rd.Chunks() {
		c, err := rd.ReadChunkReuse(context.Background(), i, prev)
		if err != nil && !report(err) {
			return nil
		}
		if c != nil {
			prev = c
		}
	}
	return nil
}

// checkInputs compares streams declared with format.Options.Inputs with the file's. A
// declaration without a dimension only renames (CNTK's CBF input entries carry just an alias).
func (rd *Reader) checkInputs(inputs []mlfeed.Stream) error {
	for _, in := range inputs {
		k := rd.schema.Index(in.Name)
		st := &rd.schema.Streams[k]
		if in.Dim > 0 && (st.Storage != in.Storage || st.Dim != in.Dim) {
			return fmt.Errorf("%w: declared stream %s: %s stores %q as %s with dimension %d, not %s with %d",
				format.ErrUsage, in.Name, rd.displayName(), in.FileName(), st.Storage, st.Dim, in.Storage, in.Dim)
		}
	}
	return nil
}
