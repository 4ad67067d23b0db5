package npy

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestTimeRefused: a count without exact ticks, NaT, and units mlfeed cannot convert are
// refused naming the array, the element and its byte offset; malformed units are invalid.
func TestTimeRefused(t *testing.T) {
	i8 := func(v ...int64) []byte {
		b := make([]byte, 8*len(v))
		for k, x := range v {
			binary.LittleEndian.PutUint64(b[8*k:], uint64(x))
		}
		return b
	}
	for _, c := range []struct {
		descr string
		data  []byte
		err   error
		want  string
	}{
		{"<M8[ns]", i8(100, 150), ErrUnsupported, `byte offset 136 (array "labels" element 1): npy: unsupported: datetime64[ns] value 150 is not a whole number of 100 ns ticks`},
		{"<M8[D]", i8(0, -1<<63), ErrUnsupported, "element 1): npy: unsupported: datetime64[D] value -9223372036854775808 is NaT (not a time), a missing value"},
		{"<M8[D]", i8(2932897), ErrUnsupported, "is outside the years 1 to 9999"},
		{"<M8[Y]", i8(8030), ErrUnsupported, "is outside the years 1 to 9999"},
		{"<M8[M]", i8(-23641), ErrUnsupported, "is outside the years 1 to 9999"},
		{"<m8[s]", i8(1 << 62), ErrUnsupported, "does not fit int64 ticks"},
		{"<m8[M]", i8(1), ErrUnsupported, "a timedelta in months has no fixed length"},
		{"<M8", i8(), ErrUnsupported, "a generic datetime64, without a unit"},
		{"<M8[xs]", i8(1), ErrFormat, `unknown time unit "xs"`},
		{"<M8[ns", i8(1), ErrFormat, "the unit is not in brackets"},
		{"|M8[ns]", i8(1), ErrFormat, "byte order '|'"},
	} {
		path := filepath.Join(t.TempDir(), "t.npy")
		if err := os.WriteFile(path, npyBytes("{'descr': '"+c.descr+"', 'fortran_order': False, 'shape': ("+map[bool]string{true: "1", false: "2"}[len(c.data) == 8]+",), }", c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := Open(path, nil)
		if err == nil {
			_, err = rd.ReadChunk(context.Background(), 0)
			rd.Close()
		}
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %v: %s", c.descr, err, c.err, c.want)
		}
	}
}

// TestTimeFile reads numpy's datetime64[us], big-endian datetime64[D] and timedelta64[ms]
// (testdata/time.npz) as ticks, checked against Go's calendar.
func TestTimeFile(t *testing.T) {
	rd, err := Open("testdata/time.npz", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, mo time.Month, d, h, mi, s, us int) int64 {
		return testutil.Ticks(time.Date(y, mo, d, h, mi, s, us*1000, time.UTC))
	}
	want := map[string][]int64{
		"t":  {at(2024, 1, 2, 3, 4, 5, 123456), 0, at(9999, 12, 31, 23, 59, 59, 999999)},
		"d":  {at(2024, 2, 29, 0, 0, 0, 0), at(1969, 12, 31, 0, 0, 0, 0), at(1970, 1, 1, 0, 0, 0, 0)},
		"dt": {-50_000, 0, 864_000_000_000},
	}
	for k, st := range rd.Schema().Streams {
		for i, w := range want[st.Name] {
			if got := c.Streams[k].Values.Int64At(i); got != w {
				t.Errorf("%s[%d]: %d, want %d", st.Name, i, got, w)
			}
		}
	}
}
