package parquet

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
)

// node is an element of the Parquet schema tree (the footer's flattened schema list, read back
// into a tree), with the definition and repetition levels a value of it has when present.
type node struct {
	el       *format.SchemaElement
	children []*node
	col      int // the leaf column's index, or -1 for a group
	first    int // the first leaf column at or below this node
	def, rep int // levels of this node: optional and repeated nodes from the root, itself included
}

func (n *node) name() string { return n.el.Name }

func (n *node) repeated() bool {
	return n.el.RepetitionType.Valid && n.el.RepetitionType.V == format.Repeated
}

// maxNesting bounds the schema tree's depth (arrow-go allows 64 too).
const maxNesting = 64

// schemaTree reads the footer's schema list into a tree, and returns the root's children
// and the leaves by column index.
func schemaTree(els []format.SchemaElement) (fields, leaves []*node, err error) {
	if len(els) == 0 {
		return nil, nil, fmt.Errorf("%w: empty schema", ErrFormat)
	}
	pos := 1
	var build func(el *format.SchemaElement, parent *node, depth int) (*node, error)
	build = func(el *format.SchemaElement, parent *node, depth int) (*node, error) {
		if depth > maxNesting {
			return nil, fmt.Errorf("%w: schema nested deeper than %d", ErrFormat, maxNesting)
		}
		n := &node{el: el, col: -1, first: len(leaves)}
		if parent != nil {
			n.def, n.rep = parent.def, parent.rep
			if el.RepetitionType.Valid && el.RepetitionType.V != format.Required {
				n.def++
			}
			if n.repeated() {
				n.rep++
			}
			if n.def > 255 || n.rep > 255 {
				return nil, fmt.Errorf("%w: schema too deep", ErrFormat)
			}
		}
		kids := int(el.NumChildren.V)
		if !el.NumChildren.Valid || kids == 0 {
			if parent == nil {
				return n, nil // a schema of no columns
			}
			if !el.Type.Valid {
				return nil, fmt.Errorf("%w: schema element %q has neither children nor a type", ErrFormat, el.Name)
			}
			n.col = len(leaves)
			leaves = append(leaves, n)
			return n, nil
		}
		if err := groupAnnotation(el); err != nil {
			return nil, err
		}
		if kids < 0 || kids > len(els)-pos {
			return nil, fmt.Errorf("%w: schema element %q claims %d children, %d elements remain", ErrFormat, el.Name, kids, len(els)-pos)
		}
		for range kids {
			c := &els[pos]
			pos++
			child, err := build(c, n, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
		return n, nil
	}
	root, err := build(&els[0], nil, 0)
	if err != nil {
		return nil, nil, err
	}
	if pos != len(els) {
		return nil, nil, fmt.Errorf("%w: %d schema elements outside the tree", ErrFormat, len(els)-pos)
	}
	return root.children, leaves, nil
}

// groupAnnotation checks the logical and converted types of a group: LIST, MAP (and
// MAP_KEY_VALUE) and VARIANT annotate groups; the others apply to primitive columns only, and a
// group annotated so is invalid (arrow-go refuses it too). A logical type parquet-go does not
// know decodes to none and is ignored, as the format says.
func groupAnnotation(el *format.SchemaElement) error {
	switch el.LogicalType.Value.(type) {
	case nil, *format.ListType, *format.MapType, *format.VariantType:
	default:
		return fmt.Errorf("%w: group %q annotated as %s, a logical type of primitive columns", ErrFormat, el.Name, el.LogicalType.Value)
	}
	if el.ConvertedType.Valid {
		switch el.ConvertedType.V {
		case deprecated.List, deprecated.Map, deprecated.MapKeyValue:
		default:
			return fmt.Errorf("%w: group %q annotated with converted type %d, one of primitive columns", ErrFormat, el.Name, el.ConvertedType.V)
		}
	}
	return nil
}

// isList reports whether group n is annotated as a LIST.
func isList(n *node) bool {
	if _, ok := n.el.LogicalType.Value.(*format.ListType); ok {
		return true
	}
	return n.el.ConvertedType.Valid && n.el.ConvertedType.V == deprecated.List
}

// isVariant reports whether group n is annotated as a VARIANT: its fields (metadata, value,
// typed_value) are the variant's encoding, not values of their own.
func isVariant(n *node) bool {
	_, ok := n.el.LogicalType.Value.(*format.VariantType)
	return ok
}

// errVariant is the error of a VARIANT column, which mlfeed does not decode (its fields read
// as struct fields would be the encoding's bytes, not the values).
func errVariant(n *node) error {
	return fmt.Errorf("%w: column %q: a Parquet VARIANT (%s)", ErrUnsupported, n.name(), arrowmap.Readable)
}

// errMap is the error of a MAP column, which mlfeed does not read.
func errMap(n *node) error {
	return fmt.Errorf("%w: column %q: a Parquet MAP (%s)", ErrUnsupported, n.name(), arrowmap.Readable)
}

// isMap reports whether group n is annotated as a MAP.
func isMap(n *node) bool {
	if _, ok := n.el.LogicalType.Value.(*format.MapType); ok {
		return true
	}
	return n.el.ConvertedType.Valid && (n.el.ConvertedType.V == deprecated.Map || n.el.ConvertedType.V == deprecated.MapKeyValue)
}

// listParts returns the repeated node of LIST group n and the node of its elements, by the
// format's backward-compatibility rules: the element is the repeated node itself when that is
// a primitive, a group of several fields, or named "array" or "<list>_tuple".
func listParts(n *node) (rep, elem *node, err error) {
	if len(n.children) != 1 || !n.children[0].repeated() {
		return nil, nil, fmt.Errorf("%w: LIST group %q does not hold one repeated field", ErrFormat, n.name())
	}
	rep = n.children[0]
	if rep.col >= 0 || len(rep.children) != 1 || rep.name() == "array" || rep.name() == n.name()+"_tuple" {
		return rep, rep, nil
	}
	return rep, rep.children[0], nil
}

// arrowOf returns the Arrow type a column of another writer's file reads as (the types
// arrow-go's pqarrow would give, for the error messages of those mlfeed refuses), for node n; asElem
// says that n is a repeated node standing for its own elements.
func arrowOf(n *node, asElem bool) (arrow.DataType, error) {
	if n.repeated() && !asElem {
		elem, err := arrowOf(n, true)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(elem), nil
	}
	if n.col >= 0 {
		return leafArrow(n)
	}
	switch {
	case isMap(n):
		return nil, errMap(n)
	case isVariant(n):
		return nil, errVariant(n)
	case isList(n):
		rep, elem, err := listParts(n)
		if err != nil {
			return nil, err
		}
		et, err := arrowOf(elem, elem == rep)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(et), nil
	}
	fields := make([]arrow.Field, len(n.children))
	for i, c := range n.children {
		t, err := arrowOf(c, false)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: c.name(), Type: t, Nullable: true, Metadata: ticksMeta(c, arrow.Metadata{})}
	}
	return arrow.StructOf(fields...), nil
}

// ticksMeta returns md with mlfeed.type=datetime when node n is an INT96 column, or lists of
// one, which this package reads as DateTime ticks in an Int64.
func ticksMeta(n *node, md arrow.Metadata) arrow.Metadata {
	for n.col < 0 {
		if !isList(n) {
			return md
		}
		_, elem, err := listParts(n)
		if err != nil {
			return md
		}
		n = elem
	}
	if n.el.Type.V != format.Int96 {
		return md
	}
	keys, vals := md.Keys(), md.Values()
	if i := md.FindKey(arrowmap.KeyType); i >= 0 {
		vals = slices.Clone(vals)
		vals[i] = mlfeed.DateTime.String()
		return arrow.NewMetadata(keys, vals)
	}
	return arrow.NewMetadata(append(slices.Clone(keys), arrowmap.KeyType), append(slices.Clone(vals), mlfeed.DateTime.String()))
}

// leafArrow returns the Arrow type of a leaf column by its physical and logical types. A
// logical type the reader does not know (an empty union after decoding) is ignored, as the
// Parquet format says.
func leafArrow(n *node) (arrow.DataType, error) {
	el := n.el
	lt := el.LogicalType.Value
	ct := deprecated.ConvertedType(-1)
	if el.ConvertedType.Valid {
		ct = el.ConvertedType.V
	}
	switch t := lt.(type) {
	case *format.DecimalType:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, nil
	case *format.DateType:
		return dateArrow(n)
	case *format.TimeType:
		return timeArrow(n, false, t.IsAdjustedToUTC, t.Unit.Value)
	case *format.TimestampType:
		return timeArrow(n, true, t.IsAdjustedToUTC, t.Unit.Value)
	case *format.UUIDType:
		return &arrow.FixedSizeBinaryType{ByteWidth: 16}, nil
	case *format.Float16Type:
		return arrow.FixedWidthTypes.Float16, nil
	}
	// A column of logical type NULL (Arrow's null type, all its values null: pyarrow writes
	// one as INT32) reads by its physical type, as DuckDB reads it: its rows are read if
	// they hold no value (empty lists) and refused at the first null otherwise.
	switch ct {
	case deprecated.Decimal:
		return &arrow.Decimal128Type{Precision: el.Precision.V, Scale: el.Scale.V}, nil
	case deprecated.Date:
		return dateArrow(n)
	case deprecated.TimeMillis:
		return timeArrow(n, false, true, &format.MilliSeconds{})
	case deprecated.TimeMicros:
		return timeArrow(n, false, true, &format.MicroSeconds{})
	case deprecated.TimestampMillis:
		return timeArrow(n, true, true, &format.MilliSeconds{})
	case deprecated.TimestampMicros:
		return timeArrow(n, true, true, &format.MicroSeconds{})
	case deprecated.Interval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval, nil
	}
	it, _ := lt.(*format.IntType)
	width, signed := int8(0), true
	if it != nil {
		width, signed = it.BitWidth, it.IsSigned
	} else {
		switch ct {
		case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64:
			width = map[deprecated.ConvertedType]int8{deprecated.Int8: 8, deprecated.Int16: 16, deprecated.Int32: 32, deprecated.Int64: 64}[ct]
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			width = map[deprecated.ConvertedType]int8{deprecated.Uint8: 8, deprecated.Uint16: 16, deprecated.Uint32: 32, deprecated.Uint64: 64}[ct]
			signed = false
		}
	}
	switch el.Type.V {
	case format.Boolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case format.Int32:
		switch {
		case width == 8 && signed:
			return arrow.PrimitiveTypes.Int8, nil
		case width == 16 && signed:
			return arrow.PrimitiveTypes.Int16, nil
		case width == 8:
			return arrow.PrimitiveTypes.Uint8, nil
		case width == 16:
			return arrow.PrimitiveTypes.Uint16, nil
		case width == 32 && !signed:
			return arrow.PrimitiveTypes.Uint32, nil
		}
		return arrow.PrimitiveTypes.Int32, nil
	case format.Int64:
		if width == 64 && !signed {
			return arrow.PrimitiveTypes.Uint64, nil
		}
		return arrow.PrimitiveTypes.Int64, nil
	case format.Int96:
		// mlfeed's DateTime ticks, converted as the column is read (see int96Ticks), with
		// mlfeed.type on the field (ticksMeta): nanoseconds since 1970 in an int64 reach
		// only 1677-2262, and Spark writes 9999-12-31
		return arrow.PrimitiveTypes.Int64, nil
	case format.Float:
		return arrow.PrimitiveTypes.Float32, nil
	case format.Double:
		return arrow.PrimitiveTypes.Float64, nil
	case format.ByteArray:
		switch lt.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return arrow.BinaryTypes.String, nil
		}
		if ct == deprecated.UTF8 || ct == deprecated.Enum || ct == deprecated.Json {
			return arrow.BinaryTypes.String, nil
		}
		return arrow.BinaryTypes.Binary, nil
	case format.FixedLenByteArray:
		if !el.TypeLength.Valid || el.TypeLength.V <= 0 {
			return nil, fmt.Errorf("%w: column %q: FIXED_LEN_BYTE_ARRAY of length %d", ErrFormat, el.Name, el.TypeLength.V)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(el.TypeLength.V)}, nil
	}
	return nil, fmt.Errorf("%w: column %q: physical type %d", ErrFormat, el.Name, el.Type.V)
}

// dateArrow returns the Arrow type of a DATE column (days since 1970-01-01 in an INT32).
func dateArrow(n *node) (arrow.DataType, error) {
	if n.el.Type.V != format.Int32 {
		return nil, fmt.Errorf("%w: column %q: DATE on physical type %s", ErrFormat, n.name(), n.el.Type.V)
	}
	return arrow.FixedWidthTypes.Date32, nil
}

// timeArrow returns the Arrow type of a TIMESTAMP (ts) or TIME column of unit u: a timestamp
// in an INT64 (zoned "UTC" when adjusted to UTC), a time of day in milliseconds in an INT32,
// in micro- or nanoseconds in an INT64.
func timeArrow(n *node, ts, adjusted bool, u format.TimeUnitValue) (arrow.DataType, error) {
	what := map[bool]string{true: "TIMESTAMP", false: "TIME"}[ts]
	var unit arrow.TimeUnit
	switch u.(type) {
	case *format.MilliSeconds:
		unit = arrow.Millisecond
	case *format.MicroSeconds:
		unit = arrow.Microsecond
	case *format.NanoSeconds:
		unit = arrow.Nanosecond
	default:
		return nil, fmt.Errorf("%w: column %q: %s without a time unit", ErrFormat, n.name(), what)
	}
	want := format.Int64
	if !ts && unit == arrow.Millisecond {
		want = format.Int32
	}
	if n.el.Type.V != want {
		return nil, fmt.Errorf("%w: column %q: %s(%s) on physical type %s", ErrFormat, n.name(), what, u, n.el.Type.V)
	}
	switch {
	case ts && adjusted:
		return &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, nil
	case ts:
		return &arrow.TimestampType{Unit: unit}, nil
	case want == format.Int32:
		return &arrow.Time32Type{Unit: unit}, nil
	}
	return &arrow.Time64Type{Unit: unit}, nil
}

// resolve checks that Arrow type dt (from the stored Arrow schema) describes node n, and
// returns the type this package builds for it: dictionaries are decoded to their values and
// 64-bit offsets are read as 32-bit ones. asElem: n is a repeated node standing for its own
// elements.
func resolve(dt arrow.DataType, n *node, asElem bool) (arrow.DataType, error) {
	if et, ok := dt.(arrow.ExtensionType); ok {
		dt = et.StorageType()
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	mismatch := func() error {
		return fmt.Errorf("%w: the stored Arrow type %s does not describe Parquet column %q", errSchemaMeta, dt, n.name())
	}
	if n.repeated() && !asElem {
		var inner arrow.DataType
		switch t := dt.(type) {
		case *arrow.ListType:
			inner = t.Elem()
		case *arrow.LargeListType:
			inner = t.Elem()
		default:
			return nil, mismatch()
		}
		elem, err := resolve(inner, n, true)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(elem), nil
	}
	switch t := dt.(type) {
	case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType:
		if n.col >= 0 || !isList(n) {
			return nil, mismatch()
		}
		rep, elem, err := listParts(n)
		if err != nil {
			return nil, err
		}
		et, err := resolve(dt.(arrow.ListLikeType).Elem(), elem, elem == rep)
		if err != nil {
			return nil, err
		}
		if f, ok := t.(*arrow.FixedSizeListType); ok {
			if f.Len() <= 0 {
				return nil, mismatch()
			}
			return arrow.FixedSizeListOf(f.Len(), et), nil
		}
		return arrow.ListOf(et), nil
	case *arrow.StructType:
		if isVariant(n) {
			return nil, errVariant(n)
		}
		if n.col >= 0 || isList(n) || isMap(n) || t.NumFields() != len(n.children) {
			return nil, mismatch()
		}
		fields := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			ft, err := resolve(f.Type, n.children[i], false)
			if err != nil {
				return nil, err
			}
			fields[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: f.Nullable, Metadata: ticksMeta(n.children[i], f.Metadata)}
		}
		return arrow.StructOf(fields...), nil
	}
	if n.col < 0 {
		if isMap(n) {
			return nil, errMap(n)
		}
		return nil, mismatch()
	}
	if dt.ID() == arrow.NULL {
		// Arrow's null type, which pyarrow writes as a column of logical type NULL.
		if _, null := n.el.LogicalType.Value.(*format.NullType); !null && n.el.LogicalType.Value != nil {
			return nil, mismatch()
		}
		return leafArrow(n)
	}
	if isTime(dt) {
		// The Parquet annotation says the unit of the values stored, the Arrow type only what
		// its writer casts them to after reading (pyarrow stores timestamp[s] as
		// TIMESTAMP(MILLIS), date64 as DATE, and any unit as INT96 when asked to).
		pt, err := leafArrow(n)
		if err != nil {
			return nil, err
		}
		if isTime(pt) {
			return pt, nil
		}
	}
	var ok bool
	switch n.el.Type.V {
	case format.Boolean:
		ok = dt.ID() == arrow.BOOL
	case format.Int32:
		switch dt.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.DATE32, arrow.TIME32, arrow.DECIMAL32, arrow.DECIMAL128:
			ok = true
		}
	case format.Int64:
		switch dt.ID() {
		case arrow.INT64, arrow.UINT64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION, arrow.DATE64, arrow.DECIMAL64, arrow.DECIMAL128:
			ok = true
		}
	case format.Int96:
		if ok = dt.ID() == arrow.TIMESTAMP; ok {
			dt = arrow.PrimitiveTypes.Int64 // DateTime ticks, as leafArrow says
		}
	case format.Float:
		ok = dt.ID() == arrow.FLOAT32
	case format.Double:
		ok = dt.ID() == arrow.FLOAT64
	case format.ByteArray:
		switch dt.ID() {
		case arrow.STRING, arrow.BINARY, arrow.DECIMAL128, arrow.DECIMAL256:
			ok = true
		case arrow.LARGE_STRING:
			dt, ok = arrow.BinaryTypes.String, true
		case arrow.LARGE_BINARY:
			dt, ok = arrow.BinaryTypes.Binary, true
		}
	case format.FixedLenByteArray:
		switch t := dt.(type) {
		case *arrow.FixedSizeBinaryType:
			ok = t.ByteWidth == int(n.el.TypeLength.V)
		case *arrow.Float16Type, *arrow.Decimal128Type, *arrow.Decimal256Type:
			ok = true
		}
	}
	if !ok {
		return nil, mismatch()
	}
	return dt, nil
}

// isTime reports whether dt is an Arrow date, time of day or timestamp.
func isTime(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}
