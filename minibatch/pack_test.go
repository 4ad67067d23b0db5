package minibatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
)

// reusingSource serves copies of a memSource's chunks and reuses prev in ReadChunkReuse: it
// scribbles over prev before decoding into it, so that a chunk recycled while a minibatch
// still reads it shows up as wrong data.
type reusingSource struct {
	*memSource
	reused atomic.Int64
}

func (s *reusingSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return s.ReadChunkReuse(ctx, i, nil)
}

func (s *reusingSource) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	c, err := s.memSource.ReadChunk(ctx, i)
	if err != nil {
		return nil, err
	}
	out := &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, len(c.Streams))}
	if prev != nil {
		s.reused.Add(1)
		for k := range prev.Streams {
			d := &prev.Streams[k]
			for b := range d.Values.Bytes {
				d.Values.Bytes[b] = 0xff
			}
			for b := range d.Indices {
				d.Indices[b] = math.MaxInt32
			}
		}
		out = prev
	}
	out.Sequences, out.IDs = c.Sequences, c.IDs
	for k := range c.Streams {
		src, d := &c.Streams[k], &out.Streams[k]
		d.SeqStart = append(d.SeqStart[:0], src.SeqStart...)
		d.SampleStart = nil
		if src.SampleStart != nil {
			d.SampleStart = append([]int64{}, src.SampleStart...)
		}
		d.Indices = nil
		if src.Indices != nil {
			d.Indices = append([]int32{}, src.Indices...)
		}
		d.Values.Type = src.Values.Type
		d.Values.Bytes = append(d.Values.Bytes[:0], src.Values.Bytes...)
	}
	return out, nil
}

// dumpBatches reads up to n minibatches and renders each whole: its counts, origins, data and
// packed tensors.
func dumpBatches(t *testing.T, r *Reader, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n && r.Next() {
		b := r.Batch()
		s := fmt.Sprintf("sweep %d pos %d global %d eos %v eoe %v seqs %d samples %d origins %v",
			b.Sweep, b.Position, b.GlobalSamples, b.EndOfSweep, b.EndOfEpoch, b.Sequences, b.Samples, b.Origins)
		for i, d := range b.Data.Streams {
			s += fmt.Sprintf("\n  %d: %v %v %v %v %+v mask %v", i, d.SeqStart, d.SampleStart, d.Indices, d.Values.Bytes, b.Layouts[i], b.Mask(i))
			if b.fixedDense(i) {
				s += fmt.Sprintf(" dense %v", b.Dense(i).Bytes)
			} else if b.schema.Streams[i].Storage == mlfeed.Sparse {
				cs, idx, v := b.Sparse(i)
				s += fmt.Sprintf(" csc %v %v %v", cs, idx, v.Bytes)
			}
		}
		out = append(out, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPackersAndReuse checks that packing in the background with any number of packers, and
// decoding into recycled chunks, changes nothing in the minibatches.
func TestPackersAndReuse(t *testing.T) {
	cases := []struct {
		name string
		src  func() *memSource
		cfg  Config
	}{
		{"randomized", func() *memSource { return uniform(500, 1, 20) }, Config{MinibatchSize: 32, MaxSweeps: 3}},
		{"window", func() *memSource { return uniform(500, 1, 20) }, Config{MinibatchSize: 32, RandomizationWindow: 3, RandomizationSeed: 5, MaxSweeps: 3}},
		{"file order", func() *memSource { return uniform(300, 1, 7) }, Config{MinibatchSize: 10, NoRandomize: true, MaxSweeps: 2}},
		{"worker", func() *memSource { return uniform(500, 1, 20) }, Config{MinibatchSize: 32, Workers: 3, Rank: 1, MaxSweeps: 3}},
		{"frame mode", func() *memSource { return uniform(400, 1, 16) }, Config{MinibatchSize: 25, FrameMode: true, MaxSweeps: 2}},
		{"sequences", func() *memSource { return jagged(400, 16) }, Config{MinibatchSize: 24, RandomizationWindow: 4, MaxSweeps: 3}},
		{"epochs", func() *memSource { return jagged(300, 10) }, Config{MinibatchSize: 40, EpochSize: 170, MaxSamples: 2000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Packers = -1
			want := dumpBatches(t, mustNew(t, tc.src(), cfg), 1<<20)
			if len(want) < 10 {
				t.Fatalf("only %d minibatches", len(want))
			}
			for _, packers := range []int{-1, 1, 2, 5} {
				cfg.Packers = packers
				if got := dumpBatches(t, mustNew(t, tc.src(), cfg), 1<<20); !slices.Equal(got, want) {
					t.Fatalf("%d packers: minibatches differ", packers)
				}
				rs := &reusingSource{memSource: tc.src()}
				if got := dumpBatches(t, mustNew(t, rs, cfg), 1<<20); !slices.Equal(got, want) {
					t.Fatalf("%d packers, recycled chunks: minibatches differ", packers)
				}
				// With many packers the minibatches planned ahead still read the chunks of the
				// sweep before when the next one requests all of its chunks.
				if packers < 2 && rs.reused.Load() == 0 {
					t.Fatalf("%d packers: no chunk was recycled", packers)
				}
			}
		})
	}
}

// TestPackersRestore takes the state after each minibatch while packers run ahead: restoring
// it in a new reader continues exactly where the first one was handed out.
func TestPackersRestore(t *testing.T) {
	cfg := Config{MinibatchSize: 16, RandomizationWindow: 5, RandomizationSeed: 3, MaxSweeps: 2, Packers: 2}
	all := dumpBatches(t, mustNew(t, jagged(200, 10), cfg), 1<<20)
	r := mustNew(t, &reusingSource{memSource: jagged(200, 10)}, cfg)
	for k := range all {
		if k%7 == 3 {
			st := r.State()
			r2 := mustNew(t, jagged(200, 10), cfg)
			if err := r2.Restore(st); err != nil {
				t.Fatal(err)
			}
			if got := dumpBatches(t, r2, 1<<20); !slices.Equal(got, all[k:]) {
				t.Fatalf("restored after %d minibatches: the rest differs", k)
			}
			// Restoring the reader itself drops what it packed ahead.
			if err := r.Restore(st); err != nil {
				t.Fatal(err)
			}
		}
		if got := dumpBatches(t, r, 1); !slices.Equal(got, all[k:k+1]) {
			t.Fatalf("minibatch %d differs", k)
		}
	}
}

// TestCloseStopsGoroutines checks that Close waits for the packers and the chunk reads.
func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 5 {
		r, err := New(uniform(1000, 1, 10), Config{MinibatchSize: 16, Packers: 3, Prefetch: 4})
		if err != nil {
			t.Fatal(err)
		}
		for range 7 {
			r.Next()
		}
		r.Close()
		if r.Next() {
			t.Fatal("Next after Close")
		}
		r.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after Close", before, n)
	}
}

// failingSource fails to read one chunk.
type failingSource struct {
	*memSource
	bad int
}

var errBadChunk = errors.New("bad chunk")

func (s *failingSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	if i == s.bad {
		return nil, errBadChunk
	}
	return s.memSource.ReadChunk(ctx, i)
}

func (s *failingSource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

// TestReadErrorInOrder checks that a chunk that fails to read, with minibatches packed ahead,
// stops the reader at the first minibatch that needs it, after every minibatch before it.
func TestReadErrorInOrder(t *testing.T) {
	for _, packers := range []int{-1, 1, 3} {
		r := mustNew(t, &failingSource{uniform(100, 1, 10), 5}, Config{MinibatchSize: 8, NoRandomize: true, Packers: packers})
		n := 0
		for r.Next() {
			n++
		}
		if n != 6 || !errors.Is(r.Err(), errBadChunk) {
			t.Fatalf("%d packers: %d minibatches, then %v; want 6 and the read error", packers, n, r.Err())
		}
		if r.Next() {
			t.Fatal("Next after the error")
		}
	}
}

// busySource counts the ReadChunkReuse calls running at once.
type busySource struct {
	*memSource
	now, peak atomic.Int64
}

func (s *busySource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	time.Sleep(100 * time.Microsecond)
	return s.memSource.ReadChunk(ctx, i)
}

// TestOneThread checks that with Threads 1 the reader starts no goroutine and reads one chunk
// at a time, and delivers the minibatches it delivers on every core.
func TestOneThread(t *testing.T) {
	cfg := Config{MinibatchSize: 16, RandomizationWindow: 5, RandomizationSeed: 3, MaxSweeps: 2, Prefetch: 4}
	want := collect(t, mustNew(t, uniform(500, 1, 10), cfg), uniform(500, 1, 10), 1<<20)
	src := &busySource{memSource: uniform(500, 1, 10)}
	cfg.Threads = 1
	r := mustNew(t, src, cfg)
	before := runtime.NumGoroutine()
	var got []summary
	for r.Next() {
		if n := runtime.NumGoroutine(); n > before {
			t.Fatalf("%d goroutines while reading on one thread, %d before", n, before)
		}
		b := r.Batch()
		s := summary{Sweep: b.Sweep, Global: b.GlobalSamples, Position: b.Position, EOS: b.EndOfSweep}
		for q := 0; q < b.Sequences; q++ {
			s.Seqs = append(s.Seqs, src.global(b, q))
		}
		got = append(got, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("one thread delivered other minibatches")
	}
	if src.peak.Load() != 1 {
		t.Fatalf("%d chunk reads at once on one thread", src.peak.Load())
	}
}
