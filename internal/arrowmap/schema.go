package arrowmap

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// Kind is how one sample of a stream is laid out in its column.
type Kind uint8

// The sample layouts.
const (
	Scalar   Kind = iota // one value per sample: a primitive (or dictionary) column
	Fixed                // Dim values per sample: FixedSizeList, or List of equal lengths
	Variable             // any number of values per sample: List or LargeList
	Sparse               // Struct<indices: List<Int>, values: List<T>>
)

// Column says how a stream is read from its Arrow column.
type Column struct {
	// Field is the index of the column in the Arrow schema.
	Field int
	// Path, for a field of a struct column (another writer's struct, read as one stream per
	// field, named COLUMN.FIELD), holds the index of the field at each level of structs
	// below the column; empty for the column itself.
	Path []int
	// Seq reports whether the column is a list of samples per row (sequences), rather than
	// one sample per row.
	Seq bool
	// Kind is the sample layout.
	Kind Kind
	// Dim is the number of values in a Fixed sample; for a Fixed column of another writer's
	// List type it is 0 until Learn sets it from the data.
	Dim int
	// Type is the element type.
	Type mlfeed.ElemType
	// Half reports Arrow float16 values, read as float32 (Type), which holds each exactly.
	Half bool

	learn bool // the dimension comes from the first row (Learn)
}

// Plan maps the columns of an Arrow schema to mlfeed streams.
type Plan struct {
	// Schema is the mlfeed schema the columns map to.
	Schema mlfeed.Schema
	// Columns is parallel to Schema.Streams.
	Columns []Column
	// IDField is the index of the column of sequence ids (KeyRole "id"), or -1.
	IDField int
	// Arrow is the Arrow schema the plan was made from.
	Arrow *arrow.Schema

	failed []failedField // fields of struct columns that cannot be read (see pick)
}

// HalfStreams returns the names of the streams whose Arrow values are float16, read as
// float32, for a reader's Details ("float16_read_as_float32"); nil if none.
func (p *Plan) HalfStreams() []string {
	var out []string
	for k, c := range p.Columns {
		if c.Half {
			out = append(out, p.Schema.Streams[k].Name)
		}
	}
	return out
}

// NeedsDim returns the streams (indices into Schema.Streams) whose fixed dimension is not
// in the metadata and must be learned from the first row of data (see Learn).
func (p *Plan) NeedsDim() []int {
	var out []int
	for i, c := range p.Columns {
		if c.learn {
			out = append(out, i)
		}
	}
	return out
}

// listElem returns the element field of a List or LargeList type.
func listElem(dt arrow.DataType) (arrow.DataType, bool) {
	switch t := dt.(type) {
	case *arrow.ListType:
		return t.Elem(), true
	case *arrow.LargeListType:
		return t.Elem(), true
	}
	return nil, false
}

// storageType returns the storage type of an extension type, else dt.
func storageType(dt arrow.DataType) arrow.DataType {
	if et, ok := dt.(arrow.ExtensionType); ok {
		return et.StorageType()
	}
	return dt
}

// NewPlan maps the Arrow schema as to streams: the fields at the indices fields gives, in
// that order (see Select), or every field when fields is nil; with names, only the streams
// they name, in that order (a stream, or a struct column's streams: see pick), so that a field
// of a struct mlfeed cannot hold does not stop the others. variableLists reads List columns
// that carry no mlfeed dimension as variable-size dense samples instead of fixed ones of the
// first row's length.
func NewPlan(as *arrow.Schema, variableLists bool, fields []int, names []string) (*Plan, error) {
	p := &Plan{IDField: -1, Arrow: as}
	if fields == nil {
		fields = make([]int, as.NumFields())
		for i := range fields {
			fields[i] = i
		}
	}
	for _, fi := range fields {
		f := as.Field(fi)
		md := f.Metadata
		get := func(k string) (string, bool) {
			i := md.FindKey(k)
			if i < 0 {
				return "", false
			}
			return md.Values()[i], true
		}
		if role, _ := get(KeyRole); role == "id" {
			if p.IDField >= 0 {
				return nil, fmt.Errorf("%w: columns %q and %q both hold sequence ids", ErrFormat, as.Field(p.IDField).Name, f.Name)
			}
			if elemType(storageType(f.Type)) != mlfeed.String {
				return nil, fmt.Errorf("%w: id column %q is %s, not text", ErrFormat, f.Name, f.Type)
			}
			p.IDField = fi
			p.Schema.HasIDs = true
			continue
		}
		if t, ok := storageType(f.Type).(*arrow.StructType); ok && !isSparse(t) {
			if err := p.planStruct(f.Name, fi, nil, t, variableLists); err != nil {
				return nil, err
			}
			continue
		}
		st, col, err := planField(f, get, variableLists)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		col.Field = fi
		p.Schema.Streams = append(p.Schema.Streams, st)
		p.Columns = append(p.Columns, col)
	}
	if err := p.pick(names); err != nil {
		return nil, err
	}
	if len(p.Columns) == 0 && p.IDField < 0 {
		// Rows of no columns take no bytes, so a file could claim any number of them: a data
		// set of sequences with nothing in them is not one mlfeed reads.
		return nil, fmt.Errorf("%w: the schema has no fields, so no streams to read", ErrUnsupported)
	}
	if err := p.Schema.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return p, nil
}

// planStruct maps the fields of struct column name (field fi of the schema, path the struct's
// place below it) to one stream each, NAME.FIELD, structs within it flattened the same way.
func (p *Plan) planStruct(name string, fi int, path []int, t *arrow.StructType, variableLists bool) error {
	if len(path) >= maxStructDepth {
		return fmt.Errorf("%w: column %q: structs nested deeper than %d", ErrUnsupported, name, maxStructDepth)
	}
	if t.NumFields() == 0 {
		return fmt.Errorf("column %q: %w: a struct of no fields", name, ErrUnsupported)
	}
	for i, f := range t.Fields() {
		fname := name + "." + f.Name
		at := append(slices.Clone(path), i)
		if ct, ok := storageType(f.Type).(*arrow.StructType); ok && !isSparse(ct) {
			if err := p.planStruct(fname, fi, at, ct, variableLists); err != nil {
				return err
			}
			continue
		}
		md := f.Metadata
		get := func(k string) (string, bool) {
			i := md.FindKey(k)
			if i < 0 {
				return "", false
			}
			return md.Values()[i], true
		}
		st, col, err := planField(arrow.Field{Name: fname, Type: f.Type, Nullable: f.Nullable, Metadata: f.Metadata}, get, variableLists)
		if err != nil {
			// an error only if the field is read (pick)
			p.failed = append(p.failed, failedField{fname, fmt.Errorf("column %q: %w", fname, err)})
			continue
		}
		col.Field, col.Path = fi, at
		p.Schema.Streams = append(p.Schema.Streams, st)
		p.Columns = append(p.Columns, col)
	}
	return nil
}

// maxStructDepth bounds how deep structs within structs are flattened.
const maxStructDepth = 32

// failedField is a struct's field planStruct could not map, and why.
type failedField struct {
	name string
	err  error
}

// pick keeps the streams names name, in that order: a stream of that name, or the streams of
// a struct column or field of that name (NAME.FIELD...); a name that is none is a usage error
// listing the streams, and a name that takes in a field mlfeed cannot hold is that field's
// error. With no names every stream is kept, and every such field is an error.
func (p *Plan) pick(names []string) error {
	for _, f := range p.failed {
		for _, n := range names {
			if f.name == n || strings.HasPrefix(f.name, n+".") {
				return f.err
			}
		}
		if len(names) == 0 {
			return f.err
		}
	}
	if len(names) == 0 {
		return nil
	}
	var streams []mlfeed.Stream
	var cols []Column
	taken := make([]bool, len(p.Columns))
	for _, n := range names {
		found := false
		for i, st := range p.Schema.Streams {
			if st.Name == n || strings.HasPrefix(st.Name, n+".") {
				found = true
				if !taken[i] {
					taken[i] = true
					streams, cols = append(streams, st), append(cols, p.Columns[i])
				}
			}
		}
		if !found {
			have := make([]string, len(p.Schema.Streams))
			for i, st := range p.Schema.Streams {
				have[i] = strconv.Quote(st.Name)
			}
			return fmt.Errorf("%w: no column %q (the columns: %s)", format.ErrUsage, n, strings.Join(have, ", "))
		}
	}
	p.Schema.Streams, p.Columns = streams, cols
	return nil
}

func planField(f arrow.Field, get func(string) (string, bool), variableLists bool) (mlfeed.Stream, Column, error) {
	st := mlfeed.Stream{Name: f.Name}
	var col Column
	dt := storageType(f.Type)
	seqKey, hasSeq := get(KeySequence)
	if hasSeq && seqKey != "list" && seqKey != "one" {
		return st, col, fmt.Errorf("%w: %s=%q, want list or one", ErrFormat, KeySequence, seqKey)
	}
	if elem, ok := listElem(dt); ok {
		inner := storageType(elem)
		_, innerList := listElem(inner)
		if seqKey == "list" || !hasSeq && (innerList || inner.ID() == arrow.FIXED_SIZE_LIST || isSparse(inner)) {
			col.Seq = true
			dt = inner
		}
	} else if seqKey == "list" {
		return st, col, fmt.Errorf("%w: %s=list on a column of type %s", ErrFormat, KeySequence, f.Type)
	}

	var leaf arrow.DataType
	isList := false
	switch {
	case isSparse(dt):
		col.Kind = Sparse
		st.Storage = mlfeed.Sparse
		s := dt.(*arrow.StructType)
		ix, _ := listElem(storageType(s.Field(0).Type))
		if k := ix.ID(); k != arrow.INT32 && k != arrow.INT64 && k != arrow.UINT32 && k != arrow.UINT16 && k != arrow.UINT8 && k != arrow.INT16 && k != arrow.INT8 {
			return st, col, fmt.Errorf("%w: sparse indices of type %s; want an integer type", ErrUnsupported, ix)
		}
		leaf, _ = listElem(storageType(s.Field(1).Type))
	case dt.ID() == arrow.FIXED_SIZE_LIST:
		t := dt.(*arrow.FixedSizeListType)
		col.Kind, col.Dim = Fixed, int(t.Len())
		leaf = t.Elem()
	default:
		if elem, ok := listElem(dt); ok {
			col.Kind, isList = Variable, true
			leaf = elem
		} else {
			col.Kind, col.Dim = Scalar, 1
			leaf = dt
		}
	}
	leaf = storageType(leaf)
	col.Type = elemType(leaf)
	col.Half = leaf.ID() == arrow.FLOAT16
	if ts, ok := get(KeyType); ok {
		t, err := mlfeed.ParseElemType(ts)
		if err != nil {
			return st, col, fmt.Errorf("%w: %s=%q: %v", ErrFormat, KeyType, ts, err)
		}
		if want, _ := arrowType(t); want == nil || !arrow.TypeEqual(want, leaf) {
			return st, col, fmt.Errorf("%w: %s=%s on values of Arrow type %s", ErrFormat, KeyType, t, leaf)
		}
		col.Type = t
	}
	if col.Type == mlfeed.Invalid {
		return st, col, fmt.Errorf("%w: values of Arrow type %s (%s)", ErrUnsupported, leaf, Readable)
	}
	st.Type = col.Type

	// What the metadata says overrides what the types imply.
	if s, ok := get(KeyStorage); ok && s != st.Storage.String() {
		return st, col, fmt.Errorf("%w: %s=%q on a column laid out as %s", ErrFormat, KeyStorage, s, st.Storage)
	}
	dimKey, hasDim := get(KeyDim)
	if hasDim {
		d, err := strconv.Atoi(dimKey)
		if err != nil || d < 0 || d > 1<<40 {
			return st, col, fmt.Errorf("%w: %s=%q", ErrFormat, KeyDim, dimKey)
		}
		switch col.Kind {
		case Scalar:
			if d != 1 {
				return st, col, fmt.Errorf("%w: %s=%d on a column of one value per sample", ErrFormat, KeyDim, d)
			}
		case Fixed:
			if col.Dim != d {
				return st, col, fmt.Errorf("%w: %s=%d on a fixed-size list of %d", ErrFormat, KeyDim, d, col.Dim)
			}
		case Variable:
			if d > 0 {
				col.Kind, col.Dim = Fixed, d
			}
		}
		st.Dim = d
	} else {
		st.Dim = col.Dim
		if isList && !variableLists {
			col.Kind, col.learn = Fixed, true
		}
	}
	if s, ok := get(KeyShape); ok {
		shape, err := parseShape(s)
		if err != nil {
			return st, col, err
		}
		st.Shape = shape
	} else if name, _ := get(ExtName); name == TensorExt && col.Kind == Fixed {
		meta, _ := get(ExtMeta)
		shape, err := tensorShape(meta)
		if err != nil {
			return st, col, err
		}
		st.Shape = shape
	}
	if st.Shape != nil {
		p := 1
		for _, d := range st.Shape {
			if d > 0 && p > 1<<40/d {
				return st, col, fmt.Errorf("%w: shape %v too large", ErrFormat, st.Shape)
			}
			p *= d
		}
		if isList && hasDim && col.Kind == Variable {
			col.Kind = Fixed // a fixed shape with a zero in it
		}
		if col.Kind != Fixed || col.learn || p != st.Dim {
			return st, col, fmt.Errorf("%w: shape %v does not fit a sample of %d values", ErrFormat, st.Shape, st.Dim)
		}
	}
	st.Alias, _ = get(KeyAlias)
	if s, ok := get(KeyKeyCount); ok {
		k, err := strconv.ParseUint(s, 10, 64)
		if err != nil || !st.Type.IsInteger() || st.Type.IsSigned() {
			return st, col, fmt.Errorf("%w: %s=%q on %s values", ErrFormat, KeyKeyCount, s, st.Type)
		}
		st.KeyCount = k
	}
	if s, ok := get(KeyDefines); ok {
		st.DefinesMBSize = s == "true"
	}
	if s, ok := get(KeyMetadata); ok {
		ann, err := decodeAnnotations(s)
		if err != nil {
			return st, col, err
		}
		st.Metadata = ann
	}
	return st, col, nil
}

// isSparse reports whether dt is mlfeed's sparse struct: two list fields named indices and
// values.
func isSparse(dt arrow.DataType) bool {
	s, ok := dt.(*arrow.StructType)
	if !ok || s.NumFields() != 2 || s.Field(0).Name != "indices" || s.Field(1).Name != "values" {
		return false
	}
	_, a := listElem(storageType(s.Field(0).Type))
	_, b := listElem(storageType(s.Field(1).Type))
	return a && b
}

func parseShape(s string) ([]int, error) {
	if s == "" {
		return []int{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 64 {
		return nil, fmt.Errorf("%w: %s has %d axes", ErrFormat, KeyShape, len(parts))
	}
	shape := make([]int, len(parts))
	for i, p := range parts {
		d, err := strconv.Atoi(p)
		if err != nil || d < 0 || d > 1<<40 {
			return nil, fmt.Errorf("%w: %s=%q", ErrFormat, KeyShape, s)
		}
		shape[i] = d
	}
	return shape, nil
}

func formatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, ",")
}

// tensorShape parses arrow.fixed_shape_tensor's metadata. A permutation other than the
// identity changes the meaning of the values' order, which mlfeed cannot keep.
func tensorShape(meta string) ([]int, error) {
	var m struct {
		Shape       []int `json:"shape"`
		Permutation []int `json:"permutation"`
	}
	if err := json.Unmarshal([]byte(meta), &m); err != nil || m.Shape == nil || len(m.Shape) > 64 {
		return nil, fmt.Errorf("%w: %s metadata %q", ErrFormat, TensorExt, meta)
	}
	for i, p := range m.Permutation {
		if p != i {
			return nil, fmt.Errorf("%w: %s with permutation %v", ErrUnsupported, TensorExt, m.Permutation)
		}
	}
	for _, d := range m.Shape {
		if d < 0 || d > 1<<40 {
			return nil, fmt.Errorf("%w: %s shape %v", ErrFormat, TensorExt, m.Shape)
		}
	}
	return m.Shape, nil
}

// Field returns the Arrow field of stream st: its type (a list of samples when seq) and the
// metadata that gives the stream back.
func Field(st *mlfeed.Stream, seq bool, times string) (arrow.Field, error) {
	leaf, typed := arrowType(st.Type)
	if leaf == nil {
		return arrow.Field{}, fmt.Errorf("%w: stream %q has element type %s", ErrUnsupported, st.Name, st.Type)
	}
	if u, ok := timeUnits[times]; ok && st.Type == mlfeed.DateTime {
		leaf, typed = &arrow.TimestampType{Unit: u}, false
	}
	var keys, vals []string
	add := func(k, v string) { keys, vals = append(keys, k), append(vals, v) }
	add(KeyStorage, st.Storage.String())
	add(KeyDim, strconv.Itoa(st.Dim))
	if typed {
		add(KeyType, st.Type.String())
	}
	if st.Shape != nil {
		add(KeyShape, formatShape(st.Shape))
	}
	if st.Alias != "" {
		add(KeyAlias, st.Alias)
	}
	if st.KeyCount != 0 {
		add(KeyKeyCount, strconv.FormatUint(st.KeyCount, 10))
	}
	if st.DefinesMBSize {
		add(KeyDefines, "true")
	}
	var dt arrow.DataType
	switch {
	case st.Storage == mlfeed.Sparse:
		dt = sparseType(leaf)
	case st.Dim == 1 && st.Shape == nil:
		dt = leaf
	case st.Dim == 0:
		// Variable size, or a fixed shape with a zero in it (Arrow has no fixed-size list of
		// size 0): a list, whose mlfeed.shape tells the two apart.
		dt = arrow.ListOfNonNullable(leaf)
	default:
		if st.Dim > 1<<31-1 {
			return arrow.Field{}, fmt.Errorf("%w: stream %q has dim %d, above Arrow's fixed-size list limit", ErrUnsupported, st.Name, st.Dim)
		}
		dt = arrow.FixedSizeListOfNonNullable(int32(st.Dim), leaf)
		if len(st.Shape) > 1 && !seq {
			b, _ := json.Marshal(map[string][]int{"shape": st.Shape})
			add(ExtName, TensorExt)
			add(ExtMeta, string(b))
		}
	}
	if seq {
		dt = arrow.ListOfNonNullable(dt)
		add(KeySequence, "list")
	}
	if len(st.Metadata) > 0 {
		s, err := encodeAnnotations(st.Metadata)
		if err != nil {
			return arrow.Field{}, fmt.Errorf("stream %q: %w", st.Name, err)
		}
		add(KeyMetadata, s)
	}
	return arrow.Field{Name: st.Name, Type: dt, Metadata: arrow.NewMetadata(keys, vals)}, nil
}

func sparseType(leaf arrow.DataType) arrow.DataType {
	return arrow.StructOf(
		arrow.Field{Name: "indices", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
		arrow.Field{Name: "values", Type: arrow.ListOfNonNullable(leaf)},
	)
}

// IDFieldName returns the name of the column that holds sequence ids: "id", or with
// underscores in front until no stream has the name.
func IDFieldName(s *mlfeed.Schema) string {
	name := "id"
	for s.Index(name) >= 0 {
		name = "_" + name
	}
	return name
}

func encodeAnnotations(as []mlfeed.Annotation) (string, error) {
	js, err := mlfeed.AnnotationsToJSON(as)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(js)
	return string(b), err
}

func decodeAnnotations(s string) ([]mlfeed.Annotation, error) {
	var js []mlfeed.AnnotationJSON
	if err := json.Unmarshal([]byte(s), &js); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, KeyMetadata, err)
	}
	as, err := mlfeed.AnnotationsFromJSON(js)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, KeyMetadata, err)
	}
	return as, nil
}
