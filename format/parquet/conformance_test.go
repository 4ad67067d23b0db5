package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mlfeed/mlfeed"
	mlformat "github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/arrowmap"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestEmptyDataPage reads parquet-testing's version-2 data page with an empty snappy body as
// DuckDB does: one row, NULL, which mlfeed cannot hold, so the error names the column and is
// unsupported (exit 2). It was "s2: corrupt input", invalid data, before.
func TestEmptyDataPage(t *testing.T) {
	rd, err := Open("testdata/datapage_v2_empty_datapage.snappy.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if n, _ := mlfeed.Totals(rd.Chunks()); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
	_, err = rd.ReadChunk(context.Background(), 0)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `column "value", row 0: null value`) {
		t.Fatalf("got %v, want the null of column value, unsupported", err)
	}
}

// TestUnknownLogicalType: a logical type no reader knows is ignored, as the Parquet format
// says, and the column read by its physical type (BYTE_ARRAY: binary); the file was refused
// whole as "malformed data (invalid logical type)" before. Binary columns are refused by name
// where mlfeed has no type for them.
func TestUnknownLogicalType(t *testing.T) {
	name := "testdata/unknown-logical-type.parquet"
	rd, err := Open(name, nil)
	if err != nil {
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `column "column with unknown type"`) || !strings.Contains(err.Error(), "binary") {
			t.Fatalf("got %v, want the file read, or its binary column named as unsupported", err)
		}
		return
	}
	defer rd.Close()
	if got := len(rd.Schema().Streams); got != 2 {
		t.Errorf("%d streams, want 2", got)
	}
}

// TestFooterWalkLeavesKnownTypes: footers whose logical types arrow-go knows are not edited.
func TestFooterWalkLeavesKnownTypes(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.parquet")
	for _, f := range files {
		if strings.Contains(f, "unknown-logical") {
			continue
		}
		data, _ := os.ReadFile(f)
		if md := patchedFooter(bytes.NewReader(data), int64(len(data))); md != nil {
			t.Errorf("%s: footer edited", f)
		}
	}
	data, _ := os.ReadFile("testdata/unknown-logical-type.parquet")
	if md := patchedFooter(bytes.NewReader(data), int64(len(data))); md == nil {
		t.Error("unknown-logical-type.parquet: footer not edited")
	}
}

// TestCorruptArrowSchema: an ARROW:schema footer value that does not decode is invalid data
// (exit 1) at the footer, named; it was "unsupported" (exit 2) at byte offset 0 before.
func TestCorruptArrowSchema(t *testing.T) {
	name := "testdata/mlfeed-idv-datatypes.parquet"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	k := bytes.Index(data, []byte("ARROW:schema"))
	if k < 0 {
		t.Fatal("no ARROW:schema")
	}
	v := k + len("ARROW:schema") + 1 // the value's field header
	_, n := binary.Uvarint(data[v:]) // its length
	v += n
	for _, bad := range []byte{'!', 'A'} { // not base64; base64 of other bytes
		d := bytes.Clone(data)
		for j := v; j < v+40; j++ {
			d[j] = bad
		}
		_, err := NewReader(bytes.NewReader(d), int64(len(d)), "x.parquet", nil)
		var pe *mlfeed.PosError
		if !errors.Is(err, ErrFormat) || errors.Is(err, mlfeed.ErrUnsupported) || !errors.As(err, &pe) || pe.Field != "ARROW:schema metadata" || pe.Offset <= 0 {
			t.Errorf("%q: got %v, want invalid data in the ARROW:schema metadata at the footer", bad, err)
		}
	}
}

// TestFooterWalkBounded: the footer walk does work bounded by the footer's bytes: structs
// nested past the limit, lists claiming more elements than bytes remain and truncated footers
// all end it at once, with nothing edited.
func TestFooterWalkBounded(t *testing.T) {
	deep := bytes.Repeat([]byte{0x1c}, 1<<20)                // field 1, struct: a million nested structs
	huge := []byte{0x29, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x0f} // field 2, list of 2^32 structs
	for name, b := range map[string][]byte{"deep": deep, "huge list": huge, "empty": nil, "cut": {0x19}} {
		if got := withoutUnknownLogicalTypes(b); got != nil {
			t.Errorf("%s: edited", name)
		}
	}
}

// FuzzFooterWalk: whatever the bytes, the footer walk ends without a panic, and a footer it
// edits is no longer than the original and has no unknown logical type left.
func FuzzFooterWalk(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.parquet")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		if len(data) < 12 {
			continue
		}
		n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
		if n <= len(data)-12 {
			f.Add(data[len(data)-8-n : len(data)-8])
		}
	}
	f.Fuzz(func(t *testing.T, footer []byte) {
		out := withoutUnknownLogicalTypes(footer)
		if out == nil {
			return
		}
		if len(out) > len(footer)+16*len(footer) {
			t.Fatalf("edited footer of %d bytes from %d", len(out), len(footer))
		}
		if again := withoutUnknownLogicalTypes(out); again != nil {
			t.Fatalf("an unknown logical type left after the edit")
		}
	})
}

// Float16 columns (FIXED_LEN_BYTE_ARRAY(2), logical type FLOAT16) read as float32, exactly:
// parquet-mr's floating_orders_nan_count.parquet holds each value as FLOAT, DOUBLE and FLOAT16
// (finite values, signed zeros, signed NaNs, five row groups), so the float16 columns must
// read as the FLOAT ones do.
func TestFloat16Columns(t *testing.T) {
	rd, err := Open("testdata/floating_orders_nan_count.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sc := rd.Schema()
	if got := rd.Details()["float16_read_as_float32"]; !reflect.DeepEqual(got, []string{"float16_ieee754", "float16_typedef"}) {
		t.Errorf("float16_read_as_float32: %v", got)
	}
	rows := 0
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		for _, order := range []string{"ieee754", "typedef"} {
			h := c.Streams[sc.Index("float16_"+order)].Values
			f := c.Streams[sc.Index("float_"+order)].Values
			if h.Type != mlfeed.Float32 {
				t.Fatalf("float16_%s read as %v", order, h.Type)
			}
			for k, want := range f.Float32s() {
				got := h.Float32s()[k]
				same := got == want || math.IsNaN(float64(got)) && math.IsNaN(float64(want))
				if !same || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
					t.Errorf("chunk %d row %d: float16_%s %v, float_%s %v", i, k, order, got, order, want)
				}
			}
		}
		rows += c.Sequences
	}
	if rows == 0 {
		t.Fatal("no rows")
	}
}

// TestKeyValueWithoutValue reads the Parquet project's column_chunk_key_value_metadata.parquet,
// whose column chunks carry a key-value entry without its value (optional in the format),
// as DuckDB does: two INT32 columns, no rows. parquet-go requires the value and refused the
// footer (invalid data) before.
func TestKeyValueWithoutValue(t *testing.T) {
	rd, err := Open("testdata/column_chunk_key_value_metadata.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var names []string
	for _, st := range rd.Schema().Streams {
		if st.Type != mlfeed.Int32 {
			t.Errorf("stream %s: %s, want int32", st.Name, st.Type)
		}
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "column1,column2" {
		t.Errorf("streams %v", names)
	}
	if n, _ := mlfeed.Totals(rd.Chunks()); n != 0 {
		t.Errorf("%d rows, want 0", n)
	}
}

// TestWithKeyValueValues edits footers: an entry without a value gets an empty one, in the
// file's metadata and in a column chunk's, whatever the field ids before it; a footer whose
// entries all have values, or one the walker cannot read, is left alone (nil).
func TestWithKeyValueValues(t *testing.T) {
	data, err := os.ReadFile("testdata/column_chunk_key_value_metadata.parquet")
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := data[len(data)-8-n : len(data)-8]
	edited := withKeyValueValues(footer)
	if edited == nil || len(edited) <= len(footer) {
		t.Fatalf("no edit of the real footer")
	}
	if again := withKeyValueValues(edited); again != nil {
		t.Errorf("the edited footer was edited again")
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), edited, &md); err != nil {
		t.Fatalf("parquet-go refuses the edited footer: %v", err)
	}
	var before format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &before); err == nil {
		t.Errorf("parquet-go read the real footer: the test no longer tests the edit")
	}
	kvs := 0
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			kvs += len(c.MetaData.KeyValueMetadata)
		}
	}
	if kvs == 0 {
		t.Errorf("no column chunk key-value metadata after the edit")
	}
	// FileMetaData{5: [KeyValue{1: "k"}]}: an empty value inserted after the key.
	fileKV := []byte{0x59, 0x1c, 0x18, 1, 'k', 0, 0}
	want := []byte{0x59, 0x1c, 0x18, 1, 'k', 0x18, 0, 0, 0}
	if got := withKeyValueValues(fileKV); !bytes.Equal(got, want) {
		t.Errorf("file key-value: % x, want % x", got, want)
	}
	for _, bad := range [][]byte{nil, {0x59}, {0x59, 0x1c, 0x18, 9, 'k'}, {0x59, 0x1f}} {
		if got := withKeyValueValues(bad); got != nil {
			t.Errorf("% x: edited to % x, want nil", bad, got)
		}
	}
}

// TestNullTypeList reads the Parquet project's null_list.parquet as DuckDB does: one row whose
// list (of Arrow's null type, INT32 in Parquet) is empty. The stored Arrow null type was
// called a mismatch (invalid data) before, and a list column whose first list is empty got a
// fixed dimension of 0.
func TestNullTypeList(t *testing.T) {
	rd, err := Open("testdata/null_list.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	st := rd.Schema().Streams
	if len(st) != 1 || st[0].Name != "emptylist" || st[0].Type != mlfeed.Int32 || st[0].Dim != 0 {
		t.Fatalf("schema %+v", st)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := rd.Schema(); c.Validate(&s) != nil {
		t.Fatal(c.Validate(&s))
	}
	d := c.Streams[0]
	if c.Sequences != 1 || len(d.SampleStart) != 2 || d.SampleStart[1] != 0 {
		t.Errorf("chunk %+v", d)
	}
}

// TestShortPlainPage: a required column whose PLAIN pages hold fewer values than they count
// (the Parquet project's bad_data/ARROW-GH-47662.parquet) is invalid data naming the column and
// the page. parquet-go pads such a page with zeros, and the file read as 1,000 values, 105 of
// them made up, once FIXED_LEN_BYTE_ARRAY columns were read.
func TestShortPlainPage(t *testing.T) {
	rd, err := Open("testdata/ARROW-GH-47662.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = rd.ReadChunk(context.Background(), 0)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `column "flba_field": page at byte 30: 100 PLAIN values in 364 bytes, 400 needed`) {
		t.Fatalf("got %v", err)
	}
}

// TestFixedLenByteArray: FIXED_LEN_BYTE_ARRAY columns without a logical type, or UUIDs, as
// parquet-go writes them, read as bytes, each value's bytes as written (both were refused as
// unsupported before).
func TestFixedLenByteArray(t *testing.T) {
	type row struct {
		F [3]byte  `parquet:"f"`
		U [16]byte `parquet:"u,uuid"`
	}
	rows := []row{{F: [3]byte{0, 1, 2}}, {F: [3]byte{255, 0, 7}, U: [16]byte{15: 1}}, {F: [3]byte{'a', 'b', 'c'}, U: [16]byte{0: 0xee, 8: 0x80}}}
	var buf bytes.Buffer
	w := pq.NewGenericWriter[row](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "flba.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for _, st := range rd.Schema().Streams {
		if st.Type != mlfeed.Bytes || st.Dim != 1 {
			t.Errorf("stream %s: %s of dim %d, want bytes of dim 1", st.Name, st.Type, st.Dim)
		}
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if got := c.Streams[0].Values.Strings[i]; got != string(r.F[:]) {
			t.Errorf("row %d f: %q, want %q", i, got, r.F[:])
		}
		if got := c.Streams[1].Values.Strings[i]; got != string(r.U[:]) {
			t.Errorf("row %d u: %q, want %q", i, got, r.U[:])
		}
	}
}

// TestColumns reads a subset of the Parquet project's alltypes_plain.parquet, in the order
// named, with values as DuckDB reads them; names that are no column, or given twice, are
// usage errors.
func TestColumns(t *testing.T) {
	const name = "testdata/alltypes_plain.parquet"
	rd, err := Open(name, &ReaderOptions{Columns: []string{"double_col", "id", "bool_col", "string_col"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var names []string
	for _, st := range rd.Schema().Streams {
		names = append(names, st.Name+":"+st.Type.String())
	}
	if got := strings.Join(names, ","); got != "double_col:float64,id:int32,bool_col:bool,string_col:bytes" {
		t.Fatalf("streams %s", got)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// DuckDB 1.5.6: SELECT id, double_col, string_col, bool_col FROM read_parquet(...)
	ids := []int32{4, 5, 6, 7, 2, 3, 0, 1}
	for i, id := range ids {
		d := math.Float64frombits(binary.LittleEndian.Uint64(c.Streams[0].Values.Bytes[8*i:]))
		if got := int32(binary.LittleEndian.Uint32(c.Streams[1].Values.Bytes[4*i:])); got != id {
			t.Errorf("row %d: id %d, want %d", i, got, id)
		}
		odd := id%2 == 1
		if want := map[bool]float64{false: 0, true: 10.1}[odd]; d != want {
			t.Errorf("row %d: double_col %v, want %v", i, d, want)
		}
		if got, want := c.Streams[2].Values.Bytes[i] == 1, !odd; got != want {
			t.Errorf("row %d: bool_col %v, want %v", i, got, want)
		}
		if got, want := c.Streams[3].Values.Strings[i], map[bool]string{false: "0", true: "1"}[odd]; got != want {
			t.Errorf("row %d: string_col %q, want %q", i, got, want)
		}
	}
	for _, cols := range [][]string{{"id", "nope"}, {"id", "Id"}} {
		_, err := Open(name, &ReaderOptions{Columns: cols})
		if !errors.Is(err, mlformat.ErrUsage) || !strings.Contains(err.Error(), `no column "`+cols[1]+`" (the columns: "id", "bool_col",`) {
			t.Errorf("%v: %v, want a usage error listing the columns", cols, err)
		}
	}
}

// TestStructColumns: another writer's struct columns (DuckDB's: an image as {bytes, path},
// Hugging Face's layout, and {x, inner: {y}}) read as one stream per field, COLUMN.FIELD,
// nested structs flattened; columns= picks columns or fields, so the image bytes read though
// a path is null. Struct columns were unsupported before.
func TestStructColumns(t *testing.T) {
	const name = "testdata/duckdb-struct.parquet"
	rd, err := Open(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range rd.Schema().Streams {
		names = append(names, st.Name+":"+st.Type.String())
	}
	if got := strings.Join(names, ","); got != "id:int64,image.bytes:bytes,image.path:string,pos.x:float64,pos.inner.y:int32" {
		t.Errorf("streams %s", got)
	}
	_, err = rd.ReadChunk(context.Background(), 0)
	rd.Close()
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `column "image.path", row 2: null value`) {
		t.Errorf("every field: %v, want the null path of row 2", err)
	}
	rd, err = Open(name, &ReaderOptions{Columns: []string{"pos", "image.bytes", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	names = names[:0]
	for _, st := range rd.Schema().Streams {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, ","); got != "pos.x,pos.inner.y,image.bytes,id" {
		t.Fatalf("picked streams %s", got)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// check.mjs write-struct: row i holds id i, image.bytes "img<i>", pos.x 1.5i, pos.inner.y i%3
	for i := range 5 {
		x := math.Float64frombits(binary.LittleEndian.Uint64(c.Streams[0].Values.Bytes[8*i:]))
		y := int32(binary.LittleEndian.Uint32(c.Streams[1].Values.Bytes[4*i:]))
		id := int64(binary.LittleEndian.Uint64(c.Streams[3].Values.Bytes[8*i:]))
		if x != 1.5*float64(i) || y != int32(i%3) || c.Streams[2].Values.Strings[i] != "img"+strconv.Itoa(i) || id != int64(i) {
			t.Errorf("row %d: %v %v %q %v", i, x, y, c.Streams[2].Values.Strings[i], id)
		}
	}
	if _, err := Open(name, &ReaderOptions{Columns: []string{"pos.z"}}); !errors.Is(err, mlformat.ErrUsage) || !strings.Contains(err.Error(), `no column "pos.z" (the columns: "pos.x", "pos.inner.y")`) {
		t.Errorf("unknown field: %v", err)
	}
}

// TestInt96Timestamps reads Impala's INT96 timestamps (alltypes_plain.parquet, unreadable
// before but for the option columns) as DateTime ticks, as DuckDB 1.5.6 reads them: SELECT
// id, timestamp_col gives 2009-01-01 00:00:00 for id 0, 00:01:00 for id 1, and a month later
// for each next pair.
func TestInt96Timestamps(t *testing.T) {
	rd, err := Open("testdata/alltypes_plain.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sc := rd.Schema()
	ts, id := sc.Index("timestamp_col"), sc.Index("id")
	if st := sc.Streams[ts]; st.Type != mlfeed.DateTime || st.Dim != 1 {
		t.Fatalf("timestamp_col: %v", st)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Sequences {
		k := int(c.Streams[id].Values.Int64At(i))
		want := testutil.Ticks(time.Date(2009, time.Month(1+k/2), 1, 0, k%2, 0, 0, time.UTC))
		if got := c.Streams[ts].Values.Int64At(i); got != want {
			t.Errorf("row %d (id %d): %d, want %d", i, k, got, want)
		}
	}
}

// TestInt96Range: INT96 timestamps read as ticks from 0001-01-01 to 9999-12-31 (Spark's
// 9999-12-31T03:00:00 in the Parquet project's int96_from_spark.parquet: Julian day 5373484,
// beyond the int64 nanoseconds many readers convert through); beyond, a nanosecond
// remainder and nanoseconds past a day are refused, never wrapped.
func TestInt96Range(t *testing.T) {
	i96 := func(day uint32, nanos int64) []byte {
		b := make([]byte, 12)
		binary.LittleEndian.PutUint64(b, uint64(nanos))
		binary.LittleEndian.PutUint32(b[8:], day)
		return b
	}
	where := func(s int) string { return fmt.Sprintf("slot %d", s) }
	const hour = 3600 * 1_000_000_000
	data := slices.Concat(i96(2440588, 0), i96(5373484, 3*hour), i96(1721426, 100))
	got, err := int96Ticks(data, nil, where)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []int64{testutil.Ticks(time.Unix(0, 0)), testutil.Ticks(time.Date(9999, 12, 31, 3, 0, 0, 0, time.UTC)), 1} {
		if v := int64(binary.LittleEndian.Uint64(got[8*k:])); v != want {
			t.Errorf("slot %d: %d, want %d", k, v, want)
		}
	}
	for _, c := range []struct {
		b    []byte
		err  error
		want string
	}{
		{i96(5373485, 0), ErrUnsupported, "slot 0: INT96 timestamp of Julian day 5373485, outside the years 1 to 9999"},
		{i96(1721425, 0), ErrUnsupported, "outside the years 1 to 9999"},
		{i96(2440588, 150), ErrUnsupported, "150 nanoseconds of the day, not a whole number of 100 ns ticks"},
		{i96(2440588, 24*hour), ErrFormat, "slot 0: INT96 timestamp of 86400000000000 nanoseconds of the day"},
		{i96(2440588, -32509551616000), ErrFormat, "-32509551616000 nanoseconds"}, // Spark's year 290000
	} {
		if _, err := int96Ticks(c.b, nil, where); !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %v: %s", c.b, err, c.err, c.want)
		}
	}
}

// TestTimes reads DuckDB's dates, times and timestamps (duckdb-time.parquet: TIMESTAMP
// micros, TIMESTAMPTZ, TIMESTAMP_NS, TIMESTAMP_MS, TIMESTAMP_S, DATE, TIME and a list of
// timestamps; check.mjs write-time) as DateTime and Duration ticks, each checked against
// Go's calendar from the SQL literals that made it.
func TestTimes(t *testing.T) {
	rd, err := Open("testdata/duckdb-time.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return testutil.Ticks(time.Date(y, mo, d, h, mi, s, ns, time.UTC))
	}
	const day, hour, sec = 864_000_000_000, 36_000_000_000, 10_000_000
	sc := rd.Schema()
	for _, w := range []struct {
		col  string
		typ  mlfeed.ElemType
		want func(i int64) []int64
	}{
		{"ts", mlfeed.DateTime, func(i int64) []int64 { return []int64{at(2024, 1, 2, 3, 4, 5, 123456000) + i*day} }},
		{"tstz", mlfeed.DateTime, func(i int64) []int64 { return []int64{at(2024, 1, 2, 1, 4, 5, 123456000) - i*hour} }},
		{"ts_ns", mlfeed.DateTime, func(int64) []int64 { return []int64{at(2024, 1, 2, 3, 4, 5, 123456700)} }},
		{"ts_ms", mlfeed.DateTime, func(int64) []int64 { return []int64{at(1900, 2, 28, 23, 59, 59, 999000000)} }},
		{"ts_s", mlfeed.DateTime, func(int64) []int64 { return []int64{at(2262, 4, 11, 0, 0, 0, 0)} }},
		{"d", mlfeed.DateTime, func(i int64) []int64 { return []int64{i * day} }},
		{"d_late", mlfeed.DateTime, func(i int64) []int64 { return []int64{at(9999, 12, 31, 0, 0, 0, 0) - i*day} }},
		{"t", mlfeed.Duration, func(i int64) []int64 { return []int64{day - 10 - i*sec} }},
		{"tl", mlfeed.DateTime, func(int64) []int64 { return []int64{at(1900, 1, 1, 0, 0, 0, 0), at(2100, 12, 31, 23, 59, 59, 0)} }},
	} {
		k := sc.Index(w.col)
		if k < 0 || sc.Streams[k].Type != w.typ {
			t.Errorf("%s: stream %d, want %s", w.col, k, w.typ)
			continue
		}
		d := &c.Streams[k]
		for i := range int64(c.Sequences) {
			from, _ := d.SampleRange(&sc.Streams[k], d.SeqStart[i])
			for j, want := range w.want(i) {
				if got := d.Values.Int64At(from + j); got != want {
					t.Errorf("%s row %d value %d: %d, want %d", w.col, i, j, got, want)
				}
			}
		}
	}
}

// TestStoredTimeUnit: a stored Arrow type says only what its writer casts the values to
// after reading; the Parquet annotation says their unit (pyarrow stores timestamp[s] as
// TIMESTAMP(MILLIS) and date64 as DATE), and it wins.
func TestStoredTimeUnit(t *testing.T) {
	leaf := func(phys format.Type, lt format.LogicalType) *node {
		return &node{col: 0, el: &format.SchemaElement{Name: "c", Type: thrift.New(phys), LogicalType: lt}}
	}
	millis := format.LogicalType{Value: &format.TimestampType{IsAdjustedToUTC: true, Unit: format.TimeUnit{Value: &format.MilliSeconds{}}}}
	for _, c := range []struct {
		stored arrow.DataType
		n      *node
		want   arrow.DataType
	}{
		{&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, leaf(format.Int64, millis), &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{arrow.FixedWidthTypes.Date64, leaf(format.Int32, format.LogicalType{Value: &format.DateType{}}), arrow.FixedWidthTypes.Date32},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, leaf(format.Int64, format.LogicalType{}), &arrow.TimestampType{Unit: arrow.Microsecond}},
		// pyarrow's use_deprecated_int96_timestamps: DateTime ticks, mlfeed.type on the field
		{arrow.FixedWidthTypes.Timestamp_ns, leaf(format.Int96, format.LogicalType{}), arrow.PrimitiveTypes.Int64},
	} {
		got, err := resolve(c.stored, c.n, false)
		if err != nil || !arrow.TypeEqual(got, c.want) {
			t.Errorf("stored %s: %v %v, want %s", c.stored, got, err, c.want)
		}
		md := ticksMeta(c.n, arrow.NewMetadata([]string{"k", arrowmap.KeyType}, []string{"v", "int64"}))
		if typ, _ := md.GetValue(arrowmap.KeyType); (typ == "datetime") != (c.n.el.Type.V == format.Int96) || md.Len() != 2 {
			t.Errorf("stored %s: metadata %v", c.stored, md)
		}
	}
}
