package libsvm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/nantext"
)

// WriterOptions control writing. The zero value writes one-based indices and takes the
// streams called labels, features and qid.
type WriterOptions struct {
	// ZeroBased writes feature indices as they are instead of one above (LIBSVM's own
	// numbering is one-based).
	ZeroBased bool
	// Labels, Features and QID name the streams to write as the label, the features and the
	// qid. Empty means "labels", "features" and "qid". A schema's other streams are an error.
	Labels, Features, QID string
	// DenseFeatures allows a dense features stream, written as its non-zero values. It reads
	// back as a sparse stream, so without it a dense stream is refused (lossless or loud).
	DenseFeatures bool
}

// Writer writes LIBSVM text. It implements mlfeed.Sink.
type Writer struct {
	w       *bufio.Writer
	schema  mlfeed.Schema
	lab     int // stream positions, -1 when absent
	feat    int
	qid     int
	shift   int
	records int64
	line    []byte
	order   []int
	closed  bool
}

// NewWriter returns a writer of schema's streams to w. The labels stream is dense with one
// numeric value per record, or sparse (a multi-hot: each index a label, each value 1); the
// features stream is sparse numeric (or dense, with WriterOptions.DenseFeatures: the non-zero
// values are written); the qid stream holds one integer per record. Any of them may be
// missing.
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	names := [3]string{opts.Labels, opts.Features, opts.QID}
	for k, d := range [3]string{LabelsName, FeaturesName, QIDName} {
		if names[k] == "" {
			names[k] = d
		}
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 1<<20), schema: schema, lab: -1, feat: -1, qid: -1, shift: 1}
	if opts.ZeroBased {
		wr.shift = 0
	}
	for i := range schema.Streams {
		st := &schema.Streams[i]
		if !st.Type.IsNumeric() {
			return nil, fmt.Errorf("%w: stream %q holds %s; LIBSVM holds numbers", ErrUnsupported, st.Name, st.Type)
		}
		switch st.Name {
		case names[0]:
			wr.lab = i
			if st.Storage == mlfeed.Dense && st.Dim != 1 {
				return nil, fmt.Errorf("%w: label stream %q has %d values per record; LIBSVM has one label (or a sparse multi-hot)", ErrUnsupported, st.Name, st.Dim)
			}
		case names[1]:
			wr.feat = i
			if st.Storage == mlfeed.Dense && st.Dim == 0 && st.Shape == nil {
				return nil, fmt.Errorf("%w: feature stream %q has samples of varying size", ErrUnsupported, st.Name)
			}
			if st.Storage == mlfeed.Dense && !opts.DenseFeatures {
				return nil, fmt.Errorf("%w: feature stream %q is dense; LIBSVM stores features sparsely and reads them back as a sparse stream (the writer option dense_features=true writes its non-zero values)", ErrUnsupported, st.Name)
			}
		case names[2]:
			wr.qid = i
			if st.Storage != mlfeed.Dense || st.Dim != 1 || !st.Type.IsInteger() {
				return nil, fmt.Errorf("%w: qid stream %q must hold one integer per record", ErrUnsupported, st.Name)
			}
		default:
			return nil, fmt.Errorf("%w: stream %q has no place in LIBSVM, which holds %s, %s and %s", ErrUnsupported, st.Name, names[0], names[1], names[2])
		}
	}
	return wr, nil
}

// WriteChunk writes one line per sequence. Every sequence must hold one sample of each stream.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if wr.closed {
		return errors.New("libsvm: WriteChunk after Close")
	}
	if err := c.Validate(&wr.schema); err != nil {
		return fmt.Errorf("libsvm: %w", err)
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		for q := 0; q < c.Sequences; q++ {
			if n := d.SeqStart[q+1] - d.SeqStart[q]; n != 1 {
				return fmt.Errorf("%w: record %d has %d samples of stream %q; a LIBSVM line holds one", ErrUnsupported, wr.records+int64(q), n, wr.schema.Streams[i].Name)
			}
		}
	}
	for q := 0; q < c.Sequences; q++ {
		if err := wr.record(c, q); err != nil {
			return err
		}
		if _, err := wr.w.Write(wr.line); err != nil {
			return err
		}
	}
	return nil
}

// record formats sequence q of c into wr.line.
func (wr *Writer) record(c *mlfeed.Chunk, q int) error {
	rec := wr.records
	wr.records++
	b := wr.line[:0]
	var err error
	if wr.lab >= 0 {
		st, d := &wr.schema.Streams[wr.lab], &c.Streams[wr.lab]
		from, to := d.SampleRange(st, d.SeqStart[q])
		if st.Storage == mlfeed.Dense {
			if b, err = appendNumber(b, d.Values, from); err != nil {
				return fmt.Errorf("record %d, label: %w", rec, err)
			}
		} else {
			for k := from; k < to; k++ {
				if d.Values.Float64At(k) != 1 {
					return fmt.Errorf("%w: record %d: multi-hot label %d has value %v; LIBSVM label lists hold labels only (value 1)", ErrUnsupported, rec, d.Indices[k], d.Values.Float64At(k))
				}
			}
			ix := slices.Clone(d.Indices[from:to])
			slices.Sort(ix)
			for k, l := range ix {
				if k > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(l), 10)
			}
		}
	}
	if wr.qid >= 0 {
		d := &c.Streams[wr.qid]
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, "qid:"...)
		b = strconv.AppendInt(b, d.Values.Int64At(int(d.SeqStart[q])), 10)
	}
	nf := 0
	if wr.feat >= 0 {
		st, d := &wr.schema.Streams[wr.feat], &c.Streams[wr.feat]
		from, to := d.SampleRange(st, d.SeqStart[q])
		put := func(idx, k int) error {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(idx+wr.shift), 10)
			b = append(b, ':')
			var err error
			b, err = appendNumber(b, d.Values, k)
			nf++
			return err
		}
		if st.Storage == mlfeed.Dense {
			for k := from; k < to; k++ {
				if v := d.Values.Float64At(k); v != 0 || math.Signbit(v) {
					if err := put(k-from, k); err != nil {
						return fmt.Errorf("record %d, feature %d: %w", rec, k-from, err)
					}
				}
			}
		} else {
			ix := d.Indices[from:to]
			wr.order = wr.order[:0]
			for k := range ix {
				wr.order = append(wr.order, from+k)
			}
			if !slices.IsSorted(ix) {
				slices.SortFunc(wr.order, func(a, b int) int { return int(d.Indices[a]) - int(d.Indices[b]) })
			}
			for n, k := range wr.order {
				if n > 0 && d.Indices[k] == d.Indices[wr.order[n-1]] {
					return fmt.Errorf("%w: record %d: feature index %d twice", ErrUnsupported, rec, d.Indices[k])
				}
				if err := put(int(d.Indices[k]), k); err != nil {
					return fmt.Errorf("record %d, feature %d: %w", rec, d.Indices[k], err)
				}
			}
		}
	}
	if len(b) == 0 {
		return fmt.Errorf("%w: record %d has no label, qid or feature: it would be an empty line, which LIBSVM skips", ErrUnsupported, rec)
	}
	wr.line = append(b, '\n')
	return nil
}

// appendNumber appends value k of v in a form that reads back as the same float64: the
// shortest that round-trips for floats (float32 values exactly, as their float64 value),
// decimal for integers up to 2^53, which float64 holds exactly.
func appendNumber(b []byte, v mlfeed.Buffer, k int) ([]byte, error) {
	switch v.Type {
	case mlfeed.Float64, mlfeed.Float32:
		f := v.Float64At(k)
		if f != f {
			if v.Type == mlfeed.Float32 {
				f = nantext.Widen32(math.Float32bits(v.Float32s()[k]))
			}
			return nantext.Append(b, f), nil
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case mlfeed.Uint64:
		u := binary.LittleEndian.Uint64(v.Bytes[8*k:])
		if u > 1<<53 {
			return b, fmt.Errorf("%w: %d does not fit a float64 exactly", ErrRange, u)
		}
		return strconv.AppendUint(b, u, 10), nil
	case mlfeed.Bool:
		return strconv.AppendInt(b, int64(min(v.Bytes[k], 1)), 10), nil
	}
	x := v.Int64At(k)
	if x > 1<<53 || x < -(1<<53) {
		return b, fmt.Errorf("%w: %d does not fit a float64 exactly", ErrRange, x)
	}
	return strconv.AppendInt(b, x, 10), nil
}

// Close flushes the text. It does not close the underlying writer.
func (wr *Writer) Close() error {
	if wr.closed {
		return nil
	}
	wr.closed = true
	return wr.w.Flush()
}
