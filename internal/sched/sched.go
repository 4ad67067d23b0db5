// Package sched owns the concurrency of reading: one Scheduler per process (or per command)
// bounds the threads and the memory that chunk reads and decodes use, and everything that
// reads ahead or decodes in parallel asks it.
//
// Decoders decode synchronously on the goroutine that calls them and start no goroutines of
// their own. Where one chunk is worth splitting (CTF pieces, IDV blocks, Matrix Market lines),
// the decoder calls Parallel with the ctx it was given: the calling goroutine does the work,
// helped by whatever threads of the scheduler in ctx are idle, in as many pieces as Pieces
// says. Callers above the decoders that consume chunks in an order (convert, the CLI's cat,
// show and validate, the Python package) read them through ReadAhead, which decodes up to
// Threads() chunks ahead within the memory budget and yields them in order; a consumer that
// waits for a chunk, and a helper that runs out of chunks to claim, take pieces of the
// Parallel calls in progress. The minibatch engine, whose chunks live as long as the
// randomization window needs them, runs its chunk loads and packers on the scheduler's
// threads with AcquireThread and ReleaseThread, and counts the chunks it holds with Account
// and Release, reading ahead only while InUse is below Memory.
//
// Threads counts the caller: a scheduler of n threads runs at most n-1 goroutines of its own
// (helpers) beside the goroutine that consumes its work, so one consumer and its helpers never
// keep more than n cores busy, and a scheduler of one thread starts no goroutine at all.
package sched

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// DefaultMemory is the memory budget of New(threads, 0): 2 GiB of decoded chunks (less under
// a lower Go memory limit, see New).
const DefaultMemory int64 = 2 << 30

// Scheduler bounds the threads and the memory that reading and decoding use. It is safe for
// concurrent use; the zero value is not usable, call New.
type Scheduler struct {
	threads int
	memory  int64
	helpers chan struct{} // one token per running helper goroutine; capacity threads-1

	mu      sync.Mutex
	used    int64         // bytes reserved
	changed chan struct{} // closed (and replaced) when used decreases, if watched
	watched bool          // a goroutine waits on changed

	helping atomic.Int64 // helper goroutines running work now
	peak    atomic.Int64 // the most helpers ever running at once

	jobsMu   sync.Mutex
	jobs     []*job        // Parallel calls in progress, whose indices waiting consumers may take
	jobAdded chan struct{} // closed (and replaced) when a job is added
}

// New returns a scheduler of the given number of threads (threads <= 0: runtime.GOMAXPROCS(0))
// and memory budget in bytes (memory <= 0: DefaultMemory, or a quarter of the Go runtime's
// memory limit, GOMEMLIMIT, when that is less).
func New(threads int, memory int64) *Scheduler {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if memory <= 0 {
		memory = min(DefaultMemory, max(debug.SetMemoryLimit(-1)/4, 1))
	}
	return &Scheduler{
		threads:  threads,
		memory:   memory,
		helpers:  make(chan struct{}, threads-1),
		changed:  make(chan struct{}),
		jobAdded: make(chan struct{}),
	}
}

// Threads returns the number of threads the scheduler may keep busy, the caller's included.
func (s *Scheduler) Threads() int { return s.threads }

// Idle returns the number of helper threads free at this moment: how many more threads a
// Parallel call made now would get, if none is taken meanwhile.
func (s *Scheduler) Idle() int { return s.threads - 1 - len(s.helpers) }

// Memory returns the memory budget in bytes.
func (s *Scheduler) Memory() int64 { return s.memory }

// PeakHelpers returns the largest number of helper goroutines that ran work at once so far:
// at most Threads()-1. Tests use it to check the bound.
func (s *Scheduler) PeakHelpers() int { return int(s.peak.Load()) }

type ctxKey struct{}

// WithContext returns a context that carries s, so that code below (decoders, wrappers)
// finds it with FromContext.
func WithContext(ctx context.Context, s *Scheduler) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the scheduler ctx carries, or nil.
func FromContext(ctx context.Context) *Scheduler {
	s, _ := ctx.Value(ctxKey{}).(*Scheduler)
	return s
}

// tryHelper takes a helper token if one is free.
func (s *Scheduler) tryHelper() bool {
	select {
	case s.helpers <- struct{}{}:
		s.enter()
		return true
	default:
		return false
	}
}

// waitHelper takes a helper token, waiting for one to free up.
func (s *Scheduler) waitHelper(ctx context.Context) error {
	select {
	case s.helpers <- struct{}{}:
		s.enter()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Scheduler) enter() {
	n := s.helping.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// doneHelper gives a helper token back.
func (s *Scheduler) doneHelper() {
	s.helping.Add(-1)
	<-s.helpers
}

// AcquireThread waits until a helper thread of the scheduler is free and takes it, for a
// goroutine of the caller's that does the scheduler's kind of work (the minibatch engine's
// packers and chunk loads); ReleaseThread gives it back. A scheduler of one thread has no
// helper threads: AcquireThread then waits until ctx ends, so such goroutines must not be
// started. Neither allocates.
func (s *Scheduler) AcquireThread(ctx context.Context) error { return s.waitHelper(ctx) }

// ReleaseThread gives back a thread AcquireThread took.
func (s *Scheduler) ReleaseThread() { s.doneHelper() }

// Parallel runs fn(ctx, i) for every i in [0, n): on the calling goroutine plus whatever helper
// threads of the scheduler in ctx are idle when it starts, and a consumer of a ReadAhead of
// the scheduler that waits meanwhile (never more than Threads() in all, the caller's
// counted); serially on the caller when ctx carries no scheduler or it has one thread.
// Indices are handed out in increasing order. It returns the first error fn returns (or
// ctx's error) and cancels the ctx the other calls see. It never waits for a thread, so a
// task of the scheduler may call it without deadlock.
func Parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	s := FromContext(ctx)
	if s == nil || s.threads == 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	j := &job{ctx: ctx, n: n, fn: fn, cancel: cancel}
	var wg sync.WaitGroup
	for k := 1; k < n && k < s.threads && s.tryHelper(); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.doneHelper()
			for j.runOne() {
			}
		}()
	}
	s.publish(j)
	for j.runOne() {
	}
	s.withdraw(j)
	wg.Wait()
	j.outside.Wait()
	return j.first
}

// job is a Parallel call: the indices it hands out, to its own threads and to waiting
// consumers (Help).
type job struct {
	ctx     context.Context
	n       int
	next    atomic.Int64
	fn      func(ctx context.Context, i int) error
	cancel  context.CancelFunc
	errOnce sync.Once
	first   error
	outside sync.WaitGroup // indices that goroutines outside the call run now
}

// runOne runs the next index, reporting false when none was left or the job failed.
func (j *job) runOne() bool {
	i := int(j.next.Add(1) - 1)
	if i >= j.n {
		return false
	}
	err := j.ctx.Err()
	if err == nil {
		err = j.fn(j.ctx, i)
	}
	if err != nil {
		j.errOnce.Do(func() { j.first = err; j.cancel() })
		return false
	}
	return true
}

// publish lets waiting consumers take indices of j.
func (s *Scheduler) publish(j *job) {
	s.jobsMu.Lock()
	s.jobs = append(s.jobs, j)
	close(s.jobAdded)
	s.jobAdded = make(chan struct{})
	s.jobsMu.Unlock()
}

// withdraw stops handing j's indices to consumers; those taken still run (j.outside).
func (s *Scheduler) withdraw(j *job) {
	s.jobsMu.Lock()
	for k, x := range s.jobs {
		if x == j {
			s.jobs = append(s.jobs[:k], s.jobs[k+1:]...)
			break
		}
	}
	s.jobsMu.Unlock()
}

// help runs one index of a Parallel call in progress on the calling goroutine, a consumer
// whose own thread would otherwise wait, and reports whether it found one. It also returns
// a channel closed when a later Parallel call starts.
func (s *Scheduler) help() (bool, <-chan struct{}) {
	s.jobsMu.Lock()
	added := s.jobAdded
	var j *job
	for _, x := range s.jobs {
		if x.next.Load() < int64(x.n) && x.ctx.Err() == nil {
			j = x
			break
		}
	}
	if j == nil {
		s.jobsMu.Unlock()
		return false, added
	}
	j.outside.Add(1)
	s.jobsMu.Unlock()
	defer j.outside.Done()
	return j.runOne(), added
}

// Reserve counts n bytes against the memory budget, waiting while they do not fit. A
// reservation larger than the whole budget is granted when nothing else is reserved, so that
// one large chunk slows reading down rather than stopping it. Every Reserve is paired with a
// Release of the same n.
func (s *Scheduler) Reserve(ctx context.Context, n int64) error {
	for {
		s.mu.Lock()
		if s.used == 0 || s.used+n <= s.memory {
			s.used += n
			s.mu.Unlock()
			return nil
		}
		ch := s.watchLocked()
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Account counts n bytes against the budget without waiting: memory already taken (a chunk
// just decoded, whose size was not known before). Pair it with Release.
func (s *Scheduler) Account(n int64) {
	s.mu.Lock()
	s.used += n
	s.mu.Unlock()
}

// Release returns n bytes that Reserve or Account counted.
func (s *Scheduler) Release(n int64) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	s.used -= n
	if s.watched {
		// Only then: the minibatch engine releases a chunk's memory at a time, and a
		// channel made each time would be its only allocation.
		close(s.changed)
		s.changed = make(chan struct{})
		s.watched = false
	}
	s.mu.Unlock()
}

// watchLocked returns the channel the next Release closes; s.mu is held.
func (s *Scheduler) watchLocked() chan struct{} {
	s.watched = true
	return s.changed
}

// InUse returns the bytes reserved now.
func (s *Scheduler) InUse() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}
