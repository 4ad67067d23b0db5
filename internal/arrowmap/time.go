package arrowmap

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mlfeed/mlfeed"
)

// dayTicks is a day in mlfeed's ticks of 100 ns.
const dayTicks = 864000000000

// unitTicks says how counts of Arrow time unit u become mlfeed ticks of 100 ns: ticks = v*mul,
// or v/div for nanoseconds (div 100; exact multiples only).
func unitTicks(u arrow.TimeUnit) (mul, div int64) {
	switch u {
	case arrow.Second:
		return 10_000_000, 0
	case arrow.Millisecond:
		return 10_000, 0
	case arrow.Microsecond:
		return 10, 0
	}
	return 1, 100
}

// temporal says how values of an Arrow date, time, timestamp or duration type become mlfeed
// ticks (unitTicks), plus mlfeed.EpochTicks for dates and timestamps (t DateTime); times of
// day and durations are Durations. ok is false for other types.
func temporal(dt arrow.DataType) (mul, div int64, t mlfeed.ElemType, ok bool) {
	switch d := dt.(type) {
	case *arrow.Date32Type:
		return dayTicks, 0, mlfeed.DateTime, true
	case *arrow.Date64Type:
		return 10_000, 0, mlfeed.DateTime, true
	case arrow.TemporalWithUnit: // timestamps, times of day, durations
		mul, div = unitTicks(d.TimeUnit())
		if d.ID() == arrow.TIMESTAMP {
			return mul, div, mlfeed.DateTime, true
		}
		return mul, div, mlfeed.Duration, true
	}
	return 0, 0, mlfeed.Invalid, false
}

// ticks converts elements [from, to) of a date, time, timestamp or duration array into mlfeed
// ticks (into prev's memory when given), refusing a value the ticks cannot hold exactly: a
// nanosecond count that is not a multiple of 100, or a date outside the years 1-9999.
func (dec *Decoder) ticks(arr arrow.Array, from, to int64, t mlfeed.ElemType, prev mlfeed.Buffer, loc locator) (mlfeed.Buffer, error) {
	dt := arr.DataType()
	mul, div, tt, _ := temporal(dt)
	if tt != t {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "%s values read as %s", dt, t))
	}
	n := int(to - from)
	if n == 0 {
		return mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, 0)}, nil
	}
	w := int64(dt.(arrow.FixedWidthDataType).BitWidth() / 8)
	bufs := arr.Data().Buffers()
	off := int64(arr.Data().Offset())
	if len(bufs) < 2 || bufs[1] == nil || (off+to)*w > int64(bufs[1].Len()) {
		return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrFormat, loc.errorf(from, "%s value buffer too short", dt))
	}
	in := bufs[1].Bytes()[(off+from)*w : (off+to)*w]
	out := mlfeed.Buffer{Type: t, Bytes: grow(prev.Bytes, 8*n)}
	for k := range n {
		var v int64
		if w == 4 {
			v = int64(int32(binary.LittleEndian.Uint32(in[4*k:])))
		} else {
			v = int64(binary.LittleEndian.Uint64(in[8*k:]))
		}
		var x int64
		why := ""
		switch {
		case div > 0 && v%div != 0:
			why = "is not a whole number of 100 ns ticks"
		case div > 0:
			x = v / div
		case v > math.MaxInt64/mul || v < math.MinInt64/mul:
			why = "does not fit int64 ticks of 100 ns"
		default:
			x = v * mul
		}
		if why == "" && t == mlfeed.DateTime {
			if x < -mlfeed.EpochTicks || x > mlfeed.MaxTicks-mlfeed.EpochTicks {
				why = "is outside the years 1 to 9999"
			}
			x += mlfeed.EpochTicks
		}
		if why != "" {
			span := ""
			if t == mlfeed.DateTime {
				span = " from 0001-01-01"
			}
			return mlfeed.Buffer{}, fmt.Errorf("%w: %v", ErrUnsupported, loc.errorf(from+int64(k), "%s value %d%s %s: mlfeed's %s holds int64 ticks of 100 ns%s", dt, v, when(dt, v), why, t, span))
		}
		binary.LittleEndian.PutUint64(out.Bytes[8*k:], uint64(x))
	}
	return out, nil
}

// when returns " (the time it stands for)" for a timestamp or date value within Go's reach,
// for messages.
func when(dt arrow.DataType, v int64) string {
	var tm time.Time
	switch d := dt.(type) {
	case *arrow.TimestampType:
		switch d.Unit {
		case arrow.Second:
			tm = time.Unix(v, 0)
		case arrow.Millisecond:
			tm = time.UnixMilli(v)
		case arrow.Microsecond:
			tm = time.UnixMicro(v)
		default:
			tm = time.Unix(0, v)
		}
	case *arrow.Date64Type:
		tm = time.UnixMilli(v)
	case *arrow.Date32Type:
		tm = time.Unix(v*86400, 0)
	default:
		return ""
	}
	return " (" + tm.UTC().Format(time.RFC3339Nano) + ")"
}
