// Package bytesize parses sizes in bytes as every size setting of mlfeed takes them (--memory,
// --chunk-size, --shard-size, the node cache's DIR:SIZE).
package bytesize

import (
	"errors"
	"strconv"
	"strings"
)

// Max is the largest size Parse accepts: 1 PiB.
const Max = 1 << 50

// ErrSize is the error of a string that is no size.
var ErrSize = errors.New("want a size such as 65536, 64MiB, 64M or 1GB, at most 1 PiB")

// Parse reads a whole number with an optional unit, as GNU coreutils (dd, sort) read them,
// case aside: K, M, G, T, P and KiB, MiB, GiB, TiB, PiB are powers of 1024; KB, MB, GB, TB, PB
// powers of 1000; B or nothing bytes. Surrounding spaces are ignored; empty means 0.
func Parse(s string) (int64, error) {
	num, mult := strings.ToUpper(strings.TrimSpace(s)), int64(1)
	if num == "" {
		return 0, nil
	}
units:
	for i, u := range "KMGTP" {
		for _, suffix := range []string{string(u) + "IB", string(u) + "B", string(u)} {
			if strings.HasSuffix(num, suffix) {
				base := int64(1024)
				if suffix == string(u)+"B" {
					base = 1000
				}
				num = strings.TrimSuffix(num, suffix)
				for range i + 1 {
					mult *= base
				}
				break units
			}
		}
	}
	if mult == 1 {
		num = strings.TrimSuffix(num, "B")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > Max/mult {
		return 0, ErrSize
	}
	return n * mult, nil
}
