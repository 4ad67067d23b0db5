package minibatch

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/mlfeed/mlfeed"
)

// callerMemory is memory a test gives a batch with SetMemory, as the Python package does.
type callerMemory struct {
	seq, samp []int64
	idx       []int32
	vals      []byte
}

func newCallerMemory(n int) *callerMemory {
	return &callerMemory{make([]int64, n), make([]int64, n), make([]int32, n), make([]byte, 16*n)}
}

// holds reports whether every slice of d that holds data lives in m's memory.
func (m *callerMemory) holds(d *mlfeed.StreamData) bool {
	in := func(p, base unsafe.Pointer, n int) bool { return n == 0 || p == base }
	return in(unsafe.Pointer(unsafe.SliceData(d.SeqStart)), unsafe.Pointer(&m.seq[0]), len(d.SeqStart)) &&
		in(unsafe.Pointer(unsafe.SliceData(d.SampleStart)), unsafe.Pointer(&m.samp[0]), len(d.SampleStart)) &&
		in(unsafe.Pointer(unsafe.SliceData(d.Indices)), unsafe.Pointer(&m.idx[0]), len(d.Indices)) &&
		in(unsafe.Pointer(unsafe.SliceData(d.Values.Bytes)), unsafe.Pointer(&m.vals[0]), len(d.Values.Bytes))
}

func (m *callerMemory) streamData() mlfeed.StreamData {
	return mlfeed.StreamData{SeqStart: m.seq[:0], SampleStart: m.samp[:0], Indices: m.idx[:0],
		Values: mlfeed.Buffer{Type: mlfeed.Float32, Bytes: m.vals[:0]}}
}

// TestSetMemory gives every batch memory of the test's own the first time the reader hands it
// out, and checks that from then on the packers write into that memory, that a minibatch too
// big for it falls back to the reader's memory, and that the minibatches are those of a
// reader left alone.
func TestSetMemory(t *testing.T) {
	lens := make([]int, 3000)
	for g := range lens {
		lens[g] = 1 + g%3
		if g%500 == 7 {
			lens[g] = 200 // a minibatch of these outgrows the memory given
		}
	}
	sizes := make([]int, 30)
	for k := range sizes {
		sizes[k] = 100
	}
	for _, cfg := range []Config{
		{MinibatchSize: 32, MaxSweeps: 2, RandomizationWindow: 4, Threads: 3, Packers: 2},
		{MinibatchSize: 32, MaxSweeps: 2, Threads: 1},
	} {
		src := newMemSource(lens, sizes)
		want := collect(t, mustNew(t, src, cfg), src, 1<<20)
		r := mustNew(t, src, cfg)
		mem := map[*Batch][]*callerMemory{}
		var got []summary
		inPlace, outgrown := 0, 0
		for r.Next() {
			b := r.Batch()
			ms, seen := mem[b]
			held := seen
			for i, m := range ms {
				held = held && m.holds(&b.Data.Streams[i])
			}
			switch {
			case held:
				inPlace++
			case seen:
				outgrown++
			}
			s := summary{Sweep: b.Sweep, Global: b.GlobalSamples, Position: b.Position, EOS: b.EndOfSweep}
			for q := 0; q < b.Sequences; q++ {
				g := src.global(b, q)
				s.Seqs = append(s.Seqs, g)
				x := b.Data.Streams[0]
				if v := x.Values.Float32s()[2*x.SeqStart[q]]; int(v) != g {
					t.Fatalf("sequence %d carries data of %v", g, v)
				}
			}
			got = append(got, s)
			if !held {
				// Give it (again) memory that holds a typical minibatch.
				ms = ms[:0]
				for i := range b.Data.Streams {
					d := &b.Data.Streams[i]
					m := newCallerMemory(max(40, len(d.SeqStart), len(d.SampleStart), len(d.Indices), len(d.Values.Bytes)/16+1))
					if err := b.SetMemory(i, m.streamData()); err != nil {
						t.Fatal(err)
					}
					if !m.holds(&b.Data.Streams[i]) {
						t.Fatal("SetMemory did not move the data")
					}
					ms = append(ms, m)
				}
				mem[b] = ms
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("packing into the caller's memory changed the minibatches")
		}
		if inPlace < len(got)/2 || outgrown == 0 {
			t.Errorf("%d minibatches packed in the caller's memory, %d outgrew it, of %d", inPlace, outgrown, len(got))
		}
		if err := r.Batch().SetMemory(0, mlfeed.StreamData{}); err == nil {
			t.Error("SetMemory without room: no error")
		}
	}
}

// TestSetMemorySteadyState checks that packing into the caller's memory allocates nothing.
func TestSetMemorySteadyState(t *testing.T) {
	src := uniform(100000, 1, 100000)
	r := mustNew(t, src, Config{MinibatchSize: 64, Prefetch: -1})
	given := map[*Batch]bool{}
	give := func() {
		b := r.Batch()
		if given[b] {
			return
		}
		given[b] = true
		for i := range b.Data.Streams {
			m := newCallerMemory(4096)
			if err := b.SetMemory(i, m.streamData()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 20; i++ {
		r.Next()
		give()
	}
	allocs := testing.AllocsPerRun(200, func() {
		if !r.Next() {
			t.Fatal(r.Err())
		}
		give()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per minibatch", allocs)
	}
}

// TestSetMemoryNone checks that memory of no capacity leaves the batch's own: the stream
// keeps packing its indices and values.
func TestSetMemoryNone(t *testing.T) {
	src := uniform(10, 1, 10)
	var b Batch
	b.init(&src.schema, false)
	b.reset()
	m := newCallerMemory(64)
	if err := b.SetMemory(1, mlfeed.StreamData{SeqStart: m.seq[:0], SampleStart: m.samp[:0]}); err != nil {
		t.Fatal(err)
	}
	b.reset()
	if err := b.add(src.chunks[0], []bool{false, false}, nil, 0, 3, 1); err != nil {
		t.Fatal(err)
	}
	d := &b.Data.Streams[1]
	if !reflect.DeepEqual(d.Indices, []int32{3}) || !reflect.DeepEqual(d.Values.Float64s(), []float64{3}) ||
		&d.SeqStart[0] != &m.seq[0] || &d.SampleStart[0] != &m.samp[0] {
		t.Fatalf("indices %v, values %v, seqStart %v", d.Indices, d.Values.Float64s(), d.SeqStart)
	}
}
