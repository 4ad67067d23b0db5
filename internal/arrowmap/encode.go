package arrowmap

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mlfeed/mlfeed"
)

// Encoder turns chunks of an mlfeed schema into Arrow record batches, one batch per chunk.
// Fixed-width values are handed to Arrow without a copy.
type Encoder struct {
	schema mlfeed.Schema
	seq    []bool // per stream: the column is a list of samples per row
	arrow  *arrow.Schema
	times  string // Layout.TimeUnit
}

// Layout chooses how streams become columns. The zero value lays out each column from the
// first chunk and writes times as mlfeed's ticks.
type Layout struct {
	// List makes every column a list of samples per row (else see NewEncoder).
	List bool
	// TimeUnit, when set ("s", "ms", "us" or "ns"), writes datetime streams as Arrow
	// timestamps of that unit without a time zone, counted from 1970 as other tools read
	// them, instead of mlfeed's Int64 ticks of 100 ns from 0001 (mlfeed.type datetime); a
	// value that is no whole number of the unit, or beyond an int64 of it, is refused.
	TimeUnit string
}

// timeUnits maps Layout.TimeUnit to Arrow's units.
var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

// NewEncoder returns an encoder for schema. A stream's column is a list of samples per row
// (sequences) when ly.List is set or when some sequence of first, the first chunk to be
// written, has other than one sample of it; otherwise it holds one sample per row, and a later
// chunk whose sequences do not fit is refused.
func NewEncoder(schema mlfeed.Schema, first *mlfeed.Chunk, ly Layout) (*Encoder, error) {
	if err := schema.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if _, ok := timeUnits[ly.TimeUnit]; !ok && ly.TimeUnit != "" {
		return nil, fmt.Errorf("%w: time unit %q", ErrUnsupported, ly.TimeUnit)
	}
	listAll := ly.List
	e := &Encoder{schema: schema, seq: make([]bool, len(schema.Streams)), times: ly.TimeUnit}
	var fields []arrow.Field
	if schema.HasIDs {
		fields = append(fields, arrow.Field{Name: IDFieldName(&schema), Type: arrow.BinaryTypes.String,
			Metadata: arrow.NewMetadata([]string{KeyRole}, []string{"id"})})
	}
	for i := range schema.Streams {
		e.seq[i] = listAll || first != nil && !oneEach(&first.Streams[i])
		f, err := Field(&schema.Streams[i], e.seq[i], ly.TimeUnit)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	e.arrow = arrow.NewSchema(fields, nil)
	return e, nil
}

// oneEach reports whether every sequence holds exactly one sample of the stream.
func oneEach(d *mlfeed.StreamData) bool {
	for q, s := range d.SeqStart {
		if s != int64(q) {
			return false
		}
	}
	return true
}

// Schema returns the Arrow schema of the batches.
func (e *Encoder) Schema() *arrow.Schema { return e.arrow }

// Lists reports, per stream, whether its column holds a list of samples per row.
func (e *Encoder) Lists() []bool { return e.seq }

// Record encodes c, which must follow the encoder's schema, as a record batch. The batch
// shares c's fixed-width values; it must be written (or released) before c changes.
func (e *Encoder) Record(c *mlfeed.Chunk) (arrow.RecordBatch, error) {
	if err := c.Validate(&e.schema); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	var cols []arrow.Array
	release := func() {
		for _, a := range cols {
			a.Release()
		}
	}
	if e.schema.HasIDs {
		ids := c.IDs
		if ids == nil {
			ids = make([]string, c.Sequences)
		}
		d, err := stringData(arrow.BinaryTypes.String, ids)
		if err != nil {
			return nil, err
		}
		cols = append(cols, array.MakeFromData(d))
	}
	for i := range e.schema.Streams {
		st := &e.schema.Streams[i]
		d := &c.Streams[i]
		if !e.seq[i] && !oneEach(d) {
			release()
			q := 0
			for d.SeqStart[q+1]-d.SeqStart[q] == 1 {
				q++
			}
			return nil, fmt.Errorf("%w: stream %q: a sequence holds %d samples, but the column was laid out for one sample per row from the first chunk (write with sequences=list)",
				ErrUnsupported, st.Name, d.SeqStart[q+1]-d.SeqStart[q])
		}
		ad, err := sampleData(st, d, e.times)
		if err != nil {
			release()
			return nil, fmt.Errorf("stream %q: %w", st.Name, err)
		}
		if e.seq[i] {
			off, err := offsets32(d.SeqStart)
			if err != nil {
				release()
				return nil, fmt.Errorf("stream %q: %w", st.Name, err)
			}
			ad = array.NewData(arrow.ListOfNonNullable(ad.DataType()), c.Sequences, []*memory.Buffer{nil, off}, []arrow.ArrayData{ad}, 0, 0)
		}
		cols = append(cols, array.MakeFromData(ad))
	}
	rec := array.NewRecordBatch(e.arrow, cols, int64(c.Sequences))
	release()
	return rec, nil
}

// sampleData returns the Arrow data of all samples of d (times: Layout.TimeUnit).
func sampleData(st *mlfeed.Stream, d *mlfeed.StreamData, times string) (arrow.ArrayData, error) {
	n := int(d.Samples())
	leaf, err := leafData(d.Values, times)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Storage == mlfeed.Sparse:
		off, err := offsets32(d.SampleStart)
		if err != nil {
			return nil, err
		}
		ix := array.NewData(arrow.PrimitiveTypes.Int32, len(d.Indices), []*memory.Buffer{nil, memory.NewBufferBytes(int32Bytes(d.Indices))}, nil, 0, 0)
		il := array.NewData(arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32), n, []*memory.Buffer{nil, off}, []arrow.ArrayData{ix}, 0, 0)
		vl := array.NewData(arrow.ListOfNonNullable(leaf.DataType()), n, []*memory.Buffer{nil, off}, []arrow.ArrayData{leaf}, 0, 0)
		return array.NewData(sparseType(leaf.DataType()), n, []*memory.Buffer{nil}, []arrow.ArrayData{il, vl}, 0, 0), nil
	case st.Dim == 1 && st.Shape == nil:
		return leaf, nil
	case st.Dim == 0 && st.Shape != nil:
		off, err := offsets32(make([]int64, n+1)) // samples of zero values
		if err != nil {
			return nil, err
		}
		return array.NewData(arrow.ListOfNonNullable(leaf.DataType()), n, []*memory.Buffer{nil, off}, []arrow.ArrayData{leaf}, 0, 0), nil
	case st.Dim == 0:
		off, err := offsets32(d.SampleStart)
		if err != nil {
			return nil, err
		}
		return array.NewData(arrow.ListOfNonNullable(leaf.DataType()), n, []*memory.Buffer{nil, off}, []arrow.ArrayData{leaf}, 0, 0), nil
	}
	return array.NewData(arrow.FixedSizeListOfNonNullable(int32(st.Dim), leaf.DataType()), n, []*memory.Buffer{nil}, []arrow.ArrayData{leaf}, 0, 0), nil
}

// leafData returns the values of b as Arrow data: fixed-width values without a copy,
// booleans packed into bits, text as offsets and bytes, datetimes as timestamps of unit times
// when it is set.
func leafData(b mlfeed.Buffer, times string) (arrow.ArrayData, error) {
	dt, _ := arrowType(b.Type)
	if dt == nil {
		return nil, fmt.Errorf("%w: element type %s", ErrUnsupported, b.Type)
	}
	n := b.Len()
	switch b.Type {
	case mlfeed.DateTime:
		if times != "" {
			return timestampData(b, times)
		}
	case mlfeed.String, mlfeed.Bytes:
		return stringData(dt, b.Strings)
	case mlfeed.Bool:
		bits := make([]byte, (n+7)/8)
		for i, v := range b.Bytes {
			if v != 0 {
				bits[i/8] |= 1 << (i % 8)
			}
		}
		return array.NewData(dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(bits)}, nil, 0, 0), nil
	}
	return array.NewData(dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(b.Bytes)}, nil, 0, 0), nil
}

// stringData returns text (dt Utf8) or byte strings (dt Binary) as offsets and bytes.
func stringData(dt arrow.DataType, s []string) (arrow.ArrayData, error) {
	off := make([]int32, len(s)+1)
	total := 0
	for i, v := range s {
		total += len(v)
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than 2 GiB of %s values in one chunk", ErrUnsupported, dt)
		}
		off[i+1] = int32(total)
	}
	data := make([]byte, 0, total)
	for _, v := range s {
		data = append(data, v...)
	}
	return array.NewData(dt, len(s),
		[]*memory.Buffer{nil, memory.NewBufferBytes(int32Bytes(off)), memory.NewBufferBytes(data)}, nil, 0, 0), nil
}

// offsets32 returns offsets (starting at 0) as an Arrow int32 offsets buffer.
func offsets32(o []int64) (*memory.Buffer, error) {
	out := make([]int32, len(o))
	for i, v := range o {
		if v > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than 2^31 values in one chunk", ErrUnsupported)
		}
		out[i] = int32(v)
	}
	return memory.NewBufferBytes(int32Bytes(out)), nil
}

func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// timestampData returns DateTime values as an Arrow timestamp array of unit times, counted
// from 1970; a value that is no whole number of the unit, or beyond an int64 of it, is an
// error naming it.
func timestampData(b mlfeed.Buffer, times string) (arrow.ArrayData, error) {
	unit := timeUnits[times]
	per, _ := unitTicks(unit) // ticks a count of unit; 1 for ns, a hundredth of a tick
	out := make([]byte, len(b.Bytes))
	for k := range b.Len() {
		ticks := int64(binary.LittleEndian.Uint64(b.Bytes[8*k:]))
		v := ticks - mlfeed.EpochTicks
		switch {
		case unit != arrow.Nanosecond && v%per != 0:
			return nil, fmt.Errorf("%w: value %d, %s, is not a whole number of %s (a finer time_unit keeps it, or none: mlfeed's ticks of 100 ns)", ErrUnsupported, k, mlfeed.AppendTicks(nil, mlfeed.DateTime, ticks), times)
		case unit != arrow.Nanosecond:
			v /= per
		case v > math.MaxInt64/100 || v < math.MinInt64/100:
			return nil, fmt.Errorf("%w: value %d, %s, is beyond int64 nanoseconds from 1970 (the years 1677 to 2262; a coarser time_unit holds it)", ErrUnsupported, k, mlfeed.AppendTicks(nil, mlfeed.DateTime, ticks))
		default:
			v *= 100
		}
		binary.LittleEndian.PutUint64(out[8*k:], uint64(v))
	}
	return array.NewData(&arrow.TimestampType{Unit: unit}, b.Len(), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0), nil
}
