package ctf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// IDMode says when the Writer writes sequence ids.
type IDMode uint8

const (
	// IDsAuto writes the source's ids when it has them, running numbers when it has none but
	// the first chunk holds a sequence of several samples, and no ids otherwise (one sequence
	// per line).
	IDsAuto IDMode = iota
	// IDsNumber numbers the sequences 0, 1, 2, ... whatever the source holds.
	IDsNumber
	// IDsNone writes no ids; every sequence must then have one sample.
	IDsNone
)

// WriterOptions control a Writer. The zero value is IDsAuto.
type WriterOptions struct {
	// IDs selects when sequence ids are written (format option ids=auto|number|none).
	IDs IDMode
}

func parseWriteParams(o *WriterOptions, params map[string]string) error {
	params, err := format.NormalizeParams("ctf", params, WriteParams)
	if err != nil {
		return err
	}
	if v, ok := params["ids"]; ok {
		switch v {
		case "auto", "":
			o.IDs = IDsAuto
		case "number":
			o.IDs = IDsNumber
		case "none":
			o.IDs = IDsNone
		default:
			return fmt.Errorf("%w: ctf option ids=%q: want auto, number or none", format.ErrUsage, v)
		}
	}
	return nil
}

// Writer writes sequences as CTF text. It implements mlfeed.Sink.
type Writer struct {
	w       *bufio.Writer
	schema  mlfeed.Schema
	prefix  [][]byte // "|name" per stream
	opts    WriterOptions
	decided bool
	ids     bool // write ids
	number  bool // ids are running numbers
	seq     int64
	prevID  uint64
	buf     []byte
	scratch []int32 // a sample's sparse indices, sorted to find a repeated one
	err     error
}

// NewWriter returns a Writer of sequences following schema to w, which need not be seekable.
// Every stream must hold numbers (floats, integers or booleans) and have a name CTF can hold:
// printable ASCII without spaces or '|', not starting with '#'. The alias is used when set.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if len(schema.Streams) == 0 {
		return nil, fmt.Errorf("%w: no streams to write", ErrUnsupported)
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 1<<16), schema: schema}
	if opts != nil {
		wr.opts = *opts
	}
	for _, s := range schema.Streams {
		if !s.Type.IsNumeric() {
			return nil, fmt.Errorf("%w: stream %q holds %s values; CTF holds numbers", ErrUnsupported, s.Name, s.Type)
		}
		if err := checkName(s.FileName()); err != nil {
			return nil, fmt.Errorf("%w: stream %q: %v", ErrUnsupported, s.Name, err)
		}
		wr.prefix = append(wr.prefix, []byte("|"+s.FileName()))
	}
	return wr, nil
}

// WriteChunk writes the chunk's sequences.
func (w *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if w.err != nil {
		return w.err
	}
	if err := c.Validate(&w.schema); err != nil {
		return err
	}
	if !w.decided {
		w.decide(c)
	}
	for q := 0; q < c.Sequences; q++ {
		if err := w.sequence(c, q); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func (w *Writer) decide(c *mlfeed.Chunk) {
	w.decided = true
	switch w.opts.IDs {
	case IDsNumber:
		w.ids, w.number = true, true
	case IDsAuto:
		if w.schema.HasIDs && c.IDs != nil {
			w.ids = true
			return
		}
		for q := 0; q < c.Sequences; q++ {
			if c.SequenceLength(q) > 1 {
				w.ids, w.number = true, true
				return
			}
		}
	}
}

func (w *Writer) sequence(c *mlfeed.Chunk, q int) error {
	n := c.SequenceLength(q)
	where := w.seq
	w.seq++
	if n == 0 {
		return fmt.Errorf("%w: sequence %d has no samples", ErrUnsupported, where)
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		if d.SeqStart[q+1] == d.SeqStart[q] {
			return fmt.Errorf("%w: sequence %d has no sample of stream %q; CNTK's reader needs every input in every sequence", ErrUnsupported, where, w.schema.Streams[i].Name)
		}
	}
	var id []byte
	if w.ids {
		v := uint64(where)
		if !w.number {
			if c.IDs == nil {
				return fmt.Errorf("%w: chunk without ids after chunks with ids", ErrUnsupported)
			}
			var err error
			if v, err = strconv.ParseUint(c.IDs[q], 10, 64); err != nil || c.IDs[q] == "" || c.IDs[q][0] == '+' {
				return fmt.Errorf("%w: sequence id %q is not a decimal number (write with ids=number to renumber)", ErrUnsupported, c.IDs[q])
			}
			if where > 0 && v == w.prevID {
				return fmt.Errorf("%w: sequences %d and %d have the same id %d, which would join them", ErrUnsupported, where-1, where, v)
			}
		}
		w.prevID = v
		id = strconv.AppendUint(nil, v, 10)
	} else if n > 1 {
		return fmt.Errorf("%w: sequence %d has %d samples, but the file is written without ids (one sequence per line); write with ids=number", ErrUnsupported, where, n)
	}
	for t := int64(0); t < n; t++ {
		b := w.buf[:0]
		if id != nil {
			b = append(b, id...)
			b = append(b, ' ')
		}
		first := true
		for i := range c.Streams {
			d := &c.Streams[i]
			s := d.SeqStart[q] + t
			if s >= d.SeqStart[q+1] {
				continue
			}
			if !first {
				b = append(b, ' ')
			}
			first = false
			b = append(b, w.prefix[i]...)
			var err error
			if b, err = w.sample(b, &w.schema.Streams[i], d, s); err != nil {
				return fmt.Errorf("sequence %d, stream %q: %w", where, w.schema.Streams[i].Name, err)
			}
		}
		b = append(b, '\n')
		w.buf = b
		if _, err := w.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) sample(b []byte, st *mlfeed.Stream, d *mlfeed.StreamData, s int64) ([]byte, error) {
	from, to := d.SampleRange(st, s)
	if st.Storage == mlfeed.Sparse && hasRepeat(d.Indices[from:to], &w.scratch) {
		return b, fmt.Errorf("%w: sample %d holds a sparse index twice; CTF readers refuse it (mlfeed) or keep one value (CNTK, packed dense)", ErrUnsupported, s)
	}
	var err error
	for k := from; k < to; k++ {
		b = append(b, ' ')
		if st.Storage == mlfeed.Sparse {
			b = strconv.AppendInt(b, int64(d.Indices[k]), 10)
			b = append(b, ':')
		}
		if b, err = appendValue(b, d.Values, k); err != nil {
			return b, err
		}
	}
	return b, nil
}

// maxExactInt is the largest integer below which float64 holds every integer.
const maxExactInt = 1 << 53

// appendValue writes element k in the shortest form that reads back exactly.
func appendValue(b []byte, v mlfeed.Buffer, k int) ([]byte, error) {
	le := binary.LittleEndian
	var f float64
	bits := 64
	switch v.Type {
	case mlfeed.Float32:
		f, bits = float64(math.Float32frombits(le.Uint32(v.Bytes[4*k:]))), 32
	case mlfeed.Float64:
		f = math.Float64frombits(le.Uint64(v.Bytes[8*k:]))
	case mlfeed.Uint64:
		u := le.Uint64(v.Bytes[8*k:])
		if u > maxExactInt {
			return b, fmt.Errorf("%w: %d at element %d would not read back: CTF values are read as float64 at most, which holds integers up to 2^53 exactly", mlfeed.ErrRange, u, k)
		}
		return strconv.AppendUint(b, u, 10), nil
	default:
		i := v.Int64At(k)
		if i > maxExactInt || i < -maxExactInt {
			return b, fmt.Errorf("%w: %d at element %d would not read back: CTF values are read as float64 at most, which holds integers up to 2^53 exactly", mlfeed.ErrRange, i, k)
		}
		return strconv.AppendInt(b, i, 10), nil
	}
	switch {
	case math.IsNaN(f):
		return b, fmt.Errorf("%w: NaN at element %d cannot be written in CTF", mlfeed.ErrRange, k)
	case math.IsInf(f, 1):
		return append(b, "1e999"...), nil // CTF has no "inf"; this overflows to +Inf when read
	case math.IsInf(f, -1):
		return append(b, "-1e999"...), nil
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits), nil
}

// Close flushes the buffered text. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err == errClosed {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	if w.err = w.w.Flush(); w.err != nil {
		return w.err
	}
	w.err = errClosed
	return nil
}

var errClosed = fmt.Errorf("ctf: write after Close")
