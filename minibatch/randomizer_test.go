package minibatch

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

type orderCase struct {
	Name              string
	Chunks            int
	SeqsPerChunk      int
	Window            any
	SampleBasedWindow bool
	SeedOffset        uint64
	EpochIndex        int64
	EpochSize         int
	Randomizer        string
	Expected          []int
}

func loadOrders(t *testing.T) (map[string][]string, []orderCase) {
	path := testutil.Testdata(t, "cntk", "randomizer", "expected_orders.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		First map[string][]string `json:"mt19937_64_first_outputs"`
		Cases []orderCase
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.First, f.Cases
}

func TestMT19937_64(t *testing.T) {
	first, _ := loadOrders(t)
	if len(first) == 0 {
		t.Fatal("no vectors")
	}
	for name, want := range first {
		seed, _ := strconv.ParseUint(name[len("seed "):], 10, 64)
		var m mt64
		m.seed(seed)
		for i, w := range want {
			if got := strconv.FormatUint(m.next(), 10); got != w {
				t.Errorf("%s output %d = %s, want %s", name, i, got, w)
			}
		}
	}
	// The 10000th output of the default seed (5489), as the C++ standard requires.
	var m mt64
	m.seed(5489)
	var v uint64
	for i := 0; i < 10000; i++ {
		v = m.next()
	}
	if v != 9981545732273789042 {
		t.Errorf("10000th output = %d", v)
	}
}

func TestExpectedOrders(t *testing.T) {
	_, cases := loadOrders(t)
	n := 0
	for _, c := range cases {
		if c.Expected == nil {
			continue
		}
		n++
		rz := &randomizer{randomize: c.Randomizer != "none", seed: c.SeedOffset, sampleBased: c.SampleBasedWindow}
		switch w := c.Window.(type) {
		case float64:
			rz.window = int64(w)
		case string:
			rz.window = math.MaxInt64
		}
		for i := 0; i < c.Chunks; i++ {
			rz.chunks = append(rz.chunks, chunkCounts{c.SeqsPerChunk, int64(c.SeqsPerChunk)})
			rz.sequences += c.SeqsPerChunk
		}
		var got []int
		start := c.EpochIndex * int64(c.EpochSize)
		for pos := start; pos < start+int64(c.EpochSize); {
			var p plan
			rz.plan(pos/int64(rz.sequences), &p)
			for _, r := range p.order[pos%int64(rz.sequences):] {
				if pos >= start+int64(c.EpochSize) {
					break
				}
				got = append(got, int(r.chunk)*c.SeqsPerChunk+int(r.idx))
				pos++
			}
		}
		if !equalInts(got, c.Expected) {
			t.Errorf("%s: got %v, want %v", c.Name, got, c.Expected)
		}
	}
	if n < 7 {
		t.Errorf("only %d cases", n)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPlanFirst checks that planFirst hands over the sequences of the first chunk in the order
// as the finished plan has them, for chunk- and sample-based windows of every size.
func TestPlanFirst(t *testing.T) {
	for _, sampleBased := range []bool{false, true} {
		for _, randomize := range []bool{false, true} {
			for _, w := range []int64{0, 1, 2, 3, 4, 7, 50, 400} {
				for s := range int64(3) {
					rz := randomizer{randomize: randomize, seed: 11, window: w, sampleBased: sampleBased}
					for k := range 23 {
						n := 5 + k*7%13 // 5 to 17 sequences a chunk
						rz.chunks = append(rz.chunks, chunkCounts{n, int64(2 * n)})
						rz.sequences += n
					}
					var p plan
					var first []seqRef
					calls := 0
					rz.planFirst(s, &p, func(seqs []seqRef) {
						calls++
						first = append([]seqRef(nil), seqs...)
					})
					want := p.order[:rz.chunks[p.chunkOrder[0]].sequences]
					if calls != 1 || !slices.Equal(first, want) {
						t.Fatalf("window %d (samples %v, randomize %v), sweep %d: first called %d times with %v, the plan begins %v",
							w, sampleBased, randomize, s, calls, first, want)
					}
				}
			}
		}
	}
}

// plan computes the order of sweep s into p, reusing p's memory (planFirst without first).
func (rz *randomizer) plan(s int64, p *plan) { rz.planFirst(s, p, nil) }
