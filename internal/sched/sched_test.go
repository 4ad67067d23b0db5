package sched

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlfeed/mlfeed"
)

// busy counts the goroutines running work at once and the most ever seen.
type busy struct{ now, peak atomic.Int64 }

func (b *busy) run(d time.Duration) {
	n := b.now.Add(1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(d)
	b.now.Add(-1)
}

func TestNewDefaults(t *testing.T) {
	s := New(0, 0)
	if s.Threads() != runtime.GOMAXPROCS(0) || s.Memory() != DefaultMemory {
		t.Fatalf("New(0, 0): %d threads, %d bytes", s.Threads(), s.Memory())
	}
	// Under a Go memory limit below four times DefaultMemory, the default is a quarter of it;
	// an explicit budget stays as given.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(64 << 20))
	if m := New(0, 0).Memory(); m != 16<<20 {
		t.Fatalf("New(0, 0) under a 64 MiB memory limit: %d bytes, want 16 MiB", m)
	}
	if m := New(0, 1<<30).Memory(); m != 1<<30 {
		t.Fatalf("New(0, 1 GiB) under a 64 MiB memory limit: %d bytes", m)
	}
	if FromContext(context.Background()) != nil {
		t.Fatal("a scheduler in a bare context")
	}
	if FromContext(WithContext(context.Background(), s)) != s {
		t.Fatal("FromContext lost the scheduler")
	}
}

func TestParallelThreads(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		var b busy
		ctx := WithContext(context.Background(), New(threads, 0))
		seen := make([]atomic.Int32, 40)
		err := Parallel(ctx, len(seen), func(ctx context.Context, i int) error {
			seen[i].Add(1)
			b.run(2 * time.Millisecond)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("%d threads: index %d ran %d times", threads, i, seen[i].Load())
			}
		}
		if p := b.peak.Load(); p > int64(threads) || threads > 1 && p < 2 {
			t.Fatalf("%d threads: %d ran at once", threads, p)
		}
	}
}

// TestParallelNested checks that Parallel inside Parallel (a decoder splitting a chunk that a
// parallel loop reads) finishes and stays within the threads.
func TestParallelNested(t *testing.T) {
	var b busy
	s := New(3, 0)
	ctx := WithContext(context.Background(), s)
	var total atomic.Int64
	err := Parallel(ctx, 5, func(ctx context.Context, i int) error {
		return Parallel(ctx, 7, func(ctx context.Context, j int) error {
			total.Add(1)
			b.run(time.Millisecond)
			return nil
		})
	})
	if err != nil || total.Load() != 35 {
		t.Fatalf("err %v, %d runs", err, total.Load())
	}
	if b.peak.Load() > 3 || s.PeakHelpers() > 2 {
		t.Fatalf("%d ran at once, %d helpers", b.peak.Load(), s.PeakHelpers())
	}
}

func TestParallelError(t *testing.T) {
	for _, ctx := range []context.Context{context.Background(), WithContext(context.Background(), New(4, 0))} {
		boom := errors.New("boom")
		var after atomic.Int32
		err := Parallel(ctx, 1000, func(ctx context.Context, i int) error {
			if i == 3 {
				return boom
			}
			if i > 100 {
				after.Add(1)
			}
			time.Sleep(50 * time.Microsecond)
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
		if after.Load() > 20 {
			t.Fatalf("%d calls after the error", after.Load())
		}
	}
	ctx, cancel := context.WithCancel(WithContext(context.Background(), New(2, 0)))
	cancel()
	if err := Parallel(ctx, 10, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
}

func TestAcquireThread(t *testing.T) {
	s := New(3, 0)
	var b busy
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.AcquireThread(context.Background()); err != nil {
				t.Error(err)
				return
			}
			defer s.ReleaseThread()
			b.run(time.Millisecond)
		}()
	}
	wg.Wait()
	if b.peak.Load() > 2 || s.PeakHelpers() > 2 {
		t.Fatalf("%d at once on 2 helper threads", b.peak.Load())
	}
	one := New(1, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := one.AcquireThread(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("one thread: %v", err)
	}
}

func TestReserve(t *testing.T) {
	s := New(2, 100)
	ctx := context.Background()
	if err := s.Reserve(ctx, 60); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := s.Reserve(short, 50); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("over budget: %v", err)
	}
	done := make(chan error)
	go func() { done <- s.Reserve(ctx, 50) }()
	time.Sleep(5 * time.Millisecond)
	s.Release(60)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Release(50)
	if err := s.Reserve(ctx, 500); err != nil { // larger than the budget, nothing else held
		t.Fatal(err)
	}
	s.Release(500)
	if s.InUse() != 0 {
		t.Fatalf("%d bytes left reserved", s.InUse())
	}
}

// countSource is a source of n chunks of one float64 stream; chunk i holds size values equal
// to i. It counts the reads running at once and records the prev chunks it was offered.
type countSource struct {
	n, size int
	b       busy
	delay   time.Duration
	fail    int // chunk that fails to read, or -1
	mu      sync.Mutex
	reused  int
	inner   int // Parallel parts per chunk (0: none)
}

func (s *countSource) Schema() mlfeed.Schema {
	return mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "v", Type: mlfeed.Float64, Dim: s.size}}}
}

func (s *countSource) Chunks() []mlfeed.ChunkInfo {
	c := make([]mlfeed.ChunkInfo, s.n)
	for i := range c {
		c[i] = mlfeed.ChunkInfo{Sequences: 1, Samples: 1}
	}
	return c
}

func (s *countSource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return s.ReadChunkReuse(ctx, i, nil)
}

func (s *countSource) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	if i == s.fail {
		return nil, errors.New("bad chunk")
	}
	c := prev
	if c == nil {
		c = &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: mlfeed.NewBuffer(mlfeed.Float64, s.size)}}}
	} else {
		s.mu.Lock()
		s.reused++
		s.mu.Unlock()
	}
	if s.inner > 0 {
		if err := Parallel(ctx, s.inner, func(context.Context, int) error { s.b.run(s.delay); return nil }); err != nil {
			return nil, err
		}
	} else {
		s.b.run(s.delay)
	}
	for k := range c.Streams[0].Values.Float64s() {
		c.Streams[0].Values.Float64s()[k] = float64(i)
	}
	return c, ctx.Err()
}

func (s *countSource) SequenceLengths(i int) ([]int64, error) { return []int64{1}, nil }
func (s *countSource) Close() error                           { return nil }

func TestReadAheadOrder(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		for _, recycle := range []bool{false, true} {
			src := &countSource{n: 30, size: 8, delay: time.Millisecond, fail: -1, inner: 3}
			s := New(threads, 0)
			order := []int{5, 3, 9, 0, 29, 1, 2, 4, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28}
			before := runtime.NumGoroutine()
			ra := s.ReadAhead(context.Background(), src, order, &ReadAheadOptions{Recycle: recycle})
			var consumer busy
			p := 0
			for ra.Next() {
				if ra.Index() != order[p] || ra.Position() != p || ra.Chunk().Streams[0].Values.Float64s()[7] != float64(order[p]) {
					t.Fatalf("position %d: chunk %d, want %d", p, ra.Index(), order[p])
				}
				p++
				consumer.run(time.Millisecond)
			}
			if err := ra.Err(); err != nil || p != len(order) {
				t.Fatalf("%d chunks, %v", p, err)
			}
			if threads == 1 && runtime.NumGoroutine() > before {
				t.Fatalf("one thread: %d goroutines, %d before", runtime.NumGoroutine(), before)
			}
			ra.Close()
			if s.InUse() != 0 {
				t.Fatalf("%d bytes still reserved", s.InUse())
			}
			if got := src.b.peak.Load(); got > int64(threads) || threads > 2 && got < 2 {
				t.Fatalf("%d threads: %d reads at once", threads, got)
			}
			if s.PeakHelpers() > threads-1 {
				t.Fatalf("%d threads: %d helpers", threads, s.PeakHelpers())
			}
			if recycle && src.reused == 0 || !recycle && src.reused != 0 {
				t.Fatalf("recycle %v: %d reuses", recycle, src.reused)
			}
		}
	}
}

// TestReadAheadMemory checks that decoded chunks waiting to be used stay within the budget
// (plus one chunk per thread).
func TestReadAheadMemory(t *testing.T) {
	src := &countSource{n: 40, size: 1000, fail: -1}
	chunk := int64(8*1000 + 2*8)
	s := New(4, 3*chunk)
	order := make([]int, src.n)
	for i := range order {
		order[i] = i
	}
	ra := s.ReadAhead(context.Background(), src, order, &ReadAheadOptions{Ahead: 20})
	defer ra.Close()
	for ra.Next() {
		time.Sleep(200 * time.Microsecond)
		if u := s.InUse(); u > 3*chunk+4*chunk {
			t.Fatalf("%d bytes held, budget %d", u, 3*chunk)
		}
	}
	if ra.Err() != nil {
		t.Fatal(ra.Err())
	}
}

func TestReadAheadError(t *testing.T) {
	for _, threads := range []int{1, 3} {
		src := &countSource{n: 10, size: 1, fail: 4}
		s := New(threads, 0)
		ra := s.ReadAhead(context.Background(), src, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil)
		n := 0
		for ra.Next() {
			n++
		}
		if n != 4 || ra.Err() == nil {
			t.Fatalf("%d chunks then %v", n, ra.Err())
		}
		if ra.Next() {
			t.Fatal("Next after an error")
		}
		ra.Close()
		if s.InUse() != 0 {
			t.Fatalf("%d bytes still reserved", s.InUse())
		}
	}
}

// TestReadAheadClose checks that closing early stops the helpers and frees the memory.
func TestReadAheadClose(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &countSource{n: 100, size: 10, delay: time.Millisecond, fail: -1}
	s := New(4, 0)
	order := make([]int, src.n)
	for i := range order {
		order[i] = i
	}
	ra := s.ReadAhead(context.Background(), src, order, nil)
	ra.Next()
	ra.Next()
	ra.Close()
	if ra.Next() {
		t.Fatal("Next after Close")
	}
	if s.InUse() != 0 {
		t.Fatalf("%d bytes still reserved", s.InUse())
	}
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if runtime.NumGoroutine() > before {
		t.Fatalf("%d goroutines, %d before", runtime.NumGoroutine(), before)
	}
}

// TestHelp checks that a goroutine outside a Parallel call (a ReadAhead consumer that waits)
// takes an index no thread of the call can: the only helper thread is taken, and index 0
// waits for index 1.
func TestHelp(t *testing.T) {
	s := New(2, 0)
	ctx := WithContext(context.Background(), s)
	if err := s.AcquireThread(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.ReleaseThread()
	if Pieces(ctx) != 1 {
		t.Fatalf("Pieces with no idle thread: %d", Pieces(ctx))
	}
	one := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Parallel(ctx, 2, func(ctx context.Context, i int) error {
			if i == 0 {
				select {
				case <-one:
				case <-time.After(10 * time.Second):
					return errors.New("index 1 was not run by the helping goroutine")
				}
				return nil
			}
			close(one)
			return nil
		})
	}()
	for ran := false; !ran; {
		var added <-chan struct{}
		ran, added = s.help()
		if !ran {
			<-added
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ran, _ := s.help(); ran {
		t.Fatal("help found work after the call returned")
	}
}
