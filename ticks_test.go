package mlfeed

import (
	"math"
	"testing"
)

func TestAppendTicks(t *testing.T) {
	for _, c := range []struct {
		t     ElemType
		ticks int64
		want  string
	}{
		{DateTime, 0, "0001-01-01T00:00:00"},
		{DateTime, EpochTicks, "1970-01-01T00:00:00"},
		{DateTime, EpochTicks - 1, "1969-12-31T23:59:59.9999999"},
		{DateTime, 638397614451234560, "2024-01-02T03:04:05.123456"},
		{DateTime, MaxTicks, "9999-12-31T23:59:59.9999999"},
		{DateTime, MaxTicks + 1, "3155378976000000000"}, // no date: the ticks
		{DateTime, -1, "-1"},
		{Duration, 0, "00:00:00"},
		{Duration, 5, "00:00:00.0000005"},
		{Duration, -938_845_000_000, "-1.02:04:44.5"},
		{Duration, 863999999999, "23:59:59.9999999"},
		{Duration, math.MinInt64, "-10675199.02:48:05.4775808"},
		{Duration, math.MaxInt64, "10675199.02:48:05.4775807"},
		{Int64, 42, "42"},
	} {
		if got := string(AppendTicks(nil, c.t, c.ticks)); got != c.want {
			t.Errorf("%s %d: %q, want %q", c.t, c.ticks, got, c.want)
		}
	}
}
