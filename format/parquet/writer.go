package parquet

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

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
	// TimeUnit, when set ("ms", "us" or "ns"), writes datetime streams as TIMESTAMP columns of
	// that unit (not adjusted to UTC: mlfeed keeps no time zone), which other tools read as
	// timestamps; a value that is no whole number of the unit (or, for "ns", outside the years
	// 1677-2262) is an error. Empty writes mlfeed's INT64 ticks of 100 ns, which hold every
	// datetime and which other tools read as integers.
	TimeUnit string
}

// Writer writes chunks as Parquet row groups, one per chunk. It implements mlfeed.Sink.
type Writer struct {
	w       io.Writer
	opts    WriterOptions
	codec   compress.Codec
	sink    *arrowmap.Sink
	pw      *pq.Writer
	cols    []*wnode // the top-level columns
	leaves  int
	samples []string // per row group: its sample count (Chunk.SequenceLength summed)
}

// samplesKey is the file metadata key under which mlfeed records the sample count of each
// row group, comma-separated, when some column holds lists of samples: the chunk table then
// needs no decoding.
const samplesKey = "mlfeed.samples"

// writeOnly hides any Close method of the underlying writer from parquet-go.
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
		wr.codec = &pq.Zstd
	case "snappy":
		wr.codec = &pq.Snappy
	case "gzip":
		wr.codec = &pq.Gzip
	case "none":
		wr.codec = &pq.Uncompressed
	default:
		return nil, fmt.Errorf("%w: compression %q (want zstd, snappy, gzip or none)", ErrUnsupported, opts.Compression)
	}
	switch opts.Sequences {
	case "", "auto", "list":
	default:
		return nil, fmt.Errorf("%w: sequences %q (want auto or list)", ErrUnsupported, opts.Sequences)
	}
	switch opts.TimeUnit {
	case "", "ms", "us", "ns":
	default:
		return nil, fmt.Errorf("%w: time unit %q (want ms, us or ns)", ErrUnsupported, opts.TimeUnit)
	}
	var err error
	if wr.sink, err = arrowmap.NewSink("parquet", schema, arrowmap.Layout{List: opts.Sequences == "list", TimeUnit: opts.TimeUnit}, mapErr); err != nil {
		return nil, err
	}
	return wr, nil
}

// wnode is a column of the written schema: the Arrow type it holds and where its values go.
type wnode struct {
	dt       arrow.DataType
	optional bool     // an OPTIONAL node (a nullable Arrow field)
	kids     []*wnode // a struct's fields, or a list's element
	col      int      // a leaf's column index
	leaves   []int    // the leaf columns at or below this node
}

// parquetNode returns the Parquet schema node of an Arrow field of type dt, and its wnode;
// leaf columns are numbered from *next on, in schema order.
func parquetNode(dt arrow.DataType, nullable bool, next *int) (pq.Node, *wnode, error) {
	wn := &wnode{dt: dt, optional: nullable, col: -1}
	var n pq.Node
	switch t := dt.(type) {
	case *arrow.ListType, *arrow.FixedSizeListType:
		ef := dt.(arrow.ListLikeType).ElemField()
		en, ew, err := parquetNode(ef.Type, ef.Nullable, next)
		if err != nil {
			return nil, nil, err
		}
		n, wn.kids = pq.List(en), []*wnode{ew}
	case *arrow.StructType:
		g := make(orderedGroup, t.NumFields())
		for i, f := range t.Fields() {
			fn, fw, err := parquetNode(f.Type, f.Nullable, next)
			if err != nil {
				return nil, nil, err
			}
			g[i] = &groupField{Node: fn, name: f.Name}
			wn.kids = append(wn.kids, fw)
		}
		n = g
	default:
		switch dt.ID() {
		case arrow.BOOL:
			n = pq.Leaf(pq.BooleanType)
		case arrow.INT8:
			n = pq.Int(8)
		case arrow.INT16:
			n = pq.Int(16)
		case arrow.INT32:
			n = pq.Int(32)
		case arrow.INT64:
			n = pq.Int(64)
		case arrow.UINT8:
			n = pq.Uint(8)
		case arrow.UINT16:
			n = pq.Uint(16)
		case arrow.UINT32:
			n = pq.Uint(32)
		case arrow.UINT64:
			n = pq.Uint(64)
		case arrow.FLOAT32:
			n = pq.Leaf(pq.FloatType)
		case arrow.FLOAT64:
			n = pq.Leaf(pq.DoubleType)
		case arrow.STRING:
			n = pq.String()
		case arrow.BINARY:
			n = pq.Leaf(pq.ByteArrayType)
		case arrow.FIXED_SIZE_BINARY:
			n = pq.Leaf(pq.FixedLenByteArrayType(dt.(*arrow.FixedSizeBinaryType).ByteWidth))
		case arrow.TIMESTAMP:
			u, ok := map[arrow.TimeUnit]pq.TimeUnit{arrow.Millisecond: pq.Millisecond, arrow.Microsecond: pq.Microsecond, arrow.Nanosecond: pq.Nanosecond}[dt.(*arrow.TimestampType).Unit]
			if !ok {
				return nil, nil, fmt.Errorf("%w: Arrow type %s (Parquet has no timestamps of seconds)", ErrUnsupported, dt)
			}
			n = pq.TimestampAdjusted(u, false)
		default:
			return nil, nil, fmt.Errorf("%w: Arrow type %s", ErrUnsupported, dt)
		}
		wn.col = *next
		*next++
	}
	for _, k := range wn.kids {
		wn.leaves = append(wn.leaves, k.leaves...)
	}
	if wn.col >= 0 {
		wn.leaves = []int{wn.col}
	}
	if nullable {
		n = pq.Optional(n)
	}
	return n, wn, nil
}

// orderedGroup is a Parquet group whose fields keep their order (parquet-go's Group sorts
// them by name).
type orderedGroup []pq.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return fmt.Sprintf("group of %d fields", len(g)) }
func (g orderedGroup) Type() pq.Type               { return pq.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []pq.Field          { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// groupField is a named field of an orderedGroup.
type groupField struct {
	pq.Node
	name string
}

func (f *groupField) Name() string { return f.name }

// Value is not used: rows are written column by column.
func (f *groupField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

func (wr *Writer) start(enc *arrowmap.Encoder) error {
	as := enc.Schema()
	root := make(orderedGroup, as.NumFields())
	for i, f := range as.Fields() {
		n, wn, err := parquetNode(f.Type, f.Nullable, &wr.leaves)
		if err != nil {
			return fmt.Errorf("column %q: %w", f.Name, err)
		}
		root[i] = &groupField{Node: n, name: f.Name}
		wr.cols = append(wr.cols, wn)
	}
	var stored bytes.Buffer
	iw := ipc.NewWriter(&stored, ipc.WithSchema(as))
	if err := iw.Close(); err != nil {
		return fmt.Errorf("parquet: storing the Arrow schema: %w", err)
	}
	wr.pw = pq.NewWriter(wr.w, pq.NewSchema("schema", root), pq.Compression(wr.codec), pq.DataPageVersion(1),
		pq.KeyValueMetadata(arrowSchemaKey, base64.StdEncoding.EncodeToString(stored.Bytes())))
	return nil
}

// WriteChunk writes c as one row group; a chunk of no sequences writes none.
func (wr *Writer) WriteChunk(c *mlfeed.Chunk) error {
	return wr.sink.WriteChunk(c, wr.start, func(rec arrow.RecordBatch) error {
		if rec.NumRows() == 0 {
			return nil // parquet-go writes no empty row group
		}
		if err := wr.writeRecord(rec); err != nil {
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

// shredder turns Arrow arrays into the values of leaf columns, with their repetition and
// definition levels.
type shredder struct {
	vals [][]pq.Value // per leaf column
}

// batchValues is how many values are gathered (over all columns) before they are written.
const batchValues = 1 << 16

// writeRecord writes rec's rows as one row group.
func (wr *Writer) writeRecord(rec arrow.RecordBatch) error {
	s := &shredder{vals: make([][]pq.Value, wr.leaves)}
	cws := wr.pw.ColumnWriters()
	flush := func() error {
		for j, v := range s.vals {
			if _, err := cws[j].WriteRowValues(v); err != nil {
				return err
			}
			s.vals[j] = v[:0]
		}
		return nil
	}
	pending := 0
	for i := range int(rec.NumRows()) {
		for k, wn := range wr.cols {
			if err := s.value(wn, rec.Column(k), i, 0, 0, 0); err != nil {
				return err
			}
		}
		if pending += len(s.vals[0]); pending >= batchValues {
			if err := flush(); err != nil {
				return err
			}
			pending = 0
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return wr.pw.Flush()
}

// value shreds element i of arr (of node wn) at repetition level rep and definition level
// def (those of its parent); replvl is the repetition level of wn's innermost list parent.
func (s *shredder) value(wn *wnode, arr arrow.Array, i, rep, def, replvl int) error {
	if arr.IsNull(i) {
		for _, c := range wn.leaves {
			s.vals[c] = append(s.vals[c], pq.NullValue().Level(rep, def, c))
		}
		return nil
	}
	if wn.optional {
		def++
	}
	switch a := arr.(type) {
	case *array.Struct:
		for k, kid := range wn.kids {
			if err := s.value(kid, a.Field(k), i, rep, def, replvl); err != nil {
				return err
			}
		}
		return nil
	case array.ListLike:
		from, to := a.ValueOffsets(i)
		if from == to {
			for _, c := range wn.leaves {
				s.vals[c] = append(s.vals[c], pq.NullValue().Level(rep, def, c))
			}
			return nil
		}
		if kid := wn.kids[0]; kid.col >= 0 && !kid.optional {
			return s.leafRun(kid, a.ListValues(), int(from), int(to), rep, replvl+1, def+1)
		}
		for k := from; k < to; k++ {
			r := rep
			if k > from {
				r = replvl + 1
			}
			if err := s.value(wn.kids[0], a.ListValues(), int(k), r, def+1, replvl+1); err != nil {
				return err
			}
		}
		return nil
	}
	return s.leafRun(wn, arr, i, i+1, rep, rep, def)
}

// leafRun shreds elements [from, to) of arr, values of leaf wn (not optional): the first at
// repetition level rep, the others at next, all at definition level def.
func (s *shredder) leafRun(wn *wnode, arr arrow.Array, from, to, rep, next, def int) error {
	if arr.NullN() > 0 {
		for i := from; i < to; i++ {
			if arr.IsNull(i) {
				return fmt.Errorf("%w: a null in a column that holds none", ErrFormat)
			}
		}
	}
	c := wn.col
	out := slices.Grow(s.vals[c], to-from)
	switch a := arr.(type) {
	case *array.Float32: // the common case (images, features) without a call per value
		for i, x := range a.Float32Values()[from:to] {
			r := next
			if i == 0 {
				r = rep
			}
			out = append(out, pq.FloatValue(x).Level(r, def, c))
		}
	default:
		for i := from; i < to; i++ {
			v, err := scalar(arr, i)
			if err != nil {
				return err
			}
			r := next
			if i == from {
				r = rep
			}
			out = append(out, v.Level(r, def, c))
		}
	}
	s.vals[c] = out
	return nil
}

// scalar returns element i of a primitive array as a Parquet value.
func scalar(arr arrow.Array, i int) (pq.Value, error) {
	var v pq.Value
	switch a := arr.(type) {
	case *array.Boolean:
		v = pq.BooleanValue(a.Value(i))
	case *array.Int8:
		v = pq.Int32Value(int32(a.Value(i)))
	case *array.Int16:
		v = pq.Int32Value(int32(a.Value(i)))
	case *array.Int32:
		v = pq.Int32Value(a.Value(i))
	case *array.Int64:
		v = pq.Int64Value(a.Value(i))
	case *array.Uint8:
		v = pq.Int32Value(int32(a.Value(i)))
	case *array.Uint16:
		v = pq.Int32Value(int32(a.Value(i)))
	case *array.Uint32:
		v = pq.Int32Value(int32(a.Value(i)))
	case *array.Uint64:
		v = pq.Int64Value(int64(a.Value(i)))
	case *array.Timestamp:
		v = pq.Int64Value(int64(a.Value(i)))
	case *array.Float32:
		v = pq.FloatValue(a.Value(i))
	case *array.Float64:
		v = pq.DoubleValue(a.Value(i))
	case *array.String:
		off := a.ValueOffsets()
		v = pq.ByteArrayValue(a.ValueBytes()[off[i]-off[0] : off[i+1]-off[0]])
	case *array.Binary:
		v = pq.ByteArrayValue(a.Value(i))
	case *array.FixedSizeBinary:
		v = pq.FixedLenByteArrayValue(a.Value(i))
	default:
		return v, fmt.Errorf("%w: Arrow array %s", ErrUnsupported, arr.DataType())
	}
	return v, nil
}

// Close writes the footer. It does not close the underlying writer.
func (wr *Writer) Close() error {
	return wr.sink.Close(wr.start, func() error {
		if slices.Contains(wr.sink.Encoder().Lists(), true) {
			wr.pw.SetKeyValueMetadata(samplesKey, strings.Join(wr.samples, ","))
		}
		if err := wr.pw.Close(); err != nil {
			return fmt.Errorf("parquet: closing: %w", err)
		}
		return nil
	})
}
