package minibatch

// mt64 is the 64-bit Mersenne Twister (MT19937-64), as C++'s std::mt19937_64, which CNTK's
// randomizers draw from. Seeding follows std::mt19937_64::seed(value).
type mt64 struct {
	state [mtN]uint64
	i     int
}

const (
	mtN       = 312
	mtM       = 156
	mtMatrixA = 0xB5026F5AA96619E9
	mtUpper   = 0xFFFFFFFF80000000
	mtLower   = 0x7FFFFFFF
)

func (m *mt64) seed(s uint64) {
	m.state[0] = s
	for i := 1; i < mtN; i++ {
		p := m.state[i-1]
		m.state[i] = 6364136223846793005*(p^(p>>62)) + uint64(i)
	}
	m.i = mtN
}

func (m *mt64) twist() {
	// state[i] from state[i], state[i+1] and state[i+M], indices mod N, in three runs without
	// the modulo.
	mix := func(a, b, c uint64) uint64 {
		x := a&mtUpper | b&mtLower
		return c ^ x>>1 ^ -(x&1)&mtMatrixA
	}
	st := &m.state
	for i := 0; i < mtN-mtM; i++ {
		st[i] = mix(st[i], st[i+1], st[i+mtM])
	}
	for i := mtN - mtM; i < mtN-1; i++ {
		st[i] = mix(st[i], st[i+1], st[i+mtM-mtN])
	}
	st[mtN-1] = mix(st[mtN-1], st[0], st[mtM-1])
	m.i = 0
}

// next returns the next 64-bit output.
func (m *mt64) next() uint64 {
	if m.i >= mtN {
		m.twist()
	}
	x := m.state[m.i]
	m.i++
	x ^= (x >> 29) & 0x5555555555555555
	x ^= (x << 17) & 0x71D67FFFEDA60000
	x ^= (x << 37) & 0xFFF7EEE000000000
	x ^= x >> 43
	return x
}

// between returns a number in [lo, hi) as CNTK draws it: lo + next() % (hi - lo).
func (m *mt64) between(lo, hi int) int {
	return lo + int(m.next()%uint64(hi-lo))
}
