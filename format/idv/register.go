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
)

func init() {
	format.Register(format.Format{
		Name:       "idv",
		Extensions: []string{".idv"},
		Match: func(head []byte) bool {
			return len(head) >= 8 && binary.LittleEndian.Uint64(head) == signature
		},
		Open: openFormat,
		OpenReader: func(r io.ReaderAt, size int64, name string, opts *format.Options) (mlfeed.Source, error) {
			ro, err := readerOptions(name, opts)
			if err != nil {
				return nil, err
			}
			ro.Name = name
			return NewReader(r, size, ro)
		},
		Create:   createFormat,
		Validate: validateFormat,
	})
}

// readerOptions translates the registry's options: --opt vectors=auto|dense|sparse,
// --opt blocks_per_chunk=N and --opt columns=NAME,NAME.
func readerOptions(name string, opts *format.Options) (*ReaderOptions, error) {
	ro := &ReaderOptions{Name: name}
	if opts == nil {
		return ro, nil
	}
	ro.Log = opts.Log
	if err := format.CheckParams("idv", opts.Params, "vectors", "blocks_per_chunk", "columns"); err != nil {
		return nil, err
	}
	if v, ok := opts.Params["columns"]; ok {
		ro.Columns = strings.Split(v, ",")
	}
	switch v := opts.Params["vectors"]; v {
	case "", "auto":
	case "dense":
		ro.Vectors = VectorsDense
	case "sparse":
		ro.Vectors = VectorsSparse
	default:
		return nil, fmt.Errorf("%w: idv: --opt vectors=%q: want auto, dense or sparse", format.ErrUsage, v)
	}
	if v, ok := opts.Params["blocks_per_chunk"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: idv: --opt blocks_per_chunk=%q: want a positive integer", format.ErrUsage, v)
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
		return nil, fmt.Errorf("%w: --opt columns: %v", format.ErrUsage, err)
	}
	return r, err
}

// createFormat translates the registry's write options: Compress "deflate" (default) or
// "none", ChunkSize as the bytes-per-block cap, and --write-opt rows_per_block=N,
// bytes_per_block=N, level=1..9.
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
			return nil, fmt.Errorf("%w: idv: --compat %q: the IDV writer has no compatibility modes (it always writes what BinarySaver writes)", format.ErrUsage, opts.Compat)
		}
		if opts.ChunkSize > 0 {
			wo.MaxBytesPerBlock = opts.ChunkSize
		}
		if err := format.CheckParams("idv", opts.Params, "rows_per_block", "bytes_per_block", "level"); err != nil {
			return nil, err
		}
		for _, k := range []string{"rows_per_block", "bytes_per_block", "level"} {
			v, ok := opts.Params[k]
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n == 0 || k == "level" && (n < 1 || n > 9) {
				return nil, fmt.Errorf("%w: idv: --write-opt %s=%q: want a non-zero integer (level 1..9; negative means no cap)", format.ErrUsage, k, v)
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

// validateFormat opens the file (checking header, table of contents, lookup tables and
// metadata) and decodes every block of every column on its own, reporting each bad block.
func validateFormat(name string, opts *format.Options, report func(error) bool) error {
	ro, err := readerOptions(name, opts)
	if err != nil {
		return err
	}
	r, err := Open(name, ro) // warnings about skipped columns go to opts.Log
	if err != nil {
		if _, ok := err.(*mlfeed.PosError); ok {
			report(err)
			return nil
		}
		return err
	}
	defer r.Close()
	return r.Check(context.Background(), report)
}

// Check decodes every block of every column independently and reports each error; it stops
// early when report returns false. It returns an error only when ctx ends.
func (r *Reader) Check(ctx context.Context, report func(error) bool) error {
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
