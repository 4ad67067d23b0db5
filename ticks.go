package mlfeed

import (
	"strconv"
	"time"
)

// AppendTicks appends a DateTime or Duration value as text: a DateTime as an ISO 8601 date and
// time without a zone ("2024-01-02T03:04:05.1234567", the fraction without trailing zeros,
// none for a whole second), a Duration as .NET prints a TimeSpan, [-][d.]hh:mm:ss[.fffffff]
// ("-1.02:03:04.5"). Other types append the ticks as a decimal number.
func AppendTicks(b []byte, t ElemType, ticks int64) []byte {
	switch t {
	case DateTime:
		if ticks < 0 || ticks > MaxTicks {
			break
		}
		// whole seconds since 1970 (ticks >= 0 rounds down; EpochTicks is whole seconds)
		tm := time.Unix(ticks/10_000_000-EpochTicks/10_000_000, 0).UTC()
		b = tm.AppendFormat(b, "2006-01-02T15:04:05")
		return appendFraction(b, ticks%10_000_000)
	case Duration:
		u := uint64(ticks)
		if ticks < 0 {
			b = append(b, '-')
			u = -u
		}
		const second = 10_000_000
		s := u / second
		if d := s / 86400; d > 0 {
			b = strconv.AppendUint(b, d, 10)
			b = append(b, '.')
		}
		for i, v := range []uint64{s / 3600 % 24, s / 60 % 60, s % 60} {
			if i > 0 {
				b = append(b, ':')
			}
			b = append(b, byte('0'+v/10), byte('0'+v%10))
		}
		return appendFraction(b, int64(u%second))
	}
	return strconv.AppendInt(b, ticks, 10)
}

// appendFraction appends ".fffffff" for f ticks of a second (0 <= f < 10^7), without trailing
// zeros; nothing for 0.
func appendFraction(b []byte, f int64) []byte {
	if f == 0 {
		return b
	}
	d := []byte(strconv.FormatInt(f+10_000_000, 10))[1:]
	for d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return append(append(b, '.'), d...)
}
