package npy

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mlfeed/mlfeed"
)

// tickUnit says how the counts of a datetime64 or timedelta64 unit become mlfeed's ticks of
// 100 ns: ticks = v*num/den (num and den without a common factor; a count that den does not
// divide is refused), or, for the calendar units (months > 0), the first instant of the month
// v*months months after 1970-01. date: the counts are from 1970-01-01, the ticks from
// 0001-01-01.
type tickUnit struct {
	num, den int64
	months   int64
	date     bool
}

// unitTicks gives numpy's fixed-length time units in ticks: num/den ticks each.
var unitTicks = map[string][2]int64{
	"W": {7 * 864_000_000_000, 1}, "D": {864_000_000_000, 1}, "h": {36_000_000_000, 1},
	"m": {600_000_000, 1}, "s": {10_000_000, 1}, "ms": {10_000, 1}, "us": {10, 1},
	"ns": {1, 100}, "ps": {1, 100_000}, "fs": {1, 100_000_000}, "as": {1, 100_000_000_000},
}

// nat is numpy's NaT (not a time): the smallest int64.
const nat = math.MinInt64

// parseTimeDescr parses a datetime64 or timedelta64 dtype: "<M8[ns]", ">m8[100ns]", "<M8[D]".
func parseTimeDescr(s string) (h Header, err error) {
	h.Descr = s
	what := map[byte]string{'M': "datetime64", 'm': "timedelta64"}[s[1]]
	if s[0] != '<' && s[0] != '>' && s[0] != '=' {
		return h, fmt.Errorf("%w: dtype %q has byte order %q (want < or > for an 8-byte type)", ErrFormat, s, s[0])
	}
	if s == s[:3] {
		return h, fmt.Errorf("%w: dtype %q: a generic %s, without a unit (numpy gives it only NaT)", ErrUnsupported, s, what)
	}
	unit, ok := strings.CutPrefix(s[3:], "[")
	if unit, ok = strings.CutSuffix(unit, "]"); !ok || unit == "" {
		return h, fmt.Errorf("%w: dtype %q: the unit is not in brackets", ErrFormat, s)
	}
	digits := len(unit) - len(strings.TrimLeft(unit, "0123456789"))
	mult := int64(1)
	if digits > 0 {
		mult, err = strconv.ParseInt(unit[:digits], 10, 64)
		if err != nil || mult <= 0 || unit[0] == '0' {
			return h, fmt.Errorf("%w: dtype %q: unit multiplier %q", ErrUnsupported, s, unit[:digits])
		}
	}
	base := unit[digits:]
	tu := tickUnit{date: s[1] == 'M'}
	if r, ok := unitTicks[base]; ok {
		if mult > math.MaxInt64/r[0] {
			return h, fmt.Errorf("%w: dtype %q: a unit of more than 2^63 ticks of 100 ns", ErrUnsupported, s)
		}
		g := gcd(mult*r[0], r[1])
		tu.num, tu.den = mult*r[0]/g, r[1]/g
	} else if base == "Y" || base == "M" {
		if !tu.date {
			return h, fmt.Errorf("%w: dtype %q: a timedelta in %s has no fixed length", ErrUnsupported, s, map[string]string{"Y": "years", "M": "months"}[base])
		}
		tu.months = mult
		if base == "Y" {
			if mult > math.MaxInt64/12 {
				return h, fmt.Errorf("%w: dtype %q: unit multiplier %d", ErrUnsupported, s, mult)
			}
			tu.months *= 12
		}
	} else {
		return h, fmt.Errorf("%w: dtype %q: unknown time unit %q", ErrFormat, s, base)
	}
	h.Type = map[bool]mlfeed.ElemType{true: mlfeed.DateTime, false: mlfeed.Duration}[tu.date]
	h.Unit, h.ticks, h.ItemSize = unit, tu, 8
	h.BigEndian = s[0] == '>'
	return h, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// toTicks converts the little-endian counts of h's unit in b to mlfeed ticks, in place. It
// returns the index of the first value it cannot convert exactly (NaT, a count its unit's
// ticks do not divide, a time outside the years 1-9999 or the int64 ticks) and why.
func (h *Header) toTicks(b []byte) (int, error) {
	tu := h.ticks
	numpy, what, span := "timedelta64", "duration", ""
	if tu.date {
		numpy, what, span = "datetime64", "datetime", " from 0001-01-01"
	}
	for k := 0; k+8 <= len(b); k += 8 {
		v := int64(binary.LittleEndian.Uint64(b[k:]))
		x, why := tu.ticks(v)
		if why != "" {
			return k / 8, fmt.Errorf("%w: %s[%s] value %d %s: mlfeed's %s holds int64 ticks of 100 ns%s", ErrUnsupported, numpy, h.Unit, v, why, what, span)
		}
		binary.LittleEndian.PutUint64(b[k:], uint64(x))
	}
	return 0, nil
}

// ticks returns the ticks of count v, or why it has none.
func (tu tickUnit) ticks(v int64) (int64, string) {
	if v == nat {
		return 0, "is NaT (not a time), a missing value"
	}
	if tu.months > 0 {
		if v > math.MaxInt64/tu.months || v < math.MinInt64/tu.months {
			return 0, "is outside the years 1 to 9999"
		}
		m := v * tu.months // months since 1970-01
		y := 1970 + m/12
		mo := m % 12
		if mo < 0 {
			y, mo = y-1, mo+12
		}
		if y < 1 || y > 9999 {
			return 0, "is outside the years 1 to 9999"
		}
		start := time.Date(int(y), time.Month(mo+1), 1, 0, 0, 0, 0, time.UTC)
		return start.Unix()*10_000_000 + mlfeed.EpochTicks, ""
	}
	switch {
	case tu.den > 1 && v%tu.den != 0:
		return 0, "is not a whole number of 100 ns ticks"
	case v/tu.den > math.MaxInt64/tu.num || v/tu.den < math.MinInt64/tu.num:
		return 0, "does not fit int64 ticks of 100 ns"
	}
	x := v / tu.den * tu.num
	if tu.date {
		if x < -mlfeed.EpochTicks || x > mlfeed.MaxTicks-mlfeed.EpochTicks {
			return 0, "is outside the years 1 to 9999"
		}
		x += mlfeed.EpochTicks
	}
	return x, ""
}

// AppendData appends the values of b, of a type Descr names, as an array of dtype
// Descr(b.Type) holds them: their bytes, but for DateTime, whose ticks numpy's
// datetime64[100ns] counts from 1970 (no tick from 0001 to 9999 overflows).
func AppendData(dst []byte, b mlfeed.Buffer) []byte {
	start := len(dst)
	dst = append(dst, b.Bytes...)
	if b.Type == mlfeed.DateTime {
		for j := start; j+8 <= len(dst); j += 8 {
			v := int64(binary.LittleEndian.Uint64(dst[j:]))
			binary.LittleEndian.PutUint64(dst[j:], uint64(v-mlfeed.EpochTicks))
		}
	}
	return dst
}
