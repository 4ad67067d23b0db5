package fastfloat

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// computePow5 computes pow5's table with math/big: for each q in [minQ, maxQ],
// floor(5^q · 2^(127-e)) as hi:lo and e = floor(log2 5^q).
func computePow5() (t [maxQ - minQ + 1]struct {
	hi, lo uint64
	exp2   int
}) {
	one := big.NewInt(1)
	five := big.NewInt(5)
	for q := minQ; q <= maxQ; q++ {
		var v big.Int
		e := 0
		if q >= 0 {
			v.Exp(five, big.NewInt(int64(q)), nil)
			e = v.BitLen() - 1
			v.Lsh(&v, uint(127-e))
		} else {
			d := new(big.Int).Exp(five, big.NewInt(int64(-q)), nil)
			// 5^q = 1/d; e = floor(log2(1/d)) = -ceil(log2 d) = -(d.BitLen()) unless d is a
			// power of two, which it is not.
			e = -d.BitLen()
			n := new(big.Int).Lsh(one, uint(127-e))
			v.Quo(n, d)
		}
		p := &t[q-minQ]
		p.exp2 = e
		p.lo = v.Uint64()
		p.hi = new(big.Int).Rsh(&v, 64).Uint64()
	}
	return t
}

// The table in lemire.go is what math/big computes; on a difference the test prints the
// table to paste there.
func TestPow5Table(t *testing.T) {
	want := computePow5()
	if pow5 == want {
		return
	}
	var s strings.Builder
	for q := minQ; q <= maxQ; q++ {
		p := want[q-minQ]
		fmt.Fprintf(&s, "\t{0x%016X, 0x%016X, %d}, // 5^%d\n", p.hi, p.lo, p.exp2, q)
	}
	t.Errorf("pow5 differs from 5^q computed with math/big; the table:\n%s", s.String())
}
