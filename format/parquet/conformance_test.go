package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
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
