package idv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// valueString renders element k of b.
func valueString(b mlfeed.Buffer, k int) string {
	le := binary.LittleEndian
	switch b.Type {
	case mlfeed.String:
		return fmt.Sprintf("%q", b.Strings[k])
	case mlfeed.Bool:
		return fmt.Sprint(b.Bytes[k] != 0)
	case mlfeed.Float32, mlfeed.Float64:
		return fmt.Sprint(b.Float64At(k))
	case mlfeed.Uint64:
		return fmt.Sprint(le.Uint64(b.Bytes[8*k:]))
	case mlfeed.DateTimeOffset:
		return fmt.Sprintf("(%d,%d)", int64(le.Uint64(b.Bytes[16*k:])), int16(le.Uint16(b.Bytes[16*k+8:])))
	case mlfeed.RowID:
		return fmt.Sprintf("(%d,%d)", le.Uint64(b.Bytes[16*k:]), le.Uint64(b.Bytes[16*k+8:]))
	}
	return fmt.Sprint(b.Int64At(k))
}

// sampleString renders sample s of d: "v" for a scalar, "[v v]" for a dense vector,
// "{i:v i:v}" for a sparse one.
func sampleString(st *mlfeed.Stream, d *mlfeed.StreamData, s int64) string {
	from, to := d.SampleRange(st, s)
	var parts []string
	for k := from; k < to; k++ {
		v := valueString(d.Values, k)
		if st.Storage == mlfeed.Sparse {
			v = fmt.Sprintf("%d:%s", d.Indices[k], v)
		}
		parts = append(parts, v)
	}
	switch {
	case st.Storage == mlfeed.Sparse:
		return "{" + strings.Join(parts, " ") + "}"
	case st.Dim == 1 && st.Shape == nil:
		return parts[0]
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// columns reads every chunk of src and returns each stream's samples as strings.
func columns(t testing.TB, src mlfeed.Source) [][]string {
	t.Helper()
	sc := src.Schema()
	out := make([][]string, len(sc.Streams))
	// Four threads: the blocks of a chunk decode in parallel, as under the CLI.
	ctx := sched.WithContext(context.Background(), sched.New(4, 0))
	for i := range src.Chunks() {
		c, err := src.ReadChunk(ctx, i)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if err := c.Validate(&sc); err != nil {
			t.Fatalf("chunk %d does not match the schema: %v", i, err)
		}
		for k := range sc.Streams {
			d := &c.Streams[k]
			for s := int64(0); s < d.Samples(); s++ {
				out[k] = append(out[k], sampleString(&sc.Streams[k], d, s))
			}
		}
	}
	return out
}

func schemaStrings(sc mlfeed.Schema) []string {
	var out []string
	for _, st := range sc.Streams {
		out = append(out, st.String())
	}
	return out
}

func openTestdata(t *testing.T, name string) *Reader {
	t.Helper()
	r, err := Open(testutil.Testdata(t, "idv", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// The values the corpus README gives for each file.
var datatypesSchema = []string{"bl dense bool 1", "i1 dense int8 1", "i2 dense int16 1", "i4 dense int32 1",
	"i8 dense int64 1", "ts dense duration 1", "dto dense datetimeoffset 1", "dt dense datetime 1", "tx dense string 1"}

func TestDatatypes(t *testing.T) {
	five := [][]string{
		{"false", "true", "false", "false", "false"},
		{"127", "-127", "-128", "0", "-128"},
		{"32767", "-32767", "-32768", "0", "-32768"},
		{"2147483647", "-2147483647", "-2147483648", "0", "-2147483648"},
		{"9223372036854775807", "-9223372036854775807", "-9223372036854775808", "0", "-9223372036854775808"},
		{"1728000000000", "6048000000000", "6048000000000", "0", "0"},
		{"(633636000000000000,0)", "(633636000000000000,0)", "(633636000000000000,0)", "(0,0)", "(0,0)"},
		{"635112576000000000", "635112576000000000", "635112576000000000", "0", "0"},
		{`"foo"`, `"xyz"`, `""`, `""`, `""`},
	}
	for _, name := range []string{"datatypes.idv", "datatypes-c844b4e.idv"} {
		t.Run(name, func(t *testing.T) {
			r := openTestdata(t, name)
			eq(t, "schema", schemaStrings(r.Schema()), datatypesSchema)
			eq(t, "values", columns(t, r), five)
			h := r.Header
			eq(t, "header", []any{VersionString(h.Version), VersionString(h.CompatibleVersion), h.RowCount, h.ColumnCount, h.TOCOffset, h.TailOffset},
				[]any{"1.1.1.5", "1.1.1.5", 5, 9, 527, 801})
			eq(t, "codec of bl", r.Details()["column 0 bl"].(map[string]any)["codec"], "DvBool")
			eq(t, "codec of dto", r.Details()["column 6 dto"].(map[string]any)["codec"], "DvDateTimeZone")
		})
	}
	t.Run("datatypes-63e45e7.idv", func(t *testing.T) {
		r := openTestdata(t, "datatypes-63e45e7.idv")
		eq(t, "schema", schemaStrings(r.Schema()), datatypesSchema)
		eq(t, "values", columns(t, r), [][]string{
			{"false", "true", "false", "false"},
			{"127", "-127", "-128", "-128"},
			{"32767", "-32767", "-32768", "-32768"},
			{"2147483647", "-2147483647", "-2147483648", "-2147483648"},
			{"9223372036854775807", "-9223372036854775807", "-9223372036854775808", "-9223372036854775808"},
			{"1728000000000", "6048000000000", "6048000000000", "0"},
			{"(633636000000000000,0)", "(633636000000000000,0)", "(633636000000000000,0)", "(0,0)"},
			{"635112576000000000", "635112576000000000", "635112576000000000", "0"},
			{`"foo"`, `"xyz"`, `"xyz"`, `""`},
		})
	})
}

func TestTermLookup(t *testing.T) {
	r := openTestdata(t, "termlookup-DefaultMap.idv")
	eq(t, "schema", schemaStrings(r.Schema()), []string{"Term dense string 1", "Value dense float32 1"})
	eq(t, "values", columns(t, r), [][]string{{`"Bad"`, `"Fair"`, `"Good"`, `"Excellent"`, `"Perfect"`}, {"0", "1", "2", "3", "4"}})
	eq(t, "rows per block", r.Details()["rows_per_block"], 5)

	r = openTestdata(t, "termlookup_with_key-DefaultMap.idv")
	eq(t, "schema", schemaStrings(r.Schema()), []string{"Term dense string 1", "Value dense uint32 key[5] 1"})
	eq(t, "values", columns(t, r), [][]string{{`"Bad"`, `"Fair"`, `"Good"`, `"Excellent"`, `"Perfect"`}, {"1", "2", "3", "4", "5"}})
	eq(t, "codec", r.Details()["column 1 Value"].(map[string]any)["codec"], "Key(UInt32, 5)")
}

func TestZeroRowSchemas(t *testing.T) {
	for _, tc := range []struct {
		file   string
		schema []string
	}{
		{"schema-codec-test.idv", []string{"A dense uint32 key[3] 1", "B dense uint32 key[6] 1", "C dense uint8 key[11] 1",
			"D dense uint16 key[65535] 1", "E dense uint32 key[4294967295] 1", "F dense uint64 key[18446744073709551615] 1"}},
		{"matrix-factorization-TrainSchema.idv", []string{"MatrixColumnIndex dense uint32 key[2] 1",
			"MatrixRowIndex dense uint32 key[3] 1", "Value dense float32 1"}},
		{"ep_model0-LoaderSchema.idv", []string{"Label dense float32 1", "Features dense float32 9"}},
		{"ep_model1-LoaderSchema.idv", []string{"row_num dense int64 1", "education dense string 1", "age dense int64 1",
			"parity dense int64 1", "induced dense int64 1", "case dense int64 1", "spontaneous dense int64 1",
			"stratum dense int64 1", "pooled.stratum dense int64 1"}},
		{"ep_model1-Transform002Schema.idv", []string{"case dense int64 1"}},
		{"calibrator-Schema.idv", []string{"Label dense bool 1", "SentimentText dense string 1"}},
		{"hashing-before-combine-Schema.idv", []string{"Features dense float32 9"}},
		{"optionalcolumn-LoaderSchema.idv", []string{"CategoricalFeatures dense string 5", "NumericalFeatures dense float32 3", "Label dense float32 1"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := openTestdata(t, tc.file)
			eq(t, "schema", schemaStrings(r.Schema()), tc.schema)
			if len(r.Chunks()) != 0 || r.Header.RowCount != 0 {
				t.Errorf("got %d chunks, %d rows; want none", len(r.Chunks()), r.Header.RowCount)
			}
		})
	}
}

func TestSlotNames(t *testing.T) {
	r := openTestdata(t, "optionalcolumn-LoaderSchema.idv")
	sc := r.Schema()
	for i, want := range []string{`["abc" "abc" "abc" "abc" "1"]`, `["1" "1" "1"]`} {
		md := sc.Streams[i].Metadata
		if len(md) != 1 || md[0].Name != "SlotNames" {
			t.Fatalf("stream %d metadata %+v, want one SlotNames", i, md)
		}
		eq(t, "SlotNames type", md[0].Desc.String(), fmt.Sprintf(" dense string %d", sc.Streams[i].Dim))
		eq(t, "SlotNames", sampleString(&md[0].Desc, &md[0].Data, 0), want)
	}
	if sc.Streams[2].Metadata != nil {
		t.Errorf("Label has metadata %v", sc.Streams[2].Metadata)
	}
}

func TestOldKeyRejected(t *testing.T) {
	_, err := Open(testutil.Testdata(t, "idv", "schema-codec-test-oldkey-fa37ce0.idv"), nil)
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `column 1 "B"`) || pe.Offset != 302 {
		t.Fatalf("got %v, want a format error at column B's entry (offset 302)", err)
	}
}

// TestEmbedded reads an IDV stream that starts inside a larger file, as in a model zip.
func TestEmbedded(t *testing.T) {
	data, err := os.ReadFile(testutil.Testdata(t, "idv", "termlookup-DefaultMap.idv"))
	if err != nil {
		t.Fatal(err)
	}
	big := append(append([]byte("PK some zip entry header + length prefix"), data...), "trailing bytes"...)
	r, err := NewReader(bytes.NewReader(big[40:]), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "values", columns(t, r), [][]string{{`"Bad"`, `"Fair"`, `"Good"`, `"Excellent"`, `"Perfect"`}, {"0", "1", "2", "3", "4"}})
	// Through a section reader of a file, and with trailing bytes after the stream.
	r, err = NewReader(bytes.NewReader(big[40:]), int64(len(big)-40), nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "rows", r.Header.RowCount, 5)
}

// TestBlockOrder checks that blocks are found through the lookup tables: the two datatypes
// files differ only in where the blocks are.
func TestBlockOrder(t *testing.T) {
	a := columns(t, openTestdata(t, "datatypes.idv"))
	b := columns(t, openTestdata(t, "datatypes-c844b4e.idv"))
	eq(t, "values", a, b)
}

func TestAllFilesValidate(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.Dir(t, "idv"), "*.idv"))
	if len(files) < 14 {
		t.Fatalf("found %d files", len(files))
	}
	for _, f := range files {
		r, err := Open(f, nil)
		if strings.Contains(f, "oldkey") {
			if err == nil {
				t.Errorf("%s: opened", f)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := r.Validate(context.Background(), func(err error) bool { t.Error(err); return true }); err != nil {
			t.Error(err)
		}
		r.Close()
	}
}

// mutate returns a copy of data with p written at off.
func mutate(data []byte, off int, p ...byte) []byte {
	out := append([]byte(nil), data...)
	copy(out[off:], p)
	return out
}

func TestBadHeaders(t *testing.T) {
	data, err := os.ReadFile(testutil.Testdata(t, "idv", "termlookup-DefaultMap.idv"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	u64 := func(v uint64) []byte { return le.AppendUint64(nil, v) }
	for _, tc := range []struct {
		name string
		data []byte
		want error
		off  int64
	}{
		{"short", data[:100], ErrTruncated, 0},
		{"signature", mutate(data, 0, 'X'), ErrFormat, 0},
		{"compat above version", mutate(data, 16, u64(MakeVersion(1, 1, 1, 7))...), ErrFormat, 16},
		{"compat too old", mutate(mutate(data, 16, u64(MakeVersion(1, 1, 1, 3))...), 8, u64(MakeVersion(1, 1, 1, 3))...), ErrUnsupported, 16},
		{"future compat", mutate(mutate(data, 16, u64(MakeVersion(1, 1, 1, 7))...), 8, u64(MakeVersion(1, 1, 1, 7))...), ErrUnsupported, 16},
		{"negative rows", mutate(data, 40, u64(math.MaxUint64)...), ErrFormat, 40},
		{"tail beyond end", mutate(data, 32, u64(1000)...), ErrTruncated, 32},
		{"tail signature", mutate(data, 413, 1), ErrFormat, 413},
		{"toc before header", mutate(data, 24, u64(12)...), ErrFormat, 24},
		{"too many columns", mutate(data, 48, 0xff, 0xff, 0, 0), ErrTooLarge, 48},
		{"rows beyond lookup", mutate(data, 40, u64(1<<33)...), ErrFormat, 348},
		{"rows per block zero", mutate(data, 348+1+4+1+8+1+1, 0), ErrFormat, 348},
		{"rows per block differ", mutate(data, 381+6+7+1+1, 4), ErrUnsupported, 381},
		{"bad LEB", mutate(data, 348+1+4+1+8+1+1, 0x85), ErrFormat, 348},
		{"lookup offset", mutate(data, 348+1+4+1+8+1+1+1, 0, 0, 0, 0, 0, 0, 0, 1), ErrFormat, 348},
		{"block beyond tail", mutate(data, 316, 0xff, 0x01), ErrTruncated, 316},
		{"inflated too large", mutate(data, 316+12, 0xff, 0xff, 0xff, 0x7f), ErrTooLarge, 316},
		{"over-long name", mutate(data, 348, 0x7f), ErrTruncated, 348},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), &ReaderOptions{FileName: "x.idv"})
			if err == nil {
				_, err = r.ReadChunk(context.Background(), 0)
			}
			var pe *mlfeed.PosError
			if !errors.As(err, &pe) || !errors.Is(err, tc.want) || pe.File != "x.idv" || pe.Offset != tc.off {
				t.Fatalf("got %v, want %v at offset %d", err, tc.want, tc.off)
			}
		})
	}
}

func TestDeadColumns(t *testing.T) {
	data, err := os.ReadFile(testutil.Testdata(t, "idv", "termlookup-DefaultMap.idv"))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	// Compression kind 2 (the doc's "zlib") makes column 0 dead, as in ML.NET.
	bad := mutate(data, 348+1+4+1+8+1, 2)
	r, err := NewReader(bytes.NewReader(bad), int64(len(bad)), &ReaderOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "schema", schemaStrings(r.Schema()), []string{"Value dense float32 1"})
	eq(t, "values", columns(t, r), [][]string{{"0", "1", "2", "3", "4"}})
	if !strings.Contains(log.String(), "unknown compression kind 2") {
		t.Errorf("log %q", log.String())
	}
	// An unknown codec name ("TextSpan" -> "TextSpam") too.
	bad = mutate(data, 348+1+4+1+1+6, 'm')
	r, err = NewReader(bytes.NewReader(bad), int64(len(bad)), nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "schema", schemaStrings(r.Schema()), []string{"Value dense float32 1"})
	eq(t, "warnings", len(r.Warnings()), 1)
}

// TestCorruptBlocks damages blocks of a file the writer produced and checks that each error
// names the file, column, block and the byte offset of the damage.
func TestCorruptBlocks(t *testing.T) {
	data := writeAll(t, allTypes(23, 23), &WriterOptions{Uncompressed: true, MaxRowsPerBlock: 7})
	r := readBytes(t, data, nil)
	col := func(name string) *column {
		for _, c := range r.cols {
			if c.name == name {
				return c
			}
		}
		t.Fatalf("no column %q", name)
		return nil
	}
	le := binary.LittleEndian
	sparse := col("sparse").blocks[1].off // rows 7..13: counts 2,0,-1,2,0,-1,2; indices 3,8 ×3
	text := col("text").blocks[0].off
	dtoff := col("dt").blocks[2].off
	for _, tc := range []struct {
		name  string
		off   int64
		patch []byte
		field string
		want  error
	}{
		{"index out of order", sparse + 8 + 28 + 4 + 4, le.AppendUint32(nil, 2), `column "sparse" block 1`, ErrFormat},
		{"index out of range", sparse + 8 + 28 + 4 + 4, le.AppendUint32(nil, 10), `column "sparse" block 1`, ErrFormat},
		{"index count", sparse + 8 + 28, le.AppendUint32(nil, 5), `column "sparse" block 1`, ErrFormat},
		{"sparse count not below length", sparse + 8, le.AppendUint32(nil, 10), `column "sparse" block 1`, ErrFormat},
		{"vector count", sparse, le.AppendUint32(nil, 6), `column "sparse" block 1`, ErrFormat},
		{"text boundary decreases", text + 4 + 8, le.AppendUint32(nil, 1), `column "text" block 0`, ErrFormat},
		{"text count", text, le.AppendUint32(nil, 8), `column "text" block 0`, ErrFormat},
		{"over-long string", text + 4 + 28, []byte{0xff, 0x7f}, `column "text" block 0`, ErrFormat},
		{"DateTime out of range", dtoff, le.AppendUint64(nil, 1<<63-1), `column "dt" block 2`, ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := mutate(data, int(tc.off), tc.patch...)
			r := readBytes(t, bad, &ReaderOptions{FileName: "bad.idv"})
			var errs []error
			r.Validate(context.Background(), func(err error) bool { errs = append(errs, err); return true })
			if len(errs) != 1 {
				t.Fatalf("got %d errors %v, want 1", len(errs), errs)
			}
			var pe *mlfeed.PosError
			err := errs[0]
			if !errors.As(err, &pe) || !errors.Is(err, tc.want) || pe.File != "bad.idv" || pe.Field != tc.field || pe.Offset != tc.off {
				t.Fatalf("got %v (offset %d), want %v in %s at offset %d", err, pe.Offset, tc.want, tc.field, tc.off)
			}
		})
	}
	// In a compressed file the offset is the block's, and the message gives the byte inside
	// the inflated block.
	data = writeAll(t, allTypes(23, 23), &WriterOptions{MaxRowsPerBlock: 7})
	r = readBytes(t, data, nil)
	e := r.cols[19].blocks[1]
	bad := mutate(data, int(e.off), 0xff, 0xff, 0xff) // a reserved block type or garbage codes
	r = readBytes(t, bad, &ReaderOptions{FileName: "bad.idv"})
	_, err := r.ReadChunk(context.Background(), 0)
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.Offset != e.off || pe.Field != `column "sparse" block 1` {
		t.Fatalf("got %v, want an error at block offset %d", err, e.off)
	}
}

func TestDeadMetadata(t *testing.T) {
	data, err := os.ReadFile(testutil.Testdata(t, "idv", "optionalcolumn-LoaderSchema.idv"))
	if err != nil {
		t.Fatal(err)
	}
	// Column 0's metadata table at 288: count, kind "SlotNames", codec VBuffer (27 bytes),
	// then the compression byte.
	bad := mutate(data, 288+1+10+27, 2)
	r := readBytes(t, bad, nil)
	if md := r.Schema().Streams[0].Metadata; len(md) != 0 {
		t.Errorf("metadata %v kept", md)
	}
	eq(t, "other column's metadata", metaStrings(r.Schema()), []string{`NumericalFeatures/SlotNames: dense string 3=["1" "1" "1"]`})
	eq(t, "warnings", r.Warnings(), []string{`column "CategoricalFeatures" metadata "SlotNames" skipped: unknown compression kind 2`})
}

// TestLargeTables: tables longer than the first read window are read whole.
func TestLargeTables(t *testing.T) {
	var sc mlfeed.Schema
	var anns []mlfeed.Annotation
	for i := 0; i < 80; i++ {
		anns = append(anns, annotation(fmt.Sprintf("kind-%02d-%s", i, strings.Repeat("k", 30)), mlfeed.Stream{Type: mlfeed.Int32, Dim: 1}, num(mlfeed.Int32, float64(i))))
	}
	for i := 0; i < 300; i++ {
		st := mlfeed.Stream{Name: fmt.Sprintf("column-%03d-%s", i, strings.Repeat("x", 40)), Type: mlfeed.Float32, Dim: 1}
		if i == 7 {
			st.Metadata = anns
		}
		sc.Streams = append(sc.Streams, st)
	}
	src := &memSource{schema: sc}
	r := readBytes(t, writeAll(t, src, nil), nil)
	eq(t, "schema", schemaStrings(r.Schema()), schemaStrings(sc))
	eq(t, "metadata", metaStrings(r.Schema()), metaStrings(sc))
}

// TestChunkOrder: chunks read in order and out of order are the same.
func TestChunkOrder(t *testing.T) {
	data := writeAll(t, allTypes(40, 40), &WriterOptions{MaxRowsPerBlock: 3})
	want := columns(t, readBytes(t, data, &ReaderOptions{BlocksPerChunk: 2}))
	r := readBytes(t, data, &ReaderOptions{BlocksPerChunk: 2})
	eq(t, "in order", columns(t, r), want)
	// Reverse order, then in order again after a jump.
	n := len(r.Chunks())
	got := make([]string, 0, 40)
	for i := n - 1; i >= 0; i-- {
		c, err := r.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for s := int64(0); s < c.Streams[0].Samples(); s++ {
			rows = append(rows, sampleString(&r.Schema().Streams[0], &c.Streams[0], s))
		}
		got = append(rows, got...)
	}
	eq(t, "reverse order", got, want[0])
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOverlappingBlocksBomb: lookup entries that all point at the same bytes cannot make the
// reader allocate more than the stream could inflate to.
func TestOverlappingBlocksBomb(t *testing.T) {
	st := mlfeed.Stream{Name: "x", Type: mlfeed.Float32, Dim: 1}
	b := dataBuilder{st: st}
	for i := 0; i < 8; i++ {
		b.add(num(mlfeed.Float32, float64(i)))
	}
	src := &memSource{schema: mlfeed.Schema{Streams: []mlfeed.Stream{st}}, chunks: []*mlfeed.Chunk{{Sequences: 8, Streams: []mlfeed.StreamData{b.d}}}}
	data := writeAll(t, src, &WriterOptions{MaxRowsPerBlock: 1})
	r := readBytes(t, data, nil)
	c := r.cols[0]
	le := binary.LittleEndian
	span := int32(r.Header.TailOffset - 256)
	for k := range c.blocks {
		at := c.lookupOff + 16*int64(k)
		le.PutUint64(data[at:], 256)
		le.PutUint32(data[at+8:], uint32(span))
		le.PutUint32(data[at+12:], uint32(span*1000))
	}
	_, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

// TestAlignedValues: 8-byte values that follow a vector block's header are handed out aligned,
// so that typed views do not copy.
func TestAlignedValues(t *testing.T) {
	st := mlfeed.Stream{Name: "v", Type: mlfeed.Float64, Dim: 3}
	b := dataBuilder{st: st}
	for i := 0; i < 4; i++ { // 4 rows: the values start at byte 12+16 = 28 of the block
		b.add(num(mlfeed.Float64, float64(i), 1, 2))
	}
	src := &memSource{schema: mlfeed.Schema{Streams: []mlfeed.Stream{st}}, chunks: []*mlfeed.Chunk{{Sequences: 4, Streams: []mlfeed.StreamData{b.d}}}}
	for _, opts := range []*WriterOptions{nil, {Uncompressed: true}} {
		r := readBytes(t, writeAll(t, src, opts), nil)
		c, err := r.ReadChunk(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		v := c.Streams[0].Values
		if a, b := v.Float64s(), v.Float64s(); &a[0] != &b[0] || a[4] != 1 {
			t.Errorf("float64 view copies or is wrong: %v", a)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xE2\x82b", "a\uFFFDb"},             // truncated 3-byte sequence: one replacement
		{"\xF0\x9F\x98", "\uFFFD"},             // truncated 4-byte sequence
		{"\xC0\xAF", "\uFFFD\uFFFD"},           // C0 can never start a sequence
		{"\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"}, // an encoded surrogate
		{"x\x80y\xFF", "x\uFFFDy\uFFFD"},
		{"ok \uFFFD ok", "ok \uFFFD ok"},
	} {
		if got := validUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
