package arrow

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mlfeed/mlfeed"
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
}
