package fastfloat

import (
	"math"
	"math/big"
	"math/bits"
)

// The Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per Second", 2021) turns
// a decimal w·10^q into the nearest float64 with one or two 64×64-bit multiplications by a
// 128-bit approximation of 5^q, and recognises the rare inputs it cannot decide, which then go
// to strconv. mlfeed uses it where Clinger's fast path does not apply.

const (
	minQ = -30
	maxQ = 30
)

// pow5 holds, for q in [minQ, maxQ], floor(5^q · 2^(127-e)) as hi:lo, where e = floor(log2 5^q),
// so that the top bit of hi is set; exp2 holds e.
var pow5 [maxQ - minQ + 1]struct {
	hi, lo uint64
	exp2   int
}

func init() {
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
		p := &pow5[q-minQ]
		p.exp2 = e
		p.lo = v.Uint64()
		p.hi = new(big.Int).Rsh(&v, 64).Uint64()
	}
}

// lemire returns w·10^q as a float64, or ok false when it cannot decide the rounding (or q is
// out of its table). w must not be zero.
func lemire(w uint64, q int, neg bool) (float64, bool) {
	if q < minQ || q > maxQ {
		return 0, false
	}
	p := &pow5[q-minQ]
	clz := bits.LeadingZeros64(w)
	w <<= uint(clz)
	hi, lo := bits.Mul64(w, p.hi)
	if hi&0x1FF == 0x1FF && lo+w < lo {
		hi2, lo2 := bits.Mul64(w, p.lo)
		nlo := lo + hi2
		if nlo < lo {
			hi++
		}
		lo = nlo
		if hi&0x1FF == 0x1FF && lo+1 == 0 && lo2+w < lo2 {
			return 0, false
		}
	}
	msb := int(hi >> 63)
	mant := hi >> uint(msb+9)
	if lo == 0 && hi&0x1FF == 0 && mant&3 == 1 {
		return 0, false
	}
	mant += mant & 1
	mant >>= 1
	e := q + p.exp2 + 63 + msb - clz
	if mant>>53 != 0 {
		mant >>= 1
		e++
	}
	be := e + 1023
	if be <= 0 || be >= 0x7FF {
		return 0, false // subnormal or overflow: leave it to strconv
	}
	b := mant&(1<<52-1) | uint64(be)<<52
	if neg {
		b |= 1 << 63
	}
	return math.Float64frombits(b), true
}
