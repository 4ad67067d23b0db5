package arrowmap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// This file holds what the Arrow and Parquet packages share around the mapping: option
// parsing, the reader's chunk checks and panic catching, and the writer's state.

// HasLists reports whether some column holds a list of samples per row, so that sequence
// lengths need the data decoded.
func (p *Plan) HasLists() bool {
	for _, c := range p.Columns {
		if c.Seq {
			return true
		}
	}
	return false
}

// CheckChunk returns an error naming the format (prefix) and the file unless 0 <= i < n.
func CheckChunk(prefix, name string, i, n int) error {
	if i < 0 || i >= n {
		return fmt.Errorf("%s: %s: chunk %d out of range [0, %d)", prefix, name, i, n)
	}
	return nil
}

// SequenceLengths returns the length of each sequence of chunk i of chunks: ones, unless
// lists (Plan.HasLists), when read decodes the chunk to count them.
func SequenceLengths(prefix, name string, chunks []mlfeed.ChunkInfo, i int, lists bool, read func(context.Context, int) (*mlfeed.Chunk, error)) ([]int64, error) {
	if err := CheckChunk(prefix, name, i, len(chunks)); err != nil {
		return nil, err
	}
	if !lists {
		return mlfeed.Ones(chunks[i].Sequences), nil
	}
	c, err := read(context.Background(), i)
	if err != nil {
		return nil, err
	}
	return mlfeed.LengthsOf(c), nil
}

// Catch, deferred, turns a panic inside arrow-go, which trusts offsets and lengths of the
// data it decodes, into an error naming the file and wrapping formatErr; an allocation the
// budget refused (Allocator) stays ErrTooLarge.
func Catch(name string, formatErr error, err *error) {
	if r := recover(); r != nil {
		if e, ok := r.(error); ok && errors.Is(e, mlfeed.ErrTooLarge) {
			*err = mlfeed.OffsetError(name, -1, "", e)
			return
		}
		*err = mlfeed.OffsetError(name, -1, "", fmt.Errorf("%w: malformed data (%v)", formatErr, r))
	}
}

// Choice returns params[key] checked against want ("" is always allowed), or a usage error
// naming the format (prefix) and the option.
func Choice(prefix string, params map[string]string, key string, want ...string) (string, error) {
	v := params[key]
	if v == "" {
		return v, nil
	}
	for _, w := range want {
		if v == w {
			return v, nil
		}
	}
	return "", format.UsageErrorf("%s: option %s=%q: want %s", prefix, key, v, orList(want))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ParseLists parses the reader option lists (fixed or variable) and reports whether list
// columns without mlfeed metadata are read as variable-size samples.
func ParseLists(prefix string, params map[string]string) (bool, error) {
	v, err := Choice(prefix, params, "lists", "fixed", "variable")
	return v == "variable", err
}

// ColumnsParam is the reader option that selects columns, as ParseColumns parses it.
var ColumnsParam = format.Param{Name: "columns", Doc: "NAME,NAME,...: the columns to read, in stream order (default: every column); the others are not read, whatever their type", Selects: true}

// ParseColumns parses the reader option columns: names separated by commas, none empty or
// given twice; nil when absent.
func ParseColumns(prefix string, params map[string]string) ([]string, error) {
	v, ok := params["columns"]
	if !ok {
		return nil, nil
	}
	names := strings.Split(v, ",")
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			return nil, format.UsageErrorf("%s: columns %q: each column named once, none empty (NAME,NAME,...)", prefix, v)
		}
		seen[n] = true
	}
	return names, nil
}

// Select returns the indices of the fields that hold the columns named (Plan.Pick keeps the
// streams they name): a field of that name, or the struct field whose name and a dot start it
// ("image.bytes" is in field "image"), each once, in the order first named, then the field
// holding sequence ids (KeyRole "id"), if there is one and it is not named; nil (every field)
// when names is empty. A name no field holds, or a name more than one field has, is a usage
// error listing the columns there are.
func Select(names []string, fields []arrow.Field) ([]int, error) {
	if len(names) == 0 {
		return nil, nil
	}
	at := make(map[string]int, len(fields))
	id := -1
	for i, f := range fields {
		if _, dup := at[f.Name]; dup {
			at[f.Name] = -1
		} else {
			at[f.Name] = i
		}
		if k := f.Metadata.FindKey(KeyRole); k >= 0 && f.Metadata.Values()[k] == "id" && id < 0 {
			id = i
		}
	}
	out := make([]int, 0, len(names)+1)
	for _, n := range names {
		i, ok := at[n]
		for k := len(n) - 1; !ok && k > 0; k-- { // the longest field name before a dot
			if n[k] == '.' {
				if j, isField := at[n[:k]]; isField && j >= 0 {
					if _, isStruct := storageType(fields[j].Type).(*arrow.StructType); isStruct {
						i, ok = j, true
					}
				}
			}
		}
		switch {
		case !ok:
			have := make([]string, len(fields))
			for k, f := range fields {
				have[k] = strconv.Quote(f.Name)
			}
			return nil, fmt.Errorf("%w: no column %q (the columns: %s)", format.ErrUsage, n, strings.Join(have, ", "))
		case i < 0:
			return nil, fmt.Errorf("%w: column name %q is given to more than one column", format.ErrUsage, n)
		}
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
		if i == id {
			id = -1
		}
	}
	if id >= 0 {
		out = append(out, id)
	}
	return out, nil
}

// ParseBool parses a true-or-false option, def when absent.
func ParseBool(prefix string, params map[string]string, key string, def bool) (bool, error) {
	v, err := Choice(prefix, params, key, "true", "false")
	if v == "" {
		return def, err
	}
	return v == "true", err
}

// ParseTimeUnit parses the writer option time_unit (Layout.TimeUnit), one of units.
func ParseTimeUnit(prefix string, params map[string]string, units ...string) (string, error) {
	return Choice(prefix, params, "time_unit", units...)
}

// ParseSequences parses the writer option sequences (auto or list).
func ParseSequences(prefix string, params map[string]string) (string, error) {
	return Choice(prefix, params, "sequences", "auto", "list")
}

// ParseCompression returns the writer's codec: the option compression, else o.Compress,
// checked against codecs (the first of which is the default).
func ParseCompression(prefix string, o *format.WriteOptions, params map[string]string, codecs ...string) (string, error) {
	c := o.Compress
	if v, ok := params["compression"]; ok {
		c = v
	}
	if c == "" {
		return c, nil
	}
	for _, w := range codecs {
		if c == w {
			return c, nil
		}
	}
	return "", format.UsageErrorf("%s: compression %q: want %s", prefix, c, orList(codecs))
}

// CheckCompat refuses any compatibility mode: neither format has one.
func CheckCompat(prefix string, o *format.WriteOptions) error {
	if o.Compat != "" {
		return format.UsageErrorf("%s: no compatibility modes (compat %q)", prefix, o.Compat)
	}
	return nil
}

// Openers returns a format's registry Open and OpenReader from its option parser and its
// constructors. A nil *format.Options is parsed like the zero value's default.
func Openers[O any, R mlfeed.Source](parse func(*format.Options) (O, error),
	open func(string, O) (R, error), newReader func(io.ReaderAt, int64, string, O) (R, error)) (
	func(string, *format.Options) (mlfeed.Source, error),
	func(io.ReaderAt, int64, string, *format.Options) (mlfeed.Source, error)) {
	openFn := func(name string, o *format.Options) (mlfeed.Source, error) {
		ro, err := parse(o)
		if err != nil {
			return nil, err
		}
		rd, err := open(name, ro)
		if err != nil {
			return nil, err
		}
		return rd, nil
	}
	// The reader reads the ranges it needs of r (an object in object storage).
	readerFn := func(r io.ReaderAt, size int64, name string, o *format.Options) (mlfeed.Source, error) {
		ro, err := parse(o)
		if err != nil {
			return nil, err
		}
		rd, err := newReader(r, size, name, ro)
		if err != nil {
			return nil, err
		}
		return rd, nil
	}
	return openFn, readerFn
}

// Sink is the state the Arrow and Parquet writers share: the encoder, made from the first
// chunk (or from none, for a file without chunks), and the first error, which every later
// call returns.
type Sink struct {
	prefix string
	schema mlfeed.Schema
	layout Layout
	mapErr func(error) error
	enc    *Encoder
	err    error
	closed bool
}

// NewSink checks that schema can be encoded with layout ly and returns the writer state;
// mapErr wraps the mapping's errors in the package's sentinels, prefix names the format in
// messages.
func NewSink(prefix string, schema mlfeed.Schema, ly Layout, mapErr func(error) error) (*Sink, error) {
	// Check the schema now: a stream the format cannot hold fails before any data is written.
	if _, err := NewEncoder(schema, nil, ly); err != nil {
		return nil, mapErr(err)
	}
	return &Sink{prefix: prefix, schema: schema, layout: ly, mapErr: mapErr}, nil
}

// Encoder returns the encoder, nil before the first chunk or Close.
func (s *Sink) Encoder() *Encoder { return s.enc }

func (s *Sink) start(first *mlfeed.Chunk, begin func(*Encoder) error) error {
	enc, err := NewEncoder(s.schema, first, s.layout)
	if err != nil {
		return s.mapErr(err)
	}
	s.enc = enc
	return begin(enc)
}

// WriteChunk encodes c as one record batch and hands it to write; begin starts the file with
// the encoder before the first. An error of begin or write is kept and returned by every
// later call.
func (s *Sink) WriteChunk(c *mlfeed.Chunk, begin func(*Encoder) error, write func(arrow.RecordBatch) error) error {
	if s.err != nil {
		return s.err
	}
	if s.enc == nil {
		if s.err = s.start(c, begin); s.err != nil {
			return s.err
		}
	}
	rec, err := s.enc.Record(c)
	if err != nil {
		return s.mapErr(err)
	}
	defer rec.Release()
	s.err = write(rec)
	return s.err
}

// Close starts the file with begin if no chunk was written, then ends it with finish. After
// it every call but Close fails.
func (s *Sink) Close(begin func(*Encoder) error, finish func() error) error {
	if s.closed {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if s.enc == nil {
		if s.err = s.start(nil, begin); s.err != nil {
			return s.err
		}
	}
	if s.err = finish(); s.err != nil {
		return s.err
	}
	s.closed = true
	s.err = fmt.Errorf("%s: writer closed", s.prefix)
	return nil
}
