package binsparse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
)

// Descriptor is a Binsparse JSON descriptor: what a matrix's arrays mean.
type Descriptor struct {
	// Version is the specification version the file states ("0.1", "0.1.0"); empty when the
	// file states none (2023-era files). Marshal writes Version (the package constant).
	Version string
	// Format is a predefined format (aliases normalized: COO is COOR, DMAT is DMATR), or
	// Custom when the arrays follow Custom's levels.
	Format Format
	// Custom describes a custom level format; it is set for Format Custom and for files whose
	// format key is absent (the C reference's tensors).
	Custom *Levels
	// Shape is the logical shape: [n] for vectors, [rows, cols] for matrices whatever the
	// orientation, one entry per dimension for tensors.
	Shape []int64
	// NumberOfStoredValues is the number of stored values (for iso values: stored indices;
	// for symmetric matrices: stored, not logical, entries), or -1 when the file omits it.
	NumberOfStoredValues int64
	// DataTypes maps each array name ("values", "indices_0", "pointers_to_1", "fill_value")
	// to its type.
	DataTypes map[string]DataType
	// Fill reports whether the fill_value array gives the value of unstored entries (else 0).
	Fill bool
	// Structure is the declared structure; General when absent.
	Structure Structure
	// Attributes holds the optional "attributes" object (number_of_diagonal_elements, ...),
	// raw, or nil.
	Attributes map[string]json.RawMessage
	// Extra holds other keys found inside the binsparse object (Finch's pre-spec "tensor" and
	// "attrs"), raw. They are written back only when the matrix is written unchanged.
	Extra map[string]json.RawMessage
	// User holds the keys outside the binsparse object ("comment", "metadata", ...), raw.
	// They are preserved on round trip.
	User map[string]json.RawMessage
	// Unwrapped reports that the file stored the bare inner object (the Python
	// implementations) rather than {"binsparse": {...}}.
	Unwrapped bool
}

// LevelKind is the kind of one level of a custom format.
type LevelKind string

// The level kinds.
const (
	LevelElement LevelKind = "element"
	LevelDense   LevelKind = "dense"
	LevelSparse  LevelKind = "sparse"
)

// Level is one dense or sparse level of a custom format; it covers Rank dimensions.
type Level struct {
	Kind LevelKind // LevelDense or LevelSparse
	Rank int       // the number of dimensions the level covers
}

// Levels is a custom format: the dense and sparse levels from the root down (the element level
// that ends every format is implied), and Transpose, which maps stored dimension k to logical
// dimension Transpose[k] (nil means the identity).
type Levels struct {
	Levels    []Level // from the root down, without the element level
	Transpose []int   // stored dimension k is logical dimension Transpose[k]; nil: identity
}

// Rank returns the number of dimensions the levels cover.
func (l *Levels) Rank() int {
	n := 0
	for _, lv := range l.Levels {
		n += lv.Rank
	}
	return n
}

// perm returns Transpose, or the identity for rank n when Transpose is nil.
func (l *Levels) perm(n int) []int {
	if l.Transpose != nil {
		return l.Transpose
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// predefined returns the levels of a predefined format.
func predefined(f Format) *Levels {
	d1, s1, s2 := Level{LevelDense, 1}, Level{LevelSparse, 1}, Level{LevelSparse, 2}
	tr := []int{1, 0}
	switch f {
	case DVEC:
		return &Levels{Levels: []Level{d1}}
	case CVEC:
		return &Levels{Levels: []Level{s1}}
	case DMATR:
		return &Levels{Levels: []Level{d1, d1}}
	case DMATC:
		return &Levels{Levels: []Level{d1, d1}, Transpose: tr}
	case CSR:
		return &Levels{Levels: []Level{d1, s1}}
	case CSC:
		return &Levels{Levels: []Level{d1, s1}, Transpose: tr}
	case DCSR:
		return &Levels{Levels: []Level{s1, s1}}
	case DCSC:
		return &Levels{Levels: []Level{s1, s1}, Transpose: tr}
	case COOR:
		return &Levels{Levels: []Level{s2}}
	case COOC:
		return &Levels{Levels: []Level{s2}, Transpose: tr}
	}
	return nil
}

// alias returns the predefined format equal to l, or "".
func (l *Levels) alias() Format {
	for _, f := range []Format{DVEC, CVEC, DMATR, DMATC, CSR, CSC, DCSR, DCSC, COOR, COOC} {
		p := predefined(f)
		if len(p.Levels) != len(l.Levels) {
			continue
		}
		same := true
		for i := range p.Levels {
			same = same && p.Levels[i] == l.Levels[i]
		}
		a, b := p.perm(p.Rank()), l.perm(l.Rank())
		if len(a) != len(b) {
			continue
		}
		for i := range a {
			same = same && a[i] == b[i]
		}
		if same {
			return f
		}
	}
	return ""
}

// arrays returns the names of the arrays the levels need, in order, ending with "values".
func (l *Levels) arrays() []string {
	var names []string
	d := 0
	for i, lv := range l.Levels {
		if lv.Kind == LevelSparse {
			if i > 0 {
				names = append(names, fmt.Sprintf("pointers_to_%d", d))
			}
			for k := 0; k < lv.Rank; k++ {
				names = append(names, fmt.Sprintf("indices_%d", d+k))
			}
		}
		d += lv.Rank
	}
	return append(names, "values")
}

// LevelsOf returns the levels the descriptor's arrays follow: Custom, or the predefined
// format's.
func (d *Descriptor) LevelsOf() *Levels {
	if d.Custom != nil {
		return d.Custom
	}
	return predefined(d.Format)
}

// Arrays returns the names of the arrays the descriptor's format needs, plus "fill_value" when
// the descriptor lists it.
func (d *Descriptor) Arrays() []string {
	names := d.LevelsOf().arrays()
	if _, ok := d.DataTypes["fill_value"]; ok {
		names = append(names, "fill_value")
	}
	return names
}

// ValueType returns the type of the values array.
func (d *Descriptor) ValueType() DataType { return d.DataTypes["values"] }

// Rows returns the number of rows (shape[0]; 1 for vectors).
func (d *Descriptor) Rows() int64 {
	if len(d.Shape) == 1 {
		return 1
	}
	return d.Shape[0]
}

// IsDense reports whether every level of the format is dense.
func (d *Descriptor) IsDense() bool {
	for _, lv := range d.LevelsOf().Levels {
		if lv.Kind != LevelDense {
			return false
		}
	}
	return true
}

// versionParts returns the numbers of a version MAJOR.MINOR or MAJOR.MINOR.PATCH, each one or
// more ASCII digits (as written, not parsed), or ok false for anything else.
func versionParts(v string) (parts []string, ok bool) {
	parts = strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return nil, false
		}
	}
	return parts, true
}

// maxRank bounds the dimensions a descriptor may declare.
const maxRank = 32

// ParseDescriptor parses and checks a descriptor: the wrapped form {"binsparse": {...}, user
// keys...} or the bare inner object. It accepts versions "0.1" and "0.1.x" and a missing
// version or number_of_stored_values (2023-era files). Errors wrap ErrFormat, or
// ErrUnsupported for a version this package does not know.
func ParseDescriptor(data []byte) (*Descriptor, error) {
	data = bytes.TrimRight(data, "\x00 \t\r\n")
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: descriptor is not a JSON object: %v", ErrFormat, err)
	}
	d := &Descriptor{NumberOfStoredValues: -1}
	inner := top
	if raw, ok := top["binsparse"]; ok {
		inner = nil
		if err := json.Unmarshal(raw, &inner); err != nil || inner == nil {
			return nil, fmt.Errorf("%w: descriptor: \"binsparse\" is not a JSON object", ErrFormat)
		}
		delete(top, "binsparse")
		if len(top) > 0 {
			d.User = top
		}
	} else if top == nil || (top["format"] == nil && top["data_types"] == nil && top["custom"] == nil) {
		return nil, fmt.Errorf("%w: descriptor has no \"binsparse\" object and no format or data_types", ErrFormat)
	} else {
		d.Unwrapped = true
	}
	if err := d.parseInner(inner); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Descriptor) parseInner(in map[string]json.RawMessage) error {
	str := func(key string) (string, bool, error) {
		raw, ok := in[key]
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", true, fmt.Errorf("%w: descriptor: %q must be a string", ErrFormat, key)
		}
		return s, true, nil
	}
	v, ok, err := str("version")
	if err != nil {
		return err
	}
	if ok {
		parts, ok := versionParts(v)
		if !ok || parts[0] != "0" || parts[1] != "1" {
			if strings.HasPrefix(v, "0.1") || !ok {
				return fmt.Errorf("%w: descriptor: malformed version %q", ErrFormat, v)
			}
			return fmt.Errorf("%w: Binsparse version %q (this reader knows 0.1)", ErrUnsupported, v)
		}
		d.Version = v
	}
	f, hasFormat, err := str("format")
	if err != nil {
		return err
	}
	if hasFormat {
		ft, ok := parseFormat(f)
		if !ok {
			return fmt.Errorf("%w: unknown Binsparse format %q", ErrUnsupported, f)
		}
		d.Format = ft
	}
	if raw, ok := in["custom"]; ok && (!hasFormat || d.Format == Custom) {
		if d.Custom, err = parseCustom(raw); err != nil {
			return err
		}
	} else if raw, ok := in["tensor"]; ok && (!hasFormat || d.Format == Custom) {
		if d.Custom, err = parseCustom(raw); err != nil {
			return err
		}
	}
	switch {
	case d.Format == Custom && d.Custom == nil:
		return fmt.Errorf("%w: descriptor: format \"custom\" without a \"custom\" object", ErrFormat)
	case !hasFormat && d.Custom == nil:
		return fmt.Errorf("%w: descriptor has no format", ErrFormat)
	case !hasFormat:
		d.Format = Custom
	}
	if d.Format == Custom {
		if a := d.Custom.alias(); a != "" {
			d.Format, d.Custom = a, nil
		}
	}
	raw, ok := in["shape"]
	if !ok {
		return fmt.Errorf("%w: descriptor has no shape", ErrFormat)
	}
	if err := json.Unmarshal(raw, &d.Shape); err != nil || d.Shape == nil {
		return fmt.Errorf("%w: descriptor: shape must be a list of non-negative integers", ErrFormat)
	}
	for _, s := range d.Shape {
		if s < 0 {
			return fmt.Errorf("%w: descriptor: negative shape %v", ErrFormat, d.Shape)
		}
	}
	if want := d.LevelsOf().Rank(); len(d.Shape) != want {
		return fmt.Errorf("%w: descriptor: shape %v has %d dimensions, format %s has %d", ErrFormat, d.Shape, len(d.Shape), d.Format, want)
	}
	if raw, ok := in["number_of_stored_values"]; ok {
		if err := json.Unmarshal(raw, &d.NumberOfStoredValues); err != nil || d.NumberOfStoredValues < 0 {
			return fmt.Errorf("%w: descriptor: number_of_stored_values must be a non-negative integer", ErrFormat)
		}
	}
	var types map[string]string
	raw, ok = in["data_types"]
	if !ok {
		return fmt.Errorf("%w: descriptor has no data_types", ErrFormat)
	}
	if err := json.Unmarshal(raw, &types); err != nil || types == nil {
		return fmt.Errorf("%w: descriptor: data_types must map array names to type strings", ErrFormat)
	}
	d.DataTypes = make(map[string]DataType, len(types))
	for name, ts := range types {
		t, err := ParseDataType(ts)
		if err != nil {
			return fmt.Errorf("%w (array %s)", err, name)
		}
		d.DataTypes[name] = t
	}
	if raw, ok := in["fill"]; ok {
		if err := json.Unmarshal(raw, &d.Fill); err != nil {
			return fmt.Errorf("%w: descriptor: fill must be true or false", ErrFormat)
		}
	}
	if s, ok, err := str("structure"); err != nil {
		return err
	} else if ok {
		st, ok := parseStructure(s)
		if !ok {
			return fmt.Errorf("%w: unknown structure %q", ErrUnsupported, s)
		}
		d.Structure = st
	}
	if raw, ok := in["attributes"]; ok {
		if err := json.Unmarshal(raw, &d.Attributes); err != nil {
			return fmt.Errorf("%w: descriptor: attributes must be an object", ErrFormat)
		}
	}
	known := map[string]bool{"version": true, "format": true, "custom": true, "shape": true,
		"number_of_stored_values": true, "data_types": true, "fill": true, "structure": true, "attributes": true}
	if d.Custom != nil {
		known["tensor"] = in["custom"] == nil
	}
	for k, v := range in {
		if !known[k] {
			if d.Extra == nil {
				d.Extra = map[string]json.RawMessage{}
			}
			d.Extra[k] = v
		}
	}
	return d.check()
}

// check verifies what the descriptor says about itself: arrays named by data_types, value
// types, structures.
func (d *Descriptor) check() error {
	need := d.LevelsOf().arrays()
	for _, n := range need {
		t, ok := d.DataTypes[n]
		if !ok {
			return fmt.Errorf("%w: descriptor: data_types lacks %q, which format %s needs", ErrFormat, n, d.Format)
		}
		if n != "values" && (t.Iso || !t.Type.IsInteger()) {
			return fmt.Errorf("%w: descriptor: %s must have an integer type, not %s", ErrFormat, n, t)
		}
	}
	for n := range d.DataTypes {
		if n != "fill_value" && !contains(need, n) {
			return fmt.Errorf("%w: descriptor: data_types lists %q, which format %s does not have", ErrFormat, n, d.Format)
		}
	}
	if f, ok := d.DataTypes["fill_value"]; ok && f.Iso {
		return fmt.Errorf("%w: descriptor: fill_value cannot be iso", ErrFormat)
	}
	if d.Structure != General {
		if len(d.Shape) != 2 || d.Shape[0] != d.Shape[1] {
			return fmt.Errorf("%w: descriptor: structure %s needs a square matrix, shape is %v", ErrFormat, d.Structure, d.Shape)
		}
		if strings.HasPrefix(string(d.Structure), "hermitian") {
			if t := d.ValueType().Type; t != mlfeed.Complex64 && t != mlfeed.Complex128 {
				return fmt.Errorf("%w: descriptor: structure %s needs complex values, not %s", ErrFormat, d.Structure, d.ValueType())
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// levelJSON is a level object as files write it; Finch's 2024 files say level_kind.
type levelJSON struct {
	Desc  string          `json:"level_desc"`
	Kind  string          `json:"level_kind"`
	Rank  *int            `json:"rank"`
	Level json.RawMessage `json:"level"`
}

func parseCustom(raw json.RawMessage) (*Levels, error) {
	var c struct {
		Level     json.RawMessage `json:"level"`
		Transpose []int           `json:"transpose"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.Level == nil {
		return nil, fmt.Errorf("%w: descriptor: custom must be an object with a level", ErrFormat)
	}
	l := &Levels{Transpose: c.Transpose}
	next := c.Level
	for depth := 0; ; depth++ {
		if depth > maxRank+1 {
			return nil, fmt.Errorf("%w: descriptor: custom levels nest deeper than %d", ErrUnsupported, maxRank)
		}
		var lv levelJSON
		if err := json.Unmarshal(next, &lv); err != nil {
			return nil, fmt.Errorf("%w: descriptor: custom level %d is not an object", ErrFormat, depth)
		}
		kind := lv.Desc
		if kind == "" {
			kind = lv.Kind
		}
		switch LevelKind(kind) {
		case LevelElement:
			if lv.Level != nil && string(lv.Level) != "null" {
				return nil, fmt.Errorf("%w: descriptor: custom element level %d has a level below it", ErrFormat, depth)
			}
			return l, l.check()
		case LevelDense, LevelSparse:
			if lv.Rank == nil || *lv.Rank < 1 || *lv.Rank > maxRank {
				return nil, fmt.Errorf("%w: descriptor: custom level %d (%s) needs a rank from 1 to %d", ErrFormat, depth, kind, maxRank)
			}
			if lv.Level == nil {
				return nil, fmt.Errorf("%w: descriptor: custom level %d (%s) has no level below it", ErrFormat, depth, kind)
			}
			l.Levels = append(l.Levels, Level{LevelKind(kind), *lv.Rank})
			next = lv.Level
		default:
			return nil, fmt.Errorf("%w: descriptor: custom level %d has unknown kind %q", ErrUnsupported, depth, kind)
		}
	}
}

func (l *Levels) check() error {
	n := l.Rank()
	if n == 0 {
		return fmt.Errorf("%w: descriptor: custom format has no dense or sparse level", ErrFormat)
	}
	if n > maxRank {
		return fmt.Errorf("%w: descriptor: custom format has %d dimensions (limit %d)", ErrUnsupported, n, maxRank)
	}
	if l.Transpose != nil {
		if len(l.Transpose) != n {
			return fmt.Errorf("%w: descriptor: transpose %v has %d entries for %d dimensions", ErrFormat, l.Transpose, len(l.Transpose), n)
		}
		seen := make([]bool, n)
		for _, p := range l.Transpose {
			if p < 0 || p >= n || seen[p] {
				return fmt.Errorf("%w: descriptor: transpose %v is not a permutation", ErrFormat, l.Transpose)
			}
			seen[p] = true
		}
	}
	return nil
}

// Marshal returns the descriptor as the wrapped JSON object {"binsparse": {...}, user keys},
// indented by two spaces, with "version": "0.1" and the keys in the order the reference
// implementations write them.
func (d *Descriptor) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"binsparse":{"version":"` + Version + `"`)
	if d.Format != Custom || d.Custom != nil {
		fmt.Fprintf(&b, `,"format":%q`, string(d.Format))
	}
	if d.Format == Custom {
		if d.Custom == nil {
			return nil, fmt.Errorf("%w: custom format without levels", ErrFormat)
		}
		b.WriteString(`,"custom":`)
		d.Custom.marshal(&b)
	}
	shape, _ := json.Marshal(d.Shape)
	b.WriteString(`,"shape":`)
	b.Write(shape)
	nnz := d.NumberOfStoredValues
	if nnz < 0 {
		return nil, fmt.Errorf("%w: descriptor without number_of_stored_values", ErrFormat)
	}
	b.WriteString(`,"number_of_stored_values":` + strconv.FormatInt(nnz, 10))
	b.WriteString(`,"data_types":{`)
	for i, n := range orderedArrays(d.DataTypes) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%q", n, d.DataTypes[n].String())
	}
	b.WriteByte('}')
	if d.Fill {
		b.WriteString(`,"fill":true`)
	}
	if d.Structure != General {
		fmt.Fprintf(&b, `,"structure":%q`, string(d.Structure))
	}
	if d.Attributes != nil {
		a, err := json.Marshal(d.Attributes)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"attributes":`)
		b.Write(a)
	}
	if err := writeRawKeys(&b, d.Extra); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	if err := writeRawKeys(&b, d.User); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("%w: descriptor: %v", ErrFormat, err)
	}
	return out.Bytes(), nil
}

func writeRawKeys(b *bytes.Buffer, m map[string]json.RawMessage) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "binsparse" {
			return fmt.Errorf("%w: user key %q is reserved", ErrFormat, k)
		}
		if !json.Valid(m[k]) {
			return fmt.Errorf("%w: user key %q holds invalid JSON", ErrFormat, k)
		}
		kj, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kj)
		b.WriteByte(':')
		b.Write(m[k])
	}
	return nil
}

func (l *Levels) marshal(b *bytes.Buffer) {
	b.WriteByte('{')
	if l.Transpose != nil {
		t, _ := json.Marshal(l.Transpose)
		b.WriteString(`"transpose":`)
		b.Write(t)
		b.WriteByte(',')
	}
	b.WriteString(`"level":`)
	for _, lv := range l.Levels {
		fmt.Fprintf(b, `{"level_desc":%q,"rank":%d,"level":`, string(lv.Kind), lv.Rank)
	}
	b.WriteString(`{"level_desc":"element"}`)
	b.WriteString(strings.Repeat("}", len(l.Levels)))
	b.WriteByte('}')
}

// orderedArrays returns array names as writers order them: values first, then by level.
func orderedArrays(m map[string]DataType) []string {
	rank := func(n string) (int, int) {
		switch {
		case n == "values":
			return 0, 0
		case strings.HasPrefix(n, "indices_"):
			k, _ := strconv.Atoi(n[len("indices_"):])
			return 1 + 2*k, 1
		case strings.HasPrefix(n, "pointers_to_"):
			k, _ := strconv.Atoi(n[len("pointers_to_"):])
			return 1 + 2*k, 0
		}
		return math.MaxInt32, 0
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a1, a2 := rank(names[i])
		b1, b2 := rank(names[j])
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		return names[i] < names[j]
	})
	return names
}
