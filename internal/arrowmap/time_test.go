package arrowmap

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// temporalArray builds a one-column array of Arrow type dt from raw values.
func temporalArray(t *testing.T, dt arrow.DataType, raw []int64) arrow.Array {
	t.Helper()
	w := dt.(arrow.FixedWidthDataType).BitWidth() / 8
	b := make([]byte, w*len(raw))
	for i, v := range raw {
		if w == 4 {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
		} else {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	}
	return array.MakeFromData(array.NewData(dt, len(raw), []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0))
}

// decodeOne maps and decodes a record of one column, returning the stream and its values
// as int64.
func decodeOne(t *testing.T, arr arrow.Array) (mlfeed.Stream, []int64, error) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arr.DataType()}}, nil)
	p, err := NewPlan(sc, false, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", arr.DataType(), err)
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
	dec := Decoder{Plan: p}
	c, err := dec.Decode(rec, 0, nil)
	if err != nil {
		return p.Schema.Streams[0], nil, err
	}
	b := c.Streams[0].Values
	out := make([]int64, b.Len())
	for i := range out {
		out[i] = b.Int64At(i)
	}
	return p.Schema.Streams[0], out, nil
}

// TestTemporal reads every Arrow date, time, timestamp and duration type as mlfeed's
// DateTime or Duration ticks, and checks each against Go's calendar.
func TestTemporal(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	t1 := at(2024, 1, 2, 3, 4, 5, 123456700)
	first, last := at(1, 1, 1, 0, 0, 0, 0), at(9999, 12, 31, 23, 59, 59, 999999900)
	cases := []struct {
		dt   arrow.DataType
		raw  []int64
		want []time.Time // DateTime
		dur  []int64     // Duration, in ticks
	}{
		{dt: &arrow.TimestampType{Unit: arrow.Second}, raw: []int64{t1.Unix(), first.Unix(), last.Unix()},
			want: []time.Time{t1.Truncate(time.Second), first, last.Truncate(time.Second)}},
		{dt: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, raw: []int64{t1.UnixMilli(), -1},
			want: []time.Time{t1.Truncate(time.Millisecond), at(1969, 12, 31, 23, 59, 59, 999000000)}},
		{dt: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, raw: []int64{t1.UnixMicro(), first.Unix() * 1e6},
			want: []time.Time{t1.Truncate(time.Microsecond), first}},
		{dt: &arrow.TimestampType{Unit: arrow.Nanosecond}, raw: []int64{t1.UnixNano(), -100, 0},
			want: []time.Time{t1, at(1969, 12, 31, 23, 59, 59, 999999900), at(1970, 1, 1, 0, 0, 0, 0)}},
		{dt: arrow.FixedWidthTypes.Date32, raw: []int64{19724, -719162, 2932896},
			want: []time.Time{at(2024, 1, 2, 0, 0, 0, 0), first, at(9999, 12, 31, 0, 0, 0, 0)}},
		{dt: arrow.FixedWidthTypes.Date64, raw: []int64{at(2024, 1, 2, 0, 0, 0, 0).UnixMilli()},
			want: []time.Time{at(2024, 1, 2, 0, 0, 0, 0)}},
		{dt: arrow.FixedWidthTypes.Time32s, raw: []int64{86399}, dur: []int64{86399 * 10_000_000}},
		{dt: arrow.FixedWidthTypes.Time32ms, raw: []int64{86399999}, dur: []int64{86399999 * 10_000}},
		{dt: arrow.FixedWidthTypes.Time64us, raw: []int64{1}, dur: []int64{10}},
		{dt: arrow.FixedWidthTypes.Time64ns, raw: []int64{86399999999900}, dur: []int64{863999999999}},
		{dt: arrow.FixedWidthTypes.Duration_s, raw: []int64{-3, 922337203685}, dur: []int64{-30_000_000, 9223372036850000000}},
		{dt: arrow.FixedWidthTypes.Duration_ns, raw: []int64{-9223372036854775800}, dur: []int64{-92233720368547758}},
	}
	for _, c := range cases {
		st, got, err := decodeOne(t, temporalArray(t, c.dt, c.raw))
		if err != nil {
			t.Errorf("%s: %v", c.dt, err)
			continue
		}
		wantType := mlfeed.Duration
		want := c.dur
		if c.want != nil {
			wantType = mlfeed.DateTime
			want = nil
			for _, tm := range c.want {
				want = append(want, testutil.Ticks(tm))
			}
		}
		if st.Type != wantType || st.Dim != 1 {
			t.Errorf("%s: stream %v, want %s", c.dt, st, wantType)
		}
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("%s: value %d: %v, want %v", c.dt, i, got, want)
				break
			}
		}
	}
}

// TestTemporalDictionary reads dictionary-encoded timestamps.
func TestTemporalDictionary(t *testing.T) {
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	dict := temporalArray(t, ts, []int64{0, 1_000_000})
	idx := temporalArray(t, arrow.PrimitiveTypes.Int32, []int64{1, 0, 1})
	arr := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: ts}, idx, dict)
	st, got, err := decodeOne(t, arr)
	if err != nil {
		t.Fatal(err)
	}
	e := testutil.Ticks(time.Unix(0, 0))
	if st.Type != mlfeed.DateTime || len(got) != 3 || got[0] != e+10_000_000 || got[1] != e || got[2] != e+10_000_000 {
		t.Errorf("%v: %v", st, got)
	}
}

// TestTemporalRefused: a value the ticks cannot hold exactly is refused as unsupported,
// naming the column, the row and the value, never rounded or wrapped.
func TestTemporalRefused(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		raw  []int64
		want string
	}{
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, []int64{0, 1704164645123456789},
			`row 1: timestamp[ns] value 1704164645123456789 (2024-01-02T03:04:05.123456789Z) is not a whole number of 100 ns ticks`},
		{arrow.FixedWidthTypes.Date32, []int64{2932897}, `row 0: date32 value 2932897 (10000-01-01T00:00:00Z) is outside the years 1 to 9999`},
		{&arrow.TimestampType{Unit: arrow.Second}, []int64{-62135596801}, "is outside the years 1 to 9999"},
		{&arrow.TimestampType{Unit: arrow.Second}, []int64{1 << 62}, "does not fit int64 ticks"},
		{arrow.FixedWidthTypes.Duration_ms, []int64{5, -1 << 62}, "row 1: duration[ms] value -4611686018427387904 does not fit int64 ticks"},
		{arrow.FixedWidthTypes.Time64ns, []int64{150}, "is not a whole number of 100 ns ticks"},
	}
	for _, c := range cases {
		_, _, err := decodeOne(t, temporalArray(t, c.dt, c.raw))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `column "c", `) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want unsupported: %s", c.dt, c.raw, err, c.want)
		}
	}
}
