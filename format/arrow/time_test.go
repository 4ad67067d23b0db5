package arrow

import (
	"context"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestTimeFile reads apache-arrow JS's dates, times, timestamps of every unit and durations
// (testdata/apache-arrow-js-time.arrow, check.mjs write-time) as ticks, checked against Go's
// calendar: the same file TestPeerTimes makes afresh, here without the peer.
func TestTimeFile(t *testing.T) {
	rd, err := Open("testdata/apache-arrow-js-time.arrow", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	unix := func(s, ns int64) int64 { return testutil.Ticks(time.Unix(s, ns)) }
	year1, last := testutil.Ticks(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), testutil.Ticks(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
	const ms, us, day = 10_000, 10, 864_000_000_000
	want := map[string][]int64{
		"ts_s":  {unix(0, 0), unix(1704164645, 0), year1, last + day - 10_000_000},
		"ts_ms": {unix(1704164645, 123e6), unix(0, -1e6), year1, last + day - ms},
		"ts_us": {unix(1704164645, 123456e3), unix(0, 1e3), testutil.Ticks(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)), unix(0, 0)},
		"ts_ns": {unix(1704164645, 123456700), unix(0, -100), unix(0, -9223372036854775800), unix(0, 9223372036854775800)},
		"d32":   {unix(0, 0), testutil.Ticks(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)), year1, last},
		"d64":   {unix(0, 0), testutil.Ticks(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)), year1, unix(86400, 0)},
		"t32":   {0, 86399999 * ms, 43200000 * ms, ms},
		"t64":   {0, 863999999999, 1, 432_000_000_000},
		"dur":   {-5 * us, 0, 922337203685477580 * us, -922337203685477580 * us},
	}
	sc := rd.Schema()
	for name, w := range want {
		k := sc.Index(name)
		if k < 0 {
			t.Fatalf("no stream %q", name)
		}
		typ := map[bool]mlfeed.ElemType{true: mlfeed.Duration, false: mlfeed.DateTime}[name[0] == 't' && name[1] != 's' || name == "dur"]
		if sc.Streams[k].Type != typ {
			t.Errorf("%s: %s, want %s", name, sc.Streams[k].Type, typ)
		}
		for i, v := range w {
			if got := c.Streams[k].Values.Int64At(i); got != v {
				t.Errorf("%s[%d]: %d, want %d", name, i, got, v)
			}
		}
	}
}
