package arrow

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// WriterOptions control writing. The zero value is the documented default for every field.
type WriterOptions struct {
	// Stream writes the IPC stream format (.arrows) instead of the file format (.arrow,
	// .feather).
	Stream bool
	// Sequences is "auto" (or empty) to lay out each stream's column from the first chunk:
	// one sample per row when every sequence of that chunk has exactly one sample of the
	// stream, else a list of samples per row; a later chunk that does not fit is an error.
	// "list" makes every column a list of samples per row.
	Sequences string
	// Compression compresses record batch bodies: "none" (or empty), "lz4" or "zstd".
	// Compressed files are read with a copy (decompression) instead of from the mapping.
	Compression string
}

// Writer writes chunks as Arrow record batches, one per chunk. It implements mlfeed.Sink.
type Writer struct {
	w      io.Writer
	schema mlfeed.Schema
	opts   WriterOptions
	enc    *arrowmap.Encoder
	file   *ipc.FileWriter
	stream *ipc.Writer
	err    error
	closed bool
}

// writeOnly hides any Close method of the underlying writer from arrow-go, which would
// otherwise close it.
type writeOnly struct{ io.Writer }

// NewWriter returns a writer of schema's streams to w. The Arrow schema is fixed by the first
// chunk (see WriterOptions.Sequences) and written with it.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	switch opts.Sequences {
	case "", "auto", "list":
	default:
		return nil, fmt.Errorf("%w: sequences %q (want auto or list)", ErrUnsupported, opts.Sequences)
	}
	switch opts.Compression {
	case "", "none", "lz4", "zstd":
	default:
		return nil, fmt.Errorf("%w: compression %q (want none, lz4 or zstd)", ErrUnsupported, opts.Compression)
	}
	// Check the schema now: a stream Arrow cannot hold fails before any data is written.
	if _, err := arrowmap.NewEncoder(schema, nil, opts.Sequences == "list"); err != nil {
		return nil, mapErr(err)
	}
	return &Writer{w: writeOnly{w}, schema: schema, opts: *opts}, nil
}

func (wr *Writer) start(first *mlfeed.Chunk) error {
	enc, err := arrowmap.NewEncoder(wr.schema, first, wr.opts.Sequences == "list")
	if err != nil {
		return mapErr(err)
	}
	wr.enc = enc
	o := []ipc.Option{ipc.WithSchema(enc.Schema())}
	switch wr.opts.Compression {
	case "lz4":
		o = append(o, ipc.WithLZ4())
	case "zstd":
		o = append(o, ipc.WithZstd())
	}
	if wr.opts.Stream {
		wr.stream = ipc.NewWriter(wr.w, o...)
		return nil
	}
	wr.file, err = ipc.NewFileWriter(wr.w, o...)
	return err
}

// WriteChunk writes c as one record batch.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if wr.err != nil {
		return wr.err
	}
	if wr.enc == nil {
		if wr.err = wr.start(c); wr.err != nil {
			return wr.err
		}
	}
	rec, err := wr.enc.Record(c)
	if err != nil {
		return mapErr(err)
	}
	defer rec.Release()
	if wr.stream != nil {
		err = wr.stream.Write(rec)
	} else {
		err = wr.file.Write(rec)
	}
	if err != nil {
		wr.err = fmt.Errorf("arrow: writing a record batch: %w", err)
	}
	return wr.err
}

// Close writes the end of the stream or the file's footer. It does not close the underlying
// writer.
func (wr *Writer) Close() error {
	if wr.closed {
		return nil
	}
	if wr.err != nil {
		return wr.err
	}
	if wr.enc == nil {
		if wr.err = wr.start(nil); wr.err != nil {
			return wr.err
		}
	}
	var err error
	if wr.stream != nil {
		err = wr.stream.Close()
	} else {
		err = wr.file.Close()
	}
	if err != nil {
		wr.err = fmt.Errorf("arrow: closing: %w", err)
		return wr.err
	}
	wr.closed = true
	wr.err = fmt.Errorf("arrow: writer closed")
	return nil
}
