package arrow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// TestBinaryColumns: another writer's Binary and FixedSizeBinary columns (without mlfeed's
// metadata) read as dense bytes, every value's bytes as written, a sliced FixedSizeBinary
// array too. FixedSizeBinary was refused as unsupported before.
func TestBinaryColumns(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.BinaryTypes.Binary},
		{Name: "uuid", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}},
	}, nil)
	bb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	fb := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 4})
	want := [][2]string{{"", "abcd"}, {"\x00\xff", "\x00\x01\x02\x03"}, {"xyz", "wxyz"}, {"q", "\xff\xfe\xfd\xfc"}}
	for _, w := range want {
		bb.Append([]byte(w[0]))
		fb.Append([]byte(w[1]))
	}
	b, f := bb.NewArray(), fb.NewArray()
	defer b.Release()
	defer f.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	// Two record batches, the second of sliced arrays (an offset into the values).
	rec := array.NewRecordBatch(schema, []arrow.Array{b, f}, int64(len(want)))
	sb, sf := array.NewSlice(b, 1, 4), array.NewSlice(f, 1, 4)
	rec2 := array.NewRecordBatch(schema, []arrow.Array{sb, sf}, 3)
	for _, r := range []arrow.RecordBatch{rec, rec2} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := openBytes(buf.Bytes(), "bin.arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for i, st := range rd.Schema().Streams {
		if st.Type != mlfeed.Bytes || st.Dim != 1 {
			t.Fatalf("stream %d: %+v, want bytes of dim 1", i, st)
		}
	}
	rows := append(append([][2]string{}, want...), want[1:]...)
	var got [][2]string
	for k := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Sequences {
			got = append(got, [2]string{c.Streams[0].Values.Strings[i], c.Streams[1].Values.Strings[i]})
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Errorf("row %d: %q, want %q", i, got[i], rows[i])
		}
	}
	testColumns(t, buf.Bytes(), rows)
}

// testColumns reads the file of TestBinaryColumns through the registry with the option
// columns: one column, or both in the other order; unknown or repeated names are usage errors.
func testColumns(t *testing.T, data []byte, rows [][2]string) {
	f, _ := format.Lookup("arrow")
	open := func(cols string) (mlfeed.Source, error) {
		return f.OpenReader(bytes.NewReader(data), int64(len(data)), "bin.arrow", &format.Options{Params: map[string]string{"columns": cols}})
	}
	src, err := open("uuid,b")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if st := src.Schema().Streams; len(st) != 2 || st[0].Name != "uuid" || st[1].Name != "b" {
		t.Fatalf("streams %+v", st)
	}
	c, err := src.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Sequences {
		if got := [2]string{c.Streams[1].Values.Strings[i], c.Streams[0].Values.Strings[i]}; got != rows[i] {
			t.Errorf("row %d: %q, want %q", i, got, rows[i])
		}
	}
	for _, bad := range []string{"b,x", "b,b", "b,", ""} {
		if _, err := open(bad); !errors.Is(err, format.ErrUsage) {
			t.Errorf("columns=%q: %v, want a usage error", bad, err)
		}
	}
}

// TestStructColumn: an Arrow struct column (arrow-go's, in a sliced batch too) reads as one
// stream per field, COLUMN.FIELD, a struct within it flattened; a null struct is refused
// naming the field's stream and the row, as a null value is.
func TestStructColumn(t *testing.T) {
	mem := memory.NewGoAllocator()
	inner := arrow.StructOf(arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int16})
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}, arrow.Field{Name: "in", Type: inner})
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	b := array.NewStructBuilder(mem, st)
	defer b.Release()
	xb := b.FieldBuilder(0).(*array.Float32Builder)
	ib := b.FieldBuilder(1).(*array.StructBuilder)
	yb := ib.FieldBuilder(0).(*array.Int16Builder)
	for i := range 6 {
		if i == 5 {
			b.AppendNull()
			xb.AppendNull()
			ib.AppendNull()
			yb.AppendNull()
			continue
		}
		b.Append(true)
		xb.Append(float32(i) / 2)
		ib.Append(true)
		yb.Append(int16(-i))
	}
	arr := b.NewArray()
	defer arr.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []arrow.RecordBatch{
		array.NewRecordBatch(schema, []arrow.Array{array.NewSlice(arr, 0, 3)}, 3),
		array.NewRecordBatch(schema, []arrow.Array{array.NewSlice(arr, 3, 6)}, 3),
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	rd, err := openBytes(buf.Bytes(), "s.arrow")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if s := rd.Schema().Streams; len(s) != 2 || s[0].Name != "s.x" || s[0].Type != mlfeed.Float32 || s[1].Name != "s.in.y" || s[1].Type != mlfeed.Int16 {
		t.Fatalf("streams %+v", s)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(c.Streams[0].Values.Bytes[4*i:]))
		y := int16(binary.LittleEndian.Uint16(c.Streams[1].Values.Bytes[2*i:]))
		if x != float32(i)/2 || y != int16(-i) {
			t.Errorf("row %d: %v %v", i, x, y)
		}
	}
	if _, err := rd.ReadChunk(context.Background(), 1); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `column "s.x", row 5: null value`) {
		t.Errorf("the null struct: %v", err)
	}
}
