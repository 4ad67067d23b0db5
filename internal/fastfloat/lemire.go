package fastfloat

import (
	"math"
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
// so that the top bit of hi is set; exp2 holds e. The table is written out, not computed when
// a program starts (TestPow5Table computes it with math/big, and prints it if they differ).
var pow5 = [maxQ - minQ + 1]struct {
	hi, lo uint64
	exp2   int
}{
	{0xA2425FF75E14FC31, 0xA1258379A94D028D, -70}, // 5^-30
	{0xCAD2F7F5359A3B3E, 0x096EE45813A04330, -68}, // 5^-29
	{0xFD87B5F28300CA0D, 0x8BCA9D6E188853FC, -66}, // 5^-28
	{0x9E74D1B791E07E48, 0x775EA264CF55347D, -63}, // 5^-27
	{0xC612062576589DDA, 0x95364AFE032A819D, -61}, // 5^-26
	{0xF79687AED3EEC551, 0x3A83DDBD83F52204, -59}, // 5^-25
	{0x9ABE14CD44753B52, 0xC4926A9672793542, -56}, // 5^-24
	{0xC16D9A0095928A27, 0x75B7053C0F178293, -54}, // 5^-23
	{0xF1C90080BAF72CB1, 0x5324C68B12DD6338, -52}, // 5^-22
	{0x971DA05074DA7BEE, 0xD3F6FC16EBCA5E03, -49}, // 5^-21
	{0xBCE5086492111AEA, 0x88F4BB1CA6BCF584, -47}, // 5^-20
	{0xEC1E4A7DB69561A5, 0x2B31E9E3D06C32E5, -45}, // 5^-19
	{0x9392EE8E921D5D07, 0x3AFF322E62439FCF, -42}, // 5^-18
	{0xB877AA3236A4B449, 0x09BEFEB9FAD487C2, -40}, // 5^-17
	{0xE69594BEC44DE15B, 0x4C2EBE687989A9B3, -38}, // 5^-16
	{0x901D7CF73AB0ACD9, 0x0F9D37014BF60A10, -35}, // 5^-15
	{0xB424DC35095CD80F, 0x538484C19EF38C94, -33}, // 5^-14
	{0xE12E13424BB40E13, 0x2865A5F206B06FB9, -31}, // 5^-13
	{0x8CBCCC096F5088CB, 0xF93F87B7442E45D3, -28}, // 5^-12
	{0xAFEBFF0BCB24AAFE, 0xF78F69A51539D748, -26}, // 5^-11
	{0xDBE6FECEBDEDD5BE, 0xB573440E5A884D1B, -24}, // 5^-10
	{0x89705F4136B4A597, 0x31680A88F8953030, -21}, // 5^-9
	{0xABCC77118461CEFC, 0xFDC20D2B36BA7C3D, -19}, // 5^-8
	{0xD6BF94D5E57A42BC, 0x3D32907604691B4C, -17}, // 5^-7
	{0x8637BD05AF6C69B5, 0xA63F9A49C2C1B10F, -14}, // 5^-6
	{0xA7C5AC471B478423, 0x0FCF80DC33721D53, -12}, // 5^-5
	{0xD1B71758E219652B, 0xD3C36113404EA4A8, -10}, // 5^-4
	{0x83126E978D4FDF3B, 0x645A1CAC083126E9, -7},  // 5^-3
	{0xA3D70A3D70A3D70A, 0x3D70A3D70A3D70A3, -5},  // 5^-2
	{0xCCCCCCCCCCCCCCCC, 0xCCCCCCCCCCCCCCCC, -3},  // 5^-1
	{0x8000000000000000, 0x0000000000000000, 0},   // 5^0
	{0xA000000000000000, 0x0000000000000000, 2},   // 5^1
	{0xC800000000000000, 0x0000000000000000, 4},   // 5^2
	{0xFA00000000000000, 0x0000000000000000, 6},   // 5^3
	{0x9C40000000000000, 0x0000000000000000, 9},   // 5^4
	{0xC350000000000000, 0x0000000000000000, 11},  // 5^5
	{0xF424000000000000, 0x0000000000000000, 13},  // 5^6
	{0x9896800000000000, 0x0000000000000000, 16},  // 5^7
	{0xBEBC200000000000, 0x0000000000000000, 18},  // 5^8
	{0xEE6B280000000000, 0x0000000000000000, 20},  // 5^9
	{0x9502F90000000000, 0x0000000000000000, 23},  // 5^10
	{0xBA43B74000000000, 0x0000000000000000, 25},  // 5^11
	{0xE8D4A51000000000, 0x0000000000000000, 27},  // 5^12
	{0x9184E72A00000000, 0x0000000000000000, 30},  // 5^13
	{0xB5E620F480000000, 0x0000000000000000, 32},  // 5^14
	{0xE35FA931A0000000, 0x0000000000000000, 34},  // 5^15
	{0x8E1BC9BF04000000, 0x0000000000000000, 37},  // 5^16
	{0xB1A2BC2EC5000000, 0x0000000000000000, 39},  // 5^17
	{0xDE0B6B3A76400000, 0x0000000000000000, 41},  // 5^18
	{0x8AC7230489E80000, 0x0000000000000000, 44},  // 5^19
	{0xAD78EBC5AC620000, 0x0000000000000000, 46},  // 5^20
	{0xD8D726B7177A8000, 0x0000000000000000, 48},  // 5^21
	{0x878678326EAC9000, 0x0000000000000000, 51},  // 5^22
	{0xA968163F0A57B400, 0x0000000000000000, 53},  // 5^23
	{0xD3C21BCECCEDA100, 0x0000000000000000, 55},  // 5^24
	{0x84595161401484A0, 0x0000000000000000, 58},  // 5^25
	{0xA56FA5B99019A5C8, 0x0000000000000000, 60},  // 5^26
	{0xCECB8F27F4200F3A, 0x0000000000000000, 62},  // 5^27
	{0x813F3978F8940984, 0x4000000000000000, 65},  // 5^28
	{0xA18F07D736B90BE5, 0x5000000000000000, 67},  // 5^29
	{0xC9F2C9CD04674EDE, 0xA400000000000000, 69},  // 5^30
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
