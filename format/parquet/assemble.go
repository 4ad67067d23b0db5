package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlfeed/mlfeed"
)

// leafData is one leaf column of a row group, every page decoded and joined: its levels (nil
// where the column's maximum level is 0) and its non-null values.
type leafData struct {
	n        int    // level entries (values and nulls)
	def, rep []byte // levels, n each, or nil
	// values: fixed-width values little-endian, width bytes each (booleans one byte each);
	// byte arrays as data and offsets (count+1).
	data    []byte
	offsets []uint32
	width   int
	count   int      // non-null values
	owned   bool     // data is this leafData's own memory, not a page's
	defs    [256]int // how many entries have each definition level
	capHint int      // the bytes the chunk's values take, from the footer
}

// newLeaf returns an empty leafData for leaf column n.
func newLeaf(n *node) *leafData {
	ld := &leafData{width: leafWidth(n)}
	if ld.width == 0 {
		ld.offsets = []uint32{0}
	}
	return ld
}

// leafWidth returns the bytes a value of leaf column n takes as read (a boolean one), or 0
// for byte arrays.
func leafWidth(n *node) int {
	switch n.el.Type.V {
	case format.Boolean:
		return 1
	case format.Int32, format.Float:
		return 4
	case format.Int64, format.Double:
		return 8
	case format.Int96:
		return 12
	case format.FixedLenByteArray:
		return int(n.el.TypeLength.V)
	}
	return 0
}

// readLeaf reads every page of column chunk cc of leaf column n, which holds about values
// values (from the footer).
func readLeaf(cc pq.ColumnChunk, n *node, values int64) (*leafData, error) {
	ld := newLeaf(n)
	ld.capHint = int(values) * ld.width
	if n.rep > 0 {
		ld.rep = make([]byte, 0, values)
	}
	if n.def > 0 {
		ld.def = make([]byte, 0, values)
	}
	pages := cc.Pages()
	defer pages.Close()
	first := true
	for {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if err := ld.add(p, n, first); err != nil {
			return nil, err
		}
		first = false
	}
	return ld, nil
}

// add appends page p's levels and values.
func (ld *leafData) add(p pq.Page, n *node, first bool) error {
	k := int(p.NumValues())
	if k < 0 {
		return fmt.Errorf("%w: page of %d values", ErrFormat, k)
	}
	if n.rep > 0 {
		r := p.RepetitionLevels()
		if len(r) != k {
			return fmt.Errorf("%w: %d repetition levels for %d values", ErrFormat, len(r), k)
		}
		ld.rep = append(ld.rep, r...)
	}
	count := k
	if n.def > 0 {
		d := p.DefinitionLevels()
		if len(d) != k {
			return fmt.Errorf("%w: %d definition levels for %d values", ErrFormat, len(d), k)
		}
		ld.def = append(ld.def, d...)
		m := byte(n.def)
		var hist [256]int
		for _, v := range d {
			hist[v]++
		}
		for v := int(m) + 1; v < len(hist); v++ {
			if hist[v] > 0 {
				return fmt.Errorf("%w: definition level %d above the column's %d", ErrFormat, v, m)
			}
		}
		for v, c := range hist {
			ld.defs[v] += c
		}
		count = hist[m]
	}
	ld.n += k
	vals := p.Data()
	if dict := p.Dictionary(); dict != nil {
		dv := dict.Page().Data()
		dd, doff := dv.Data()
		return ld.addIndexed(vals.Int32(), dd, doff, count)
	}
	data, offsets := vals.Data()
	switch {
	case n.el.Type.V == format.Boolean:
		if len(data)*8 < count {
			return fmt.Errorf("%w: %d booleans in a page of %d values", ErrFormat, len(data)*8, count)
		}
		for i := range count {
			ld.data = append(ld.data, data[i>>3]>>(i&7)&1)
		}
	case ld.width > 0:
		if len(data) < count*ld.width {
			return fmt.Errorf("%w: %d bytes of values in a page of %d values", ErrFormat, len(data), count)
		}
		switch {
		case first:
			ld.data = data[:count*ld.width] // the page's own memory: no copy for one page
		case !ld.owned:
			own := make([]byte, len(ld.data), max(ld.capHint, 2*len(ld.data))+count*ld.width)
			copy(own, ld.data)
			ld.data, ld.owned = append(own, data[:count*ld.width]...), true
		default:
			ld.data = append(ld.data, data[:count*ld.width]...)
		}
	default:
		if len(offsets) < count+1 {
			return fmt.Errorf("%w: %d offsets in a page of %d values", ErrFormat, len(offsets), count)
		}
		base := ld.offsets[len(ld.offsets)-1]
		start := offsets[0]
		for _, o := range offsets[1 : count+1] {
			if o < start || int(o) > len(data) {
				return fmt.Errorf("%w: byte array offset %d out of %d bytes", ErrFormat, o, len(data))
			}
			if uint64(base)+uint64(o-start) > math.MaxInt32 {
				return fmt.Errorf("%w: more than 2 GiB of text in a row group", ErrFormat)
			}
			ld.offsets = append(ld.offsets, base+o-start)
		}
		ld.data = append(ld.data, data[start:offsets[count]]...)
	}
	ld.count += count
	return nil
}

// addIndexed appends dictionary-encoded values: the indexes ix into the dictionary page's
// values (data, with offsets for byte arrays).
func (ld *leafData) addIndexed(ix []int32, data []byte, offsets []uint32, count int) error {
	if len(ix) < count {
		return fmt.Errorf("%w: %d dictionary indexes in a page of %d values", ErrFormat, len(ix), count)
	}
	switch {
	case ld.width == 1 && len(offsets) == 0: // booleans: a dictionary of bits
		for _, i := range ix[:count] {
			if i < 0 || int(i) >= len(data)*8 {
				return fmt.Errorf("%w: dictionary index %d out of range", ErrFormat, i)
			}
			ld.data = append(ld.data, data[i>>3]>>(i&7)&1)
		}
	case ld.width > 0:
		w := ld.width
		n := len(data) / w
		out := ld.data
		for _, i := range ix[:count] {
			if i < 0 || int(i) >= n {
				return fmt.Errorf("%w: dictionary index %d of %d values", ErrFormat, i, n)
			}
			out = append(out, data[int(i)*w:int(i)*w+w]...)
		}
		ld.data = out
	default:
		n := len(offsets) - 1
		for _, i := range ix[:count] {
			if i < 0 || int(i) >= n {
				return fmt.Errorf("%w: dictionary index %d of %d values", ErrFormat, i, n)
			}
			a, b := offsets[i], offsets[i+1]
			if a > b || int(b) > len(data) {
				return fmt.Errorf("%w: dictionary value %d out of bounds", ErrFormat, i)
			}
			if len(ld.data)+int(b-a) > math.MaxInt32 {
				return fmt.Errorf("%w: more than 2 GiB of text in a row group", ErrFormat)
			}
			ld.data = append(ld.data, data[a:b]...)
			ld.offsets = append(ld.offsets, uint32(len(ld.data)))
		}
	}
	ld.count += count
	return nil
}

// The assembly of Arrow arrays from levels (the Dremel encoding): a value of an Arrow node lives
// in a "slot" at repetition level lvl; entry i of a leaf below it opens a new slot when its
// repetition level is at most lvl and it is defined at least down to the repeated node that
// makes that level (def >= slotDef); level 0 has one slot per row. The slot is valid (not
// null) when the entry is defined at least down to the node itself.

// assembler builds the arrays of one row group from its leaves.
type assembler struct {
	leaves []*leafData
	rows   int
}

func (a *assembler) newSlot(ld *leafData, i, lvl, slotDef int) bool {
	return (ld.rep == nil || int(ld.rep[i]) <= lvl) && (ld.def == nil || int(ld.def[i]) >= slotDef)
}

// mayBeNull reports whether a slot of node n at (lvl, slotDef) may be null: whether some
// entry of its first leaf is defined down to slotDef but not down to n.
func (a *assembler) mayBeNull(n *node, slotDef int) bool {
	ld := a.leaves[n.first]
	for d := slotDef; d < n.def; d++ {
		if ld.defs[d] > 0 {
			return true
		}
	}
	return false
}

// validity returns the validity bitmap of the slots of node n at (lvl, slotDef) by its first
// leaf, or nil when every slot is valid, the number of slots and of nulls.
func (a *assembler) validity(n *node, lvl, slotDef int) (*memory.Buffer, int, int) {
	ld := a.leaves[n.first]
	if ld.rep == nil && ld.def == nil {
		return nil, ld.n, 0
	}
	slots, nulls := 0, 0
	var bits []byte
	for i := 0; i < ld.n; i++ {
		if !a.newSlot(ld, i, lvl, slotDef) {
			continue
		}
		if ld.def != nil && int(ld.def[i]) < n.def {
			if bits == nil {
				bits = make([]byte, bitutil.BytesForBits(int64(ld.n)))
				bitutil.SetBitsTo(bits, 0, int64(slots), true)
			}
			nulls++
		} else if bits != nil {
			bitutil.SetBit(bits, slots)
		}
		slots++
	}
	if bits == nil {
		return nil, slots, 0
	}
	return memory.NewBufferBytes(bits), slots, nulls
}

// build returns the array of Arrow type dt for node n, whose slots are at (lvl, slotDef);
// asElem: n is a repeated node standing for its own elements.
func (a *assembler) build(dt arrow.DataType, n *node, lvl, slotDef int, asElem bool) (arrow.ArrayData, error) {
	if n.repeated() && !asElem { // a bare repeated field: a list of itself
		return a.list(dt, n, n, n, lvl, slotDef)
	}
	switch t := dt.(type) {
	case *arrow.ListType, *arrow.FixedSizeListType:
		rep, elem, err := listParts(n)
		if err != nil {
			return nil, err
		}
		return a.list(t, n, rep, elem, lvl, slotDef)
	case *arrow.StructType:
		var valid *memory.Buffer
		slots, nulls := -1, 0
		if a.mayBeNull(n, slotDef) {
			valid, slots, nulls = a.validity(n, lvl, slotDef)
		}
		kids := make([]arrow.ArrayData, t.NumFields())
		defer func() {
			for _, k := range kids {
				if k != nil {
					k.Release()
				}
			}
		}()
		for i, f := range t.Fields() {
			k, err := a.build(f.Type, n.children[i], lvl, slotDef, false)
			if err != nil {
				return nil, err
			}
			if slots < 0 {
				slots = k.Len() // every slot valid: as many as the first field's values
			}
			if k.Len() != slots {
				return nil, fmt.Errorf("%w: struct %q: field %q has %d values, %q %d", ErrFormat, n.name(), f.Name, k.Len(), t.Field(0).Name, slots)
			}
			kids[i] = k
		}
		return array.NewData(dt, slots, []*memory.Buffer{valid}, kids, nulls, 0), nil
	}
	return a.leaf(dt, n, lvl, slotDef)
}

// list builds a list (or fixed-size list) array of node n, whose repeated node is rep and
// elements elem.
func (a *assembler) list(dt arrow.DataType, n, rep, elem *node, lvl, slotDef int) (arrow.ArrayData, error) {
	ld := a.leaves[n.first]
	var valid *memory.Buffer
	nulls := 0
	if a.mayBeNull(n, slotDef) {
		valid, _, nulls = a.validity(n, lvl, slotDef)
	}
	if ld.n >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: more than 2^31 list elements in a row group", ErrFormat)
	}
	// Entry i opens a list at (lvl, slotDef) and adds an element at (rep.rep, rep.def); a
	// list has repetition and definition levels.
	offsets := make([]int32, 0, a.rows+1)
	var count int32
	sr, sd, er, ed := byte(lvl), byte(slotDef), byte(rep.rep), byte(rep.def)
	for i, r := range ld.rep[:ld.n] {
		d := ld.def[i]
		if r <= sr && d >= sd {
			offsets = append(offsets, count)
		}
		if r <= er && d >= ed {
			count++
		}
	}
	slots := len(offsets)
	offsets = append(offsets, count)
	var et arrow.DataType
	switch t := dt.(type) {
	case *arrow.ListType:
		et = t.Elem()
	case *arrow.FixedSizeListType:
		et = t.Elem()
	}
	child, err := a.build(et, elem, rep.rep, rep.def, elem == rep)
	if err != nil {
		return nil, err
	}
	if child.Len() != int(count) {
		child.Release()
		return nil, fmt.Errorf("%w: list %q: %d elements counted, %d values", ErrFormat, n.name(), count, child.Len())
	}
	if f, ok := dt.(*arrow.FixedSizeListType); ok {
		size := int32(f.Len())
		for s := 0; s < slots; s++ {
			if got := offsets[s+1] - offsets[s]; got != size {
				child.Release()
				if valid != nil && !bitutil.BitIsSet(valid.Bytes(), s) {
					return nil, fmt.Errorf("%w: column %q, row %d: null value (mlfeed holds no nulls: fill or drop them first, or read the other columns with the option columns=NAME,...)", ErrUnsupported, n.name(), a.rowOf(ld, lvl, slotDef, s))
				}
				return nil, fmt.Errorf("%w: list %q: a list of %d values in a column of lists of %d", ErrFormat, n.name(), got, size)
			}
		}
		defer child.Release()
		return array.NewData(dt, slots, []*memory.Buffer{valid}, []arrow.ArrayData{child}, nulls, 0), nil
	}
	defer child.Release()
	return array.NewData(dt, slots, []*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{child}, nulls, 0), nil
}

// rowOf returns the row of slot s at (lvl, slotDef).
func (a *assembler) rowOf(ld *leafData, lvl, slotDef, s int) int {
	row, slot := -1, -1
	for i := 0; i < ld.n && slot < s; i++ {
		if ld.rep == nil || ld.rep[i] == 0 {
			row++
		}
		if a.newSlot(ld, i, lvl, slotDef) {
			slot++
		}
	}
	return row
}

// leaf builds the array of leaf column n's values: a value for every valid slot, a zero for
// every null one.
func (a *assembler) leaf(dt arrow.DataType, n *node, lvl, slotDef int) (arrow.ArrayData, error) {
	ld := a.leaves[n.col]
	var valid *memory.Buffer
	slots, nulls := ld.count, 0
	if a.mayBeNull(n, slotDef) {
		valid, slots, nulls = a.validity(n, lvl, slotDef)
	}
	if slots-nulls != ld.count {
		return nil, fmt.Errorf("%w: column %q: %d values for %d defined slots", ErrFormat, n.name(), ld.count, slots-nulls)
	}
	data, offsets := ld.data, ld.offsets
	if nulls > 0 { // spread the values over the slots
		if ld.width > 0 {
			spread := make([]byte, slots*ld.width)
			for s, v := 0, 0; s < slots; s++ {
				if bitutil.BitIsSet(valid.Bytes(), s) {
					copy(spread[s*ld.width:], data[v*ld.width:(v+1)*ld.width])
					v++
				}
			}
			data = spread
		} else {
			spread := make([]uint32, 0, slots+1)
			spread = append(spread, 0)
			for s, v := 0, 0; s < slots; s++ {
				if bitutil.BitIsSet(valid.Bytes(), s) {
					v++
				}
				spread = append(spread, offsets[v])
			}
			offsets = spread
		}
	}
	buf := func(b []byte) *memory.Buffer { return memory.NewBufferBytes(b) }
	switch dt.ID() {
	case arrow.BOOL:
		bits := make([]byte, bitutil.BytesForBits(int64(slots)))
		for i, b := range data[:slots] {
			if b != 0 {
				bitutil.SetBit(bits, i)
			}
		}
		return array.NewData(dt, slots, []*memory.Buffer{valid, buf(bits)}, nil, nulls, 0), nil
	case arrow.STRING, arrow.BINARY:
		if ld.width != 0 {
			break
		}
		return array.NewData(dt, slots, []*memory.Buffer{valid, buf(arrow.Uint32Traits.CastToBytes(offsets)), buf(data)}, nil, nulls, 0), nil
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16:
		if ld.width != 4 {
			break
		}
		w := dt.(arrow.FixedWidthDataType).BitWidth() / 8
		out := make([]byte, slots*w)
		for i := range slots {
			v := binary.LittleEndian.Uint32(data[4*i:])
			if w == 1 {
				out[i] = byte(v)
			} else {
				binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
			}
		}
		return array.NewData(dt, slots, []*memory.Buffer{valid, buf(out)}, nil, nulls, 0), nil
	case arrow.INT64:
		if ld.width == 12 { // INT96 timestamps, as DateTime ticks
			ticks, err := int96Ticks(data[:slots*12], valid, func(s int) string {
				return fmt.Sprintf("column %q, row %d", n.name(), a.rowOf(ld, lvl, slotDef, s))
			})
			if err != nil {
				return nil, err
			}
			return array.NewData(dt, slots, []*memory.Buffer{valid, buf(ticks)}, nil, nulls, 0), nil
		}
		fallthrough
	default:
		fw, ok := dt.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth() != 8*ld.width {
			break
		}
		return array.NewData(dt, slots, []*memory.Buffer{valid, buf(data[:slots*ld.width])}, nil, nulls, 0), nil
	}
	return nil, fmt.Errorf("%w: column %q: Parquet %s values as Arrow %s", ErrUnsupported, n.name(), n.el.Type.V, dt)
}

// julianYear1 is the Julian day number of 0001-01-01 (proleptic Gregorian), where mlfeed's
// DateTime counts from.
const julianYear1 = 1721426

// int96Ticks converts INT96 timestamps (Impala's and Spark's legacy layout: the nanoseconds of
// the day in 8 bytes, then the Julian day in 4, little-endian) to mlfeed's DateTime ticks. A
// valid slot (by the validity bitmap valid; nil: all) whose nanoseconds are not within a day is
// invalid (ErrFormat, as arrow-go says); one whose nanoseconds are not whole ticks of 100 ns,
// or whose day is outside the years 1-9999, unsupported. A null slot is 0. where names a
// slot's place for messages.
func int96Ticks(data []byte, valid *memory.Buffer, where func(slot int) string) ([]byte, error) {
	const dayNanos = 86400 * 1_000_000_000
	lastDay := int64(mlfeed.MaxTicks / (dayNanos / 100))
	out := make([]byte, len(data)/12*8)
	for i := range len(data) / 12 {
		if valid != nil && !bitutil.BitIsSet(valid.Bytes(), i) {
			continue
		}
		nanos := int64(binary.LittleEndian.Uint64(data[12*i:]))
		day := int64(int32(binary.LittleEndian.Uint32(data[12*i+8:]))) - julianYear1
		switch {
		case nanos < 0 || nanos >= dayNanos:
			return nil, fmt.Errorf("%w: %s: INT96 timestamp of %d nanoseconds of the day", ErrFormat, where(i), nanos)
		case nanos%100 != 0:
			return nil, fmt.Errorf("%w: %s: INT96 timestamp of %d nanoseconds of the day, not a whole number of 100 ns ticks: mlfeed's datetime holds int64 ticks of 100 ns", ErrUnsupported, where(i), nanos)
		case day < 0 || day > lastDay:
			return nil, fmt.Errorf("%w: %s: INT96 timestamp of Julian day %d, outside the years 1 to 9999: mlfeed's datetime holds int64 ticks of 100 ns from 0001-01-01", ErrUnsupported, where(i), day+julianYear1)
		}
		binary.LittleEndian.PutUint64(out[8*i:], uint64(day*(dayNanos/100)+nanos/100))
	}
	return out, nil
}
