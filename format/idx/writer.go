package idx

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/byteswap"
	"github.com/mlfeed/mlfeed/internal/spill"
)

// WriterOptions control writing. The zero value writes uncompressed data.
type WriterOptions struct {
	// Gzip compresses the output.
	Gzip bool
	// Level is the gzip level (1 fastest ... 9 best). Zero means gzip's default level.
	Level int
}

// Writer writes an IDX file whose header is known before the data. Values are given in
// mlfeed's little-endian layout and written big-endian.
type Writer struct {
	h       Header
	bw      *bufio.Writer
	gz      *gzip.Writer
	want    int64
	written int64
	scratch []byte
}

// NewWriter writes h to w and returns a writer for the payload. Close checks that exactly the
// announced bytes were written.
func NewWriter(w io.Writer, h Header, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	head, err := encodeHeader(h)
	if err != nil {
		return nil, err
	}
	wr := &Writer{h: h, scratch: make([]byte, 1<<16)}
	wr.want, _ = h.PayloadSize()
	out := w
	if opts.Gzip {
		level := opts.Level
		if level == 0 {
			level = gzip.DefaultCompression
		}
		if wr.gz, err = gzip.NewWriterLevel(w, level); err != nil {
			return nil, fmt.Errorf("idx: %w", err)
		}
		out = wr.gz
	}
	wr.bw = bufio.NewWriterSize(out, 1<<16)
	if _, err := wr.bw.Write(head); err != nil {
		return nil, err
	}
	return wr, nil
}

// Write writes little-endian values of the header's element type. Records may span calls.
func (w *Writer) Write(values mlfeed.Buffer) error {
	if values.Type != w.h.Type {
		return fmt.Errorf("%w: %s values written to a %s IDX file", ErrUnsupported, values.Type, w.h.Type)
	}
	src := values.Bytes
	if w.written+int64(len(src)) > w.want {
		return fmt.Errorf("%w: more data than the header's %v announces", ErrFormat, w.h.Dims)
	}
	w.written += int64(len(src))
	sz := w.h.Type.Size()
	if sz == 1 {
		_, err := w.bw.Write(src)
		return err
	}
	for len(src) > 0 {
		n := min(len(src), len(w.scratch))
		byteswap.Into(w.scratch[:n], src[:n], sz)
		if _, err := w.bw.Write(w.scratch[:n]); err != nil {
			return err
		}
		src = src[n:]
	}
	return nil
}

// Close flushes the data and ends the gzip stream, if any. It does not close the underlying
// writer. It fails if fewer bytes were written than the header announces.
func (w *Writer) Close() error {
	if w.written != w.want {
		return fmt.Errorf("%w: %d data bytes written, header %v announces %d", ErrFormat, w.written, w.h.Dims, w.want)
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.gz != nil {
		return w.gz.Close()
	}
	return nil
}

// HeaderFor returns the header an IDX file of records of the stream gets: the record count,
// then the stream's shape (a stream of Dim 1 without a shape gives a rank-1 file, like MNIST
// labels). It fails for streams IDX cannot hold.
func HeaderFor(st *mlfeed.Stream, records int) (Header, error) {
	if st.Storage != mlfeed.Dense {
		return Header{}, format.Needs(fmt.Errorf("%w: stream %q is sparse; IDX holds dense data only", ErrUnsupported, st.Name), format.ErrNeedsDense)
	}
	if !Supports(st.Type) {
		return Header{}, format.Needs(fmt.Errorf("%w: stream %q holds %s; IDX holds uint8, int8, int16, int32, float32, float64", ErrUnsupported, st.Name, st.Type), format.ErrNeedsType)
	}
	if st.Dim == 0 && st.Shape == nil {
		return Header{}, fmt.Errorf("%w: stream %q has variable-size samples; IDX records have one size", ErrUnsupported, st.Name)
	}
	h := Header{Type: st.Type, Dims: []int{records}}
	switch {
	case st.Shape != nil:
		h.Dims = append(h.Dims, st.Shape...)
	case st.Dim != 1:
		h.Dims = append(h.Dims, st.Dim)
	}
	return h, nil
}

// Sink writes a one-stream data set as IDX: each sequence must be exactly one sample (a
// record). It implements mlfeed.Sink.
type Sink struct {
	w      *Writer
	stream mlfeed.Stream
	schema mlfeed.Schema
}

// NewSink returns a sink writing records of the schema's single stream to w. records is the
// number of records that will be written (it goes into the header first).
func NewSink(w io.Writer, schema mlfeed.Schema, records int, opts *WriterOptions) (*Sink, error) {
	if len(schema.Streams) != 1 {
		var names []string
		for _, s := range schema.Streams {
			names = append(names, s.Name)
		}
		return nil, format.Needs(fmt.Errorf("%w: an IDX file holds one stream, this data has %d (%s); write each stream to its own file",
			ErrUnsupported, len(schema.Streams), strings.Join(names, ", ")), format.ErrNeedsStreams)
	}
	h, err := HeaderFor(&schema.Streams[0], records)
	if err != nil {
		return nil, err
	}
	wr, err := NewWriter(w, h, opts)
	if err != nil {
		return nil, err
	}
	return &Sink{w: wr, stream: schema.Streams[0], schema: schema}, nil
}

// WriteChunk writes the chunk's sequences as records.
func (s *Sink) WriteChunk(c *mlfeed.Chunk) error {
	if err := c.Validate(&s.schema); err != nil {
		return err
	}
	d := &c.Streams[0]
	for q, v := range d.SeqStart {
		if v != int64(q) {
			return fmt.Errorf("%w: stream %q: sequence %d has %d samples; IDX records are sequences of exactly one sample",
				ErrUnsupported, s.stream.Name, q-1, d.SeqStart[q]-d.SeqStart[q-1])
		}
	}
	return s.w.Write(d.Values)
}

// Close finishes the file.
func (s *Sink) Close() error { return s.w.Close() }

// spoolWhat is what the temporary files hold, for their errors.
const spoolWhat = "the records until their count is known"

// spoolSink writes the payload to a temporary file when the record count is unknown up front,
// and the header and payload to the output at Close.
type spoolSink struct {
	out    io.Writer
	schema mlfeed.Schema
	opts   *WriterOptions
	tmp    *os.File
	tmpBuf *bufio.Writer
	sink   *Sink
	n      int
}

func (s *spoolSink) WriteChunk(c *mlfeed.Chunk) error {
	if s.sink == nil {
		// Write records to the spool through a sink with a placeholder count, which is
		// checked at Close against what was actually written.
		var err error
		if s.tmp, err = os.CreateTemp("", "mlfeed-idx-spool-*"); err != nil {
			return spill.TempError(spoolWhat, err)
		}
		os.Remove(s.tmp.Name())
		h, err := HeaderFor(&s.schema.Streams[0], 0)
		if err != nil {
			return err
		}
		s.tmpBuf = bufio.NewWriterSize(spill.TempWriter{File: s.tmp, What: spoolWhat}, 1<<16)
		s.sink = &Sink{w: &Writer{h: h, bw: s.tmpBuf, want: 1 << 62, scratch: make([]byte, 1<<16)}, stream: s.schema.Streams[0], schema: s.schema}
	}
	s.n += c.Sequences
	return s.sink.WriteChunk(c)
}

func (s *spoolSink) Close() error {
	h, err := HeaderFor(&s.schema.Streams[0], s.n)
	if err != nil {
		return err
	}
	head, err := encodeHeader(h)
	if err != nil {
		return err
	}
	out := s.out
	var gz *gzip.Writer
	if s.opts.Gzip {
		level := s.opts.Level
		if level == 0 {
			level = gzip.DefaultCompression
		}
		if gz, err = gzip.NewWriterLevel(out, level); err != nil {
			return err
		}
		out = gz
	}
	if _, err := out.Write(head); err != nil {
		return err
	}
	if s.tmp != nil {
		defer s.tmp.Close()
		if err := s.tmpBuf.Flush(); err != nil {
			return err
		}
		if _, err := s.tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(out, s.tmp); err != nil {
			return err
		}
	}
	if gz != nil {
		return gz.Close()
	}
	return nil
}

// newFileSink is the registry's Create: it streams when the record count is known and spools
// otherwise. Output is gzip-compressed when asked or when the name ends in ".gz".
func newFileSink(f io.Writer, schema mlfeed.Schema, name, compress string, level int, records int64) (mlfeed.Sink, error) {
	opts := &WriterOptions{Level: level}
	switch strings.ToLower(compress) {
	case "gzip", "gz":
		opts.Gzip = true
	case "", "auto":
		opts.Gzip = strings.HasSuffix(strings.ToLower(name), ".gz")
	case "none":
	default:
		return nil, fmt.Errorf("%w: idx compression is gzip or none, not %q", mlfeed.ErrUnsupported, compress)
	}
	if records > 0 {
		return NewSink(f, schema, int(records), opts)
	}
	if _, err := NewSink(io.Discard, schema, 0, nil); err != nil {
		return nil, err // the schema cannot be written at all
	}
	return &spoolSink{out: f, schema: schema, opts: opts}, nil
}
