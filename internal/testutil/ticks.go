package testutil

import "time"

// Ticks returns tm as mlfeed's DateTime counts it, from Go's calendar alone: 100-ns ticks since
// 0001-01-01T00:00:00 UTC (tests check conversions against it, not against mlfeed.EpochTicks).
func Ticks(tm time.Time) int64 {
	year1 := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return (tm.Unix()-year1)*10_000_000 + int64(tm.Nanosecond()/100)
}
