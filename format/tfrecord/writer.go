package tfrecord

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// WriterOptions configures a Writer. The zero value writes plain tf.train.Example records.
type WriterOptions struct {
	// Records is RecordsExample (the default, also for "") or RecordsSequenceExample.
	Records string
	// Compression is CompressionNone (the default, also for ""), CompressionGzip or
	// CompressionZlib.
	Compression string
	// Level is the gzip or zlib level, 1 to 9; zero means 6.
	Level int
}

// Writer writes sequences as TFRecord records, one record per sequence.
type Writer struct {
	schema mlfeed.Schema
	seq    bool // SequenceExample records
	kinds  []kind
	bw     *bufio.Writer
	z      io.WriteCloser // the compressor, if any
	rec    []byte         // the record being encoded
	sizes  []int          // per stream, the encoded size of its Feature (Example) or FeatureList
	n      int64          // records written
	err    error
}

// NewWriter returns a writer of schema's streams to w. A stream TFRecord cannot hold is
// refused here (ErrUnsupported): sparse storage, float64 and the types that are not numbers,
// text or bytes. Sequence ids are not written (Example records have no id).
func NewWriter(w io.Writer, schema mlfeed.Schema, opts *WriterOptions) (*Writer, error) {
	o := WriterOptions{}
	if opts != nil {
		o = *opts
	}
	wr := &Writer{schema: schema, kinds: make([]kind, len(schema.Streams)), sizes: make([]int, len(schema.Streams))}
	switch o.Records {
	case "", RecordsExample:
	case RecordsSequenceExample:
		wr.seq = true
	default:
		return nil, fmt.Errorf("%w: records %q for writing (want example or sequence_example)", ErrUnsupported, o.Records)
	}
	for i, st := range schema.Streams {
		if st.Storage == mlfeed.Sparse {
			return nil, format.Needs(fmt.Errorf("%w: stream %q is sparse; Example features hold dense lists", ErrUnsupported, st.Name), format.ErrNeedsDense)
		}
		switch t := st.Type; {
		case t == mlfeed.Float32:
			wr.kinds[i] = kindFloat
		case t.IsInteger() || t == mlfeed.Bool:
			wr.kinds[i] = kindInt64 // uint64 values are checked as they come
		case t.IsVarLen():
			wr.kinds[i] = kindBytes
		case t == mlfeed.Float64:
			return nil, format.Needs(fmt.Errorf("%w: stream %q holds float64, which TFRecord's float_list (float32) cannot hold", ErrUnsupported, st.Name), format.ErrNeedsType)
		default:
			return nil, fmt.Errorf("%w: stream %q holds %s; TFRecord holds float32, int64 and bytes", ErrUnsupported, st.Name, t)
		}
		if !wr.seq && st.Dim == 0 && st.Shape == nil {
			return nil, fmt.Errorf("%w: stream %q has samples of varying size, which an Example feature cannot keep apart (write with records=sequence_example)", ErrUnsupported, st.Name)
		}
	}
	level := o.Level
	if level == 0 {
		level = 6
	}
	var err error
	switch o.Compression {
	case "", CompressionNone:
	case CompressionGzip:
		wr.z, err = gzip.NewWriterLevel(w, level)
	case CompressionZlib:
		wr.z, err = zlib.NewWriterLevel(w, level)
	default:
		return nil, fmt.Errorf("%w: compression %q (want none, gzip or zlib)", ErrUnsupported, o.Compression)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: level %d: %v", ErrUnsupported, level, err)
	}
	if wr.z != nil {
		w = wr.z
	}
	wr.bw = bufio.NewWriterSize(w, 1<<20)
	return wr, nil
}

// WriteChunk writes the sequences of c, one record each.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	if wr.err != nil {
		return wr.err
	}
	if err := c.Validate(&wr.schema); err != nil {
		return err
	}
	for q := 0; q < c.Sequences; q++ {
		if err := wr.check(c, q); err != nil {
			return err
		}
		wr.rec = wr.encode(wr.rec[:0], c, q)
		wr.frame(wr.rec)
		wr.n++
		if wr.err != nil {
			return wr.err
		}
	}
	return nil
}

// check refuses what a record cannot hold: in an Example, several samples of a stream whose
// samples are not scalars; a uint64 value beyond int64.
func (wr *Writer) check(c *mlfeed.Chunk, q int) error {
	for i := range c.Streams {
		st, d := &wr.schema.Streams[i], &c.Streams[i]
		s0, s1 := d.SeqStart[q], d.SeqStart[q+1]
		if !wr.seq && s1-s0 != 1 && (st.Dim != 1 || st.Shape != nil) {
			return fmt.Errorf("%w: stream %q: sequence %d has %d samples of dim %d; an Example feature holds one sample, or scalar samples (write with records=sequence_example)", ErrUnsupported, st.Name, wr.n, s1-s0, st.Dim)
		}
		if st.Type == mlfeed.Uint64 {
			from, _ := d.SampleRange(st, s0)
			to := from
			if s1 > s0 {
				_, to = d.SampleRange(st, s1-1)
			}
			for _, v := range d.Values.Uint64s()[from:to] {
				if v > math.MaxInt64 {
					return format.Needs(fmt.Errorf("%w: stream %q: sequence %d holds %d, beyond int64_list's range (keep values below 2^63)", ErrUnsupported, st.Name, wr.n, v), format.ErrNeedsType)
				}
			}
		}
	}
	return nil
}

// valueRange returns the range of values of samples [s0, s1) of stream i.
func valueRange(st *mlfeed.Stream, d *mlfeed.StreamData, s0, s1 int64) (int, int) {
	if s1 <= s0 {
		return 0, 0
	}
	from, _ := d.SampleRange(st, s0)
	_, to := d.SampleRange(st, s1-1)
	return from, to
}

// listSize returns the encoded size of the list message of values [from, to).
func listSize(k kind, v mlfeed.Buffer, from, to int) int {
	n := to - from
	switch k {
	case kindFloat:
		if n == 0 {
			return 0
		}
		return 1 + protowire.SizeBytes(4*n)
	case kindInt64:
		if n == 0 {
			return 0
		}
		m := 0
		for k := from; k < to; k++ {
			m += protowire.SizeVarint(uint64(v.Int64At(k)))
		}
		return 1 + protowire.SizeBytes(m)
	}
	m := 0
	for _, s := range v.Strings[from:to] {
		m += 1 + protowire.SizeBytes(len(s))
	}
	return m
}

// appendList appends the list message of values [from, to).
func appendList(b []byte, k kind, v mlfeed.Buffer, from, to int) []byte {
	n := to - from
	switch k {
	case kindFloat:
		if n == 0 {
			return b
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(4*n))
		return append(b, v.Bytes[4*from:4*to]...)
	case kindInt64:
		if n == 0 {
			return b
		}
		m := 0
		for k := from; k < to; k++ {
			m += protowire.SizeVarint(uint64(v.Int64At(k)))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(m))
		for k := from; k < to; k++ {
			b = protowire.AppendVarint(b, uint64(v.Int64At(k)))
		}
		return b
	}
	for _, s := range v.Strings[from:to] {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

// featureSize returns the size of a Feature holding a list of size n of kind k.
func featureSize(n int) int { return 1 + protowire.SizeBytes(n) }

func appendFeature(b []byte, k kind, v mlfeed.Buffer, from, to, size int) []byte {
	b = protowire.AppendTag(b, protowire.Number(k), protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	return appendList(b, k, v, from, to)
}

// entrySize returns the size of a map entry (key, message of size n).
func entrySize(key string, n int) int {
	return 1 + protowire.SizeBytes(len(key)) + 1 + protowire.SizeBytes(n)
}

func appendEntryHead(b []byte, key string, n int) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(entrySize(key, n)))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

// encode appends the Example (or SequenceExample) of sequence q.
func (wr *Writer) encode(b []byte, c *mlfeed.Chunk, q int) []byte {
	total := 0
	for i := range c.Streams {
		st, d := &wr.schema.Streams[i], &c.Streams[i]
		k := wr.kinds[i]
		s0, s1 := d.SeqStart[q], d.SeqStart[q+1]
		n := 0
		if wr.seq { // a FeatureList: one Feature per sample
			for s := s0; s < s1; s++ {
				from, to := d.SampleRange(st, s)
				n += 1 + protowire.SizeBytes(featureSize(listSize(k, d.Values, from, to)))
			}
		} else {
			from, to := valueRange(st, d, s0, s1)
			n = featureSize(listSize(k, d.Values, from, to))
		}
		wr.sizes[i] = n
		total += 1 + protowire.SizeBytes(entrySize(st.FileName(), n))
	}
	field := protowire.Number(1) // Example.features
	if wr.seq {
		field = 2 // SequenceExample.feature_lists
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(total))
	for i := range c.Streams {
		st, d := &wr.schema.Streams[i], &c.Streams[i]
		k := wr.kinds[i]
		s0, s1 := d.SeqStart[q], d.SeqStart[q+1]
		b = appendEntryHead(b, st.FileName(), wr.sizes[i])
		if wr.seq {
			for s := s0; s < s1; s++ {
				from, to := d.SampleRange(st, s)
				size := listSize(k, d.Values, from, to)
				b = protowire.AppendTag(b, 1, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(featureSize(size)))
				b = appendFeature(b, k, d.Values, from, to, size)
			}
			continue
		}
		from, to := valueRange(st, d, s0, s1)
		b = appendFeature(b, k, d.Values, from, to, listSize(k, d.Values, from, to))
	}
	return b
}

// frame writes one record with its length, data and CRCs.
func (wr *Writer) frame(data []byte) {
	var h [headerSize]byte
	binary.LittleEndian.PutUint64(h[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(h[8:], MaskedCRC(h[:8]))
	var f [footerSize]byte
	binary.LittleEndian.PutUint32(f[:], MaskedCRC(data))
	if _, err := wr.bw.Write(h[:]); err != nil {
		wr.err = err
		return
	}
	if _, err := wr.bw.Write(data); err != nil {
		wr.err = err
		return
	}
	if _, err := wr.bw.Write(f[:]); err != nil {
		wr.err = err
	}
}

// Records returns the number of records written.
func (wr *Writer) Records() int64 { return wr.n }

// Close flushes the records and ends the compressed stream. It does not close the
// underlying writer.
func (wr *Writer) Close() error {
	if wr.err != nil {
		return wr.err
	}
	if err := wr.bw.Flush(); err != nil {
		return err
	}
	if wr.z != nil {
		return wr.z.Close()
	}
	return nil
}
