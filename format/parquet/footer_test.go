package parquet

import (
	"encoding/binary"
	"errors"
)

// The Parquet footer is a Thrift FileMetaData in the compact protocol. A LogicalType is a union;
// a writer newer than arrow-go may set a member arrow-go does not know, which Thrift skips,
// leaving an empty union that arrow-go calls "invalid logical type" and refuses the whole file.
// The Parquet format says readers ignore logical types they do not know and read the column by
// its physical type. withoutUnknownLogicalTypes returns the footer with such logical types
// removed, for arrow-go to read, or nil when it holds none (or is not a footer it can walk).

// Field ids of the Thrift definitions (parquet.thrift).
const (
	fmdSchema        = 2  // FileMetaData.schema: list<SchemaElement>
	elemLogicalType  = 10 // SchemaElement.logicalType: LogicalType
	maxThriftNesting = 64
)

// knownLogical holds the LogicalType members arrow-go reads (STRING=1 ... GEOGRAPHY=18; 9 is
// unused).
var knownLogical = map[int16]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true,
	10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true, 18: true}

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

func withoutUnknownLogicalTypes(footer []byte) []byte {
	w := &walker{b: footer}
	if err := w.structure(0, func(id int16, typ byte) (bool, error) {
		if id != fmdSchema || typ != ctList {
			return false, nil
		}
		n, et, err := w.listHeader()
		if err != nil || et != ctStruct {
			return true, errFooter
		}
		for range n {
			if err := w.structure(1, w.schemaElement); err != nil {
				return true, err
			}
		}
		return true, nil
	}); err != nil || len(w.edits) == 0 {
		return nil
	}
	out := make([]byte, 0, len(footer))
	at := 0
	for _, e := range w.edits {
		out = append(append(out, footer[at:e.from]...), e.repl...)
		at = e.to
	}
	return append(out, footer[at:]...)
}

// schemaElement handles a field of a SchemaElement: an unknown logical type is removed.
func (w *walker) schemaElement(id int16, typ byte) (bool, error) {
	if id != elemLogicalType || typ != ctStruct {
		return false, nil
	}
	known := false
	err := w.structure(2, func(id int16, typ byte) (bool, error) {
		known = known || knownLogical[id]
		return false, nil
	})
	if err == nil && !known {
		err = errUnknown
	}
	return true, err
}

var errUnknown = errors.New("unknown logical type")

// structure walks a struct's fields up to its stop byte. visit may consume a field's value
// itself (true) or leave it to be skipped. A field for which visit returns errUnknown is
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
		if errors.Is(err, errUnknown) { // visit consumed the value
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
