package parquet

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// WriterOptions control writing. The zero value is the documented default for every field.
type WriterOptions struct {
	// Compression is the codec of every column: "zstd" (or empty), "snappy", "gzip" or
	// "none".
	Compression string
	// Sequences is "auto" (or empty) to lay out each stream's column from the first chunk:
	// one sample per row when every sequence of that chunk has exactly one sample of the
	// stream, else a list of samples per row; a later chunk that does not fit is an error.
	// "list" makes every column a list of samples per row.
	Sequences string
}

// Writer writes chunks as Parquet row groups, one per chunk. It implements mlfeed.Sink.
type Writer struct {
	w       io.Writer
	opts    WriterOptions
	codec   compress.Compression
	sink    *arrowmap.Sink
	pw      *pqarrow.FileWriter
	samples []string // per row group: its sample count (Chunk.SequenceLength summed)
}

// samplesKey is the file metadata key under which mlfeed records the sample count of each
// row group, comma-separated, when some column holds lists of samples: the chunk table then
// needs no decoding.
const samplesKey = "mlfeed.samples"

// writeOnly hides any Close method of the underlying writer from arrow-go, which would
// otherwise close it.
type writeOnly struct{ io.Writer }

// NewWriter returns a writer of schema's streams to w. The Parquet schema is fixed by the
// first chunk (see WriterOptions.Sequences) and written with it.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	wr := &Writer{w: writeOnly{w}, opts: *opts}
	switch opts.Compression {
	case "", "zstd":
		wr.codec = compress.Codecs.Zstd
	case "snappy":
		wr.codec = compress.Codecs.Snappy
	case "gzip":
		wr.codec = compress.Codecs.Gzip
	case "none":
		wr.codec = compress.Codecs.Uncompressed
	default:
		return nil, fmt.Errorf("%w: compression %q (want zstd, snappy, gzip or none)", ErrUnsupported, opts.Compression)
	}
	switch opts.Sequences {
	case "", "auto", "list":
	default:
		return nil, fmt.Errorf("%w: sequences %q (want auto or list)", ErrUnsupported, opts.Sequences)
	}
	var err error
	if wr.sink, err = arrowmap.NewSink("parquet", schema, opts.Sequences == "list", mapErr); err != nil {
		return nil, err
	}
	return wr, nil
}

func (wr *Writer) start(enc *arrowmap.Encoder) error {
	props := pq.NewWriterProperties(pq.WithCompression(wr.codec), pq.WithMaxRowGroupLength(1<<31-1))
	var err error
	wr.pw, err = pqarrow.NewFileWriter(enc.Schema(), wr.w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return nil
}

// WriteChunk writes c as one row group.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	return wr.sink.WriteChunk(c, wr.start, func(rec arrow.RecordBatch) error {
		if err := wr.pw.Write(rec); err != nil {
			return fmt.Errorf("parquet: writing a row group: %w", err)
		}
		var n int64
		for q := 0; q < c.Sequences; q++ {
			n += c.SequenceLength(q)
		}
		wr.samples = append(wr.samples, strconv.FormatInt(n, 10))
		return nil
	})
}

// Close writes the footer. It does not close the underlying writer.
func (wr *Writer) Close() error {
	return wr.sink.Close(wr.start, func() error {
		if slices.Contains(wr.sink.Encoder().Lists(), true) {
			if err := wr.pw.AppendKeyValueMetadata(samplesKey, strings.Join(wr.samples, ",")); err != nil {
				return fmt.Errorf("parquet: %w", err)
			}
		}
		if err := wr.pw.Close(); err != nil {
			return fmt.Errorf("parquet: closing: %w", err)
		}
		return nil
	})
}
