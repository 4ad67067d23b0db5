package arrow

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
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
	// TimeUnit, when set ("s", "ms", "us" or "ns"), writes datetime streams as timestamps of
	// that unit without a time zone, which other tools read as timestamps; a value that is no
	// whole number of the unit (or, for "ns", outside the years 1677-2262) is an error. Empty
	// writes mlfeed's Int64 ticks of 100 ns (mlfeed.type datetime), which hold every datetime.
	TimeUnit string
}

// Writer writes chunks as Arrow record batches, one per chunk. It implements mlfeed.Sink.
type Writer struct {
	w      io.Writer
	opts   WriterOptions
	sink   *arrowmap.Sink
	file   *ipc.FileWriter
	stream *ipc.Writer
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
	switch opts.TimeUnit {
	case "", "s", "ms", "us", "ns":
	default:
		return nil, fmt.Errorf("%w: time unit %q (want s, ms, us or ns)", ErrUnsupported, opts.TimeUnit)
	}
	sink, err := arrowmap.NewSink("arrow", schema, arrowmap.Layout{List: opts.Sequences == "list", TimeUnit: opts.TimeUnit}, mapErr)
	if err != nil {
		return nil, err
	}
	return &Writer{w: writeOnly{w}, opts: *opts, sink: sink}, nil
}

func (wr *Writer) start(enc *arrowmap.Encoder) error {
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
	var err error
	wr.file, err = ipc.NewFileWriter(wr.w, o...)
	return err
}

// WriteChunk writes c as one record batch.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	return wr.sink.WriteChunk(c, wr.start, func(rec arrow.RecordBatch) error {
		var err error
		if wr.stream != nil {
			err = wr.stream.Write(rec)
		} else {
			err = wr.file.Write(rec)
		}
		if err != nil {
			return fmt.Errorf("arrow: writing a record batch: %w", err)
		}
		return nil
	})
}

// Close writes the end of the stream or the file's footer. It does not close the underlying
// writer.
func (wr *Writer) Close() error {
	return wr.sink.Close(wr.start, func() error {
		var err error
		if wr.stream != nil {
			err = wr.stream.Close()
		} else {
			err = wr.file.Close()
		}
		if err != nil {
			return fmt.Errorf("arrow: closing: %w", err)
		}
		return nil
	})
}
