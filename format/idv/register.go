package idv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/sched"
)

func init() {
	format.Register(format.Format{
		Name:        "idv",
		KeepsShape:  true,
		Extensions:  []string{".idv"},
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Match: func(head []byte) bool {
			return len(head) >= 8 && binary.LittleEndian.Uint64(head) == signature
		},
		Open: openFormat,
		OpenReader: func(r io.ReaderAt, size int64, name string, opts *format.Options) (mlfeed.Source, error) {
			ro, err := readerOptions(name, opts)
			if err != nil {
				return nil, err
			}
			ro.FileName = name
			return NewReader(r, size, ro)
		},
		Create:   createFormat,
		Validate: validateFormat,
	})
}

// ReadParams are the reader's format options (format.Options.Params; CLI: --opt KEY=VALUE).
var ReadParams = []format.Param{
	{Name: "vectors", Doc: "auto (default: sparse when any row of the column is stored sparsely), dense or sparse: the storage of fixed-size vector columns"},
	{Name: "blocks_per_chunk", Doc: "IDV blocks of every column in one chunk (default: enough for 8192 rows)"},
	{Name: "columns", Doc: "NAME,NAME,...: the columns to read (default: all)", Selects: true},
}

// WriteParams are the writer's format options (format.WriteOptions.Params; CLI: --write-opt).
var WriteParams = []format.Param{
	{Name: "rows_per_block", Doc: "rows per block at most (default 8192; negative: no cap)"},
	{Name: "bytes_per_block", Doc: "estimated bytes per block at most (default 83886080; negative: no cap)"},
	{Name: "level", Doc: "DEFLATE level 1..9 (default 6)"},
}

// readerOptions translates the registry's options: ReadParams and Log.
func readerOptions(name string, opts *format.Options) (*ReaderOptions, error) {
	ro := &ReaderOptions{FileName: name}
	if opts != nil && opts.Context != nil {
		if s := sched.FromContext(opts.Context); s != nil {
			ro.Memory = s.Memory()
		}
	}
	if opts == nil {
		return ro, nil
	}
	ro.Log = opts.Log
	params, err := format.NormalizeParams("idv", opts.Params, ReadParams)
	if err != nil {
		return nil, err
	}
	if v, ok := params["columns"]; ok {
		ro.Columns = strings.Split(v, ",")
	}
	switch v := params["vectors"]; v {
	case "", "auto":
	case "dense":
		ro.Vectors = VectorsDense
	case "sparse":
		ro.Vectors = VectorsSparse
	default:
		return nil, fmt.Errorf("%w: idv: option vectors=%q: want auto, dense or sparse", format.ErrUsage, v)
	}
	if v, ok := params["blocks_per_chunk"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: idv: option blocks_per_chunk=%q: want a positive integer", format.ErrUsage, v)
		}
		ro.BlocksPerChunk = n
	}
	return ro, nil
}

func openFormat(name string, opts *format.Options) (mlfeed.Source, error) {
	ro, err := readerOptions(name, opts)
	if err != nil {
		return nil, err
	}
	r, err := Open(name, ro)
	if errors.Is(err, ErrNoColumn) {
		return nil, fmt.Errorf("%w: option columns: %v", format.ErrUsage, err)
	}
	return r, err
}

// createFormat translates the registry's write options: Compress "deflate" (default) or
// "none", ChunkSize as the bytes-per-block cap, and WriteParams.
func createFormat(w io.Writer, schema mlfeed.Schema, opts *format.WriteOptions) (mlfeed.Sink, error) {
	f, err := format.SeekableFile("idv", w)
	if err != nil {
		return nil, err
	}
	wo := &WriterOptions{}
	if opts != nil {
		switch opts.Compress {
		case "", "deflate":
		case "none":
			wo.Uncompressed = true
		default:
			return nil, fmt.Errorf("%w: idv: compression %q: want deflate or none", format.ErrUsage, opts.Compress)
		}
		if opts.Compat != "" {
			return nil, fmt.Errorf("%w: idv: compat mode %q: the IDV writer has no compatibility modes (it always writes what BinarySaver writes)", format.ErrUsage, opts.Compat)
		}
		if opts.ChunkSize > 0 {
			wo.MaxBytesPerBlock = opts.ChunkSize
		}
		wo.Context = opts.Context
		params, err := format.NormalizeParams("idv", opts.Params, WriteParams)
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"rows_per_block", "bytes_per_block", "level"} {
			v, ok := params[k]
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n == 0 || k == "level" && (n < 1 || n > 9) {
				return nil, fmt.Errorf("%w: idv: option %s=%q: want a non-zero integer (level 1..9; negative means no cap)", format.ErrUsage, k, v)
			}
			switch k {
			case "rows_per_block":
				wo.MaxRowsPerBlock = int(n)
			case "bytes_per_block":
				wo.MaxBytesPerBlock = n
			case "level":
				wo.Level = int(n)
			}
		}
	}
	return NewWriter(f, schema, wo)
}

func validateFormat(name string, opts *format.Options, report func(error) bool) error {
	ro, err := readerOptions(name, opts)
	if err != nil {
		return err
	}
	return Validate(name, ro, report)
}

// Validate checks the named file more strictly than reading does: it opens it (checking
// header, table of contents, lookup tables and metadata) and decodes every block of every
// column on its own, passing each problem to report until report returns false. It returns
// an error only when it cannot check (the file cannot be opened, wrong options). Warnings
// about skipped columns go to opts.Log.
func Validate(name string, opts *ReaderOptions, report func(error) bool) error {
	r, err := Open(name, opts)
	if err != nil {
		if _, ok := err.(*mlfeed.PosError); ok {
			report(err)
			return nil
		}
		return err
	}
	defer r.Close()
	return r.Validate(context.Background(), report)
}

// Validate decodes every block of every column independently and reports each error; it stops
// early when report returns false. It returns an error only when ctx ends.
func (r *Reader) Validate(ctx context.Context, report func(error) bool) error {
	for _, c := range r.alive {
		for b := range c.blocks {
			if err := ctx.Err(); err != nil {
				return err
			}
			if _, err := r.decode(c, b); err != nil && !report(err) {
				return nil
			}
		}
	}
	return nil
}
