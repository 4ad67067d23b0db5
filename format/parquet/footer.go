package parquet

import (
	"encoding/binary"
	"errors"
)

// The Parquet footer is a Thrift FileMetaData in the compact protocol. Some writers' footers
// break a rule of parquet-go's Thrift definitions that the Parquet format does not make (a
// KeyValue without its optional value); a walker over the footer's bytes finds such places
// and edits them, so that parquet-go reads the footer as the format defines it.

// maxThriftNesting is the deepest nesting of structs and containers the walker follows.
const maxThriftNesting = 64

// Compact protocol types.
const (
	ctStop   = 0
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
)

var errFooter = errors.New("not a footer")

// edit replaces footer bytes [from, to) with repl.
type edit struct {
	from, to int
	repl     []byte
}

type walker struct {
	b     []byte
	pos   int
	edits []edit
}

// apply returns footer with the walker's edits made, or nil when it made none.
func (w *walker) apply(footer []byte) []byte {
	if len(w.edits) == 0 {
		return nil
	}
	out := make([]byte, 0, len(footer)+8*len(w.edits))
	at := 0
	for _, e := range w.edits {
		out = append(append(out, footer[at:e.from]...), e.repl...)
		at = e.to
	}
	return append(out, footer[at:]...)
}

// errRemove, returned by a visit of structure, removes the field it visited.
var errRemove = errors.New("field removed")

// structure walks a struct's fields up to its stop byte. visit may consume a field's value
// itself (true) or leave it to be skipped. A field for which visit returns errRemove is
// removed (its value consumed by visit), and the next field's header rewritten to count from
// the field before it.
func (w *walker) structure(depth int, visit func(id int16, typ byte) (bool, error)) error {
	if depth > maxThriftNesting {
		return errFooter
	}
	var last, kept int16
	removed := false // the previous field was removed
	for {
		start := w.pos
		if w.pos >= len(w.b) {
			return errFooter
		}
		h := w.b[w.pos]
		w.pos++
		typ := h & 0x0f
		if typ == ctStop {
			return nil
		}
		id := last + int16(h>>4)
		if h>>4 == 0 {
			v, err := w.varint()
			if err != nil {
				return err
			}
			id = int16(zigzag(v))
		} else if removed {
			// The header counts from the removed field: count from the one before it.
			w.edits = append(w.edits, edit{start, w.pos, fieldHeader(kept, id, typ)})
		}
		removed = false
		last = id
		done, err := visit(id, typ)
		if errors.Is(err, errRemove) { // visit consumed the value
			w.edits = append(w.edits, edit{start, w.pos, nil})
			removed = true
			continue
		}
		if err != nil {
			return err
		}
		if !done {
			if err := w.skip(typ, depth); err != nil {
				return err
			}
		}
		kept = id
	}
}

// fieldHeader encodes the header of field id of type typ after field prev.
func fieldHeader(prev, id int16, typ byte) []byte {
	if d := id - prev; d > 0 && d <= 15 {
		return []byte{byte(d)<<4 | typ}
	}
	return binary.AppendUvarint([]byte{typ}, uint64(int64(id)<<1^int64(id)>>15))
}

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

func (w *walker) varint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.pos:])
	if n <= 0 {
		return 0, errFooter
	}
	w.pos += n
	return v, nil
}

// listHeader reads a list's or set's size and element type.
func (w *walker) listHeader() (int, byte, error) {
	if w.pos >= len(w.b) {
		return 0, 0, errFooter
	}
	h := w.b[w.pos]
	w.pos++
	n := uint64(h >> 4)
	if n == 15 {
		var err error
		if n, err = w.varint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(len(w.b)-w.pos) { // every element takes a byte at least
		return 0, 0, errFooter
	}
	return int(n), h & 0x0f, nil
}

// skip passes over a value of type typ.
func (w *walker) skip(typ byte, depth int) error {
	if depth > maxThriftNesting {
		return errFooter
	}
	switch typ {
	case ctTrue, ctFalse:
		return nil // in a field header; list elements of bool are read as ctByte below
	case ctByte:
		w.pos++
	case ctI16, ctI32, ctI64:
		_, err := w.varint()
		return err
	case ctDouble:
		w.pos += 8
	case ctBinary:
		n, err := w.varint()
		if err != nil || n > uint64(len(w.b)-w.pos) {
			return errFooter
		}
		w.pos += int(n)
	case ctList, ctSet:
		n, et, err := w.listHeader()
		if err != nil {
			return err
		}
		if et == ctTrue || et == ctFalse {
			et = ctByte
		}
		for range n {
			if err := w.skip(et, depth+1); err != nil {
				return err
			}
		}
	case ctMap:
		n, err := w.varint()
		if err != nil || n > uint64(len(w.b)-w.pos) {
			return errFooter
		}
		if n == 0 {
			return nil
		}
		if w.pos >= len(w.b) {
			return errFooter
		}
		kt, vt := w.b[w.pos]>>4, w.b[w.pos]&0x0f
		w.pos++
		for _, t := range []*byte{&kt, &vt} {
			if *t == ctTrue || *t == ctFalse {
				*t = ctByte
			}
		}
		for range n {
			if err := w.skip(kt, depth+1); err != nil {
				return err
			}
			if err := w.skip(vt, depth+1); err != nil {
				return err
			}
		}
	case ctStruct:
		return w.structure(depth+1, func(int16, byte) (bool, error) { return false, nil })
	default:
		return errFooter
	}
	if w.pos > len(w.b) {
		return errFooter
	}
	return nil
}

// Field ids of the Thrift definitions (parquet.thrift) on the way to KeyValues.
const (
	fmdRowGroups = 4 // FileMetaData.row_groups: list<RowGroup>
	fmdKeyValue  = 5 // FileMetaData.key_value_metadata: list<KeyValue>
	rgColumns    = 1 // RowGroup.columns: list<ColumnChunk>
	ccMetaData   = 3 // ColumnChunk.meta_data: ColumnMetaData
	cmdKeyValue  = 8 // ColumnMetaData.key_value_metadata: list<KeyValue>
	kvValue      = 2 // KeyValue.value: binary, optional
)

// withKeyValueValues returns the footer with an empty value given to every KeyValue (of the
// file's metadata and of each column chunk's) that has none, or nil when every KeyValue has
// one (or the footer is not one the walker can read). The Parquet format makes the value
// optional; parquet-go requires it and refuses the whole footer without it (the Parquet
// project's column_chunk_key_value_metadata.parquet, which DuckDB reads). Keys without values
// are of no use to this package, which looks up its own keys only.
func withKeyValueValues(footer []byte) []byte {
	w := &walker{b: footer}
	list := func(each func() error) error {
		n, et, err := w.listHeader()
		if err != nil || et != ctStruct {
			return errFooter
		}
		for range n {
			if err := each(); err != nil {
				return err
			}
		}
		return nil
	}
	keyValues := func() error { return list(w.keyValue) }
	meta := func(id int16, typ byte) (bool, error) {
		if id != cmdKeyValue || typ != ctList {
			return false, nil
		}
		return true, keyValues()
	}
	chunk := func(id int16, typ byte) (bool, error) {
		if id != ccMetaData || typ != ctStruct {
			return false, nil
		}
		return true, w.structure(3, meta)
	}
	group := func(id int16, typ byte) (bool, error) {
		if id != rgColumns || typ != ctList {
			return false, nil
		}
		return true, list(func() error { return w.structure(2, chunk) })
	}
	err := w.structure(0, func(id int16, typ byte) (bool, error) {
		switch {
		case id == fmdKeyValue && typ == ctList:
			return true, keyValues()
		case id == fmdRowGroups && typ == ctList:
			return true, list(func() error { return w.structure(1, group) })
		}
		return false, nil
	})
	if err != nil {
		return nil
	}
	return w.apply(footer)
}

// keyValue walks a KeyValue struct and, where it has no value, inserts an empty one before
// its stop byte.
func (w *walker) keyValue() error {
	var last int16
	value := false
	err := w.structure(4, func(id int16, typ byte) (bool, error) {
		last, value = id, value || id == kvValue
		return false, nil
	})
	if err == nil && !value {
		stop := w.pos - 1 // structure returns past the stop byte
		w.edits = append(w.edits, edit{stop, stop, append(fieldHeader(last, kvValue, ctBinary), 0)})
	}
	return err
}
