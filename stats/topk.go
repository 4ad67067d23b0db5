package stats

import (
	"cmp"
	"slices"
)

// topK finds the most frequent keys of a stream with the space-saving algorithm (Metwally,
// Agrawal and El Abbadi, 2005): it keeps at most size counters; a key not counted takes the
// place of the smallest counter and inherits its count, which becomes the key's possible
// overcount. Every key seen more than n/size times (n keys added) is among the counters, and
// each counter's count exceeds the key's true count by at most its error. While no counter has
// been replaced, every count is exact.
type topK struct {
	size    int
	pos     map[uint64]int // key -> index in heap
	heap    []topItem      // a min-heap by count
	evicted bool
}

type topItem struct {
	key   uint64
	label string // the value shown for the key (text), kept from its first sighting
	count int64
	err   int64
}

func newTopK(size int) *topK {
	return &topK{size: size, pos: make(map[uint64]int)}
}

// add counts one sighting of key; label is called for a key that gets a counter, and its
// result must not share memory with the data being read.
func (t *topK) add(key uint64, label func() string) {
	if i, ok := t.pos[key]; ok {
		t.heap[i].count++
		t.down(i)
		return
	}
	it := topItem{key: key, count: 1}
	if label != nil {
		it.label = label()
	}
	if len(t.heap) < t.size {
		t.heap = append(t.heap, it)
		i := len(t.heap) - 1
		t.pos[key] = i
		t.up(i)
		return
	}
	t.evicted = true
	old := t.heap[0]
	delete(t.pos, old.key)
	it.count, it.err = old.count+1, old.count
	t.heap[0] = it
	t.pos[key] = 0
	t.down(0)
}

func (t *topK) less(i, j int) bool { return t.heap[i].count < t.heap[j].count }

func (t *topK) swap(i, j int) {
	h := t.heap
	h[i], h[j] = h[j], h[i]
	t.pos[h[i].key] = i
	t.pos[h[j].key] = j
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// top returns the n keys of largest count, by count (descending), then label, then key.
func (t *topK) top(n int) []topItem {
	out := slices.Clone(t.heap)
	slices.SortFunc(out, func(a, b topItem) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		if c := cmp.Compare(a.label, b.label); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return out[:min(n, len(out))]
}
