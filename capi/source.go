//go:build cgo

package main

/*
#include "abi.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/minibatch"
)

// sourceArgs are MinibatchSource's arguments: what to read, and the engine's settings. Nil
// settings take the CNTK config's value when there is one, else the engine's default.
type sourceArgs struct {
	openArgs
	MinibatchSize    int     `json:"minibatch_size"`
	Randomize        *bool   `json:"randomize"`
	Seed             *uint64 `json:"seed"`
	Window           *int64  `json:"window"`
	SampleWindow     *bool   `json:"sample_window"`
	FrameMode        *bool   `json:"frame_mode"`
	DefinesMBSize    string  `json:"defines_mb_size"`
	MaxSweeps        int64   `json:"max_sweeps"`
	MaxSamples       int64   `json:"max_samples"`
	EpochSize        int64   `json:"epoch_size"`
	Workers          int     `json:"workers"`
	Rank             int     `json:"rank"`
	KeepInMemory     bool    `json:"keep_in_memory"`
	Packers          int     `json:"packers"`
	Threads          int     `json:"threads"`
	Memory           int64   `json:"memory"`
	Prefetch         int     `json:"prefetch"`
	CNTKDistribution bool    `json:"cntk_distribution"`
}

// config builds the engine's configuration as `mlfeed batches` does: the data set's (its
// config's reader section; spec is nil for an open data set's handle), then the explicit
// settings.
func (a *sourceArgs) config(spec *dataset.Spec) (minibatch.Config, error) {
	if spec == nil {
		spec = &dataset.Spec{}
	}
	spec.Randomization = dataset.Randomization{Randomize: a.Randomize, Seed: a.Seed, Window: a.Window, SampleWindow: a.SampleWindow, FrameMode: a.FrameMode}
	c, err := spec.MinibatchConfig()
	if err != nil {
		return c, err
	}
	c.Log, c.TraceLevel = io.Discard, 0
	c.MinibatchSize = a.MinibatchSize
	c.DefinesMBSize = a.DefinesMBSize
	c.MaxSweeps, c.MaxSamples, c.EpochSize = a.MaxSweeps, a.MaxSamples, a.EpochSize
	c.Workers, c.Rank = a.Workers, a.Rank
	c.KeepDataInMemory = a.KeepInMemory
	c.Packers, c.Prefetch = a.Packers, a.Prefetch
	// Python's loop works between minibatches and packs while it waits (minibatch.Reader.Ready),
	// taking minibatches the packer would have packed: with one ahead, the packer found none
	// planned 861 times in 9,400 minibatches of a DataLoader loop over MNIST, 220 times with
	// three (71.5 against 64.5 us a minibatch).
	c.PackAhead = 3
	c.Threads, c.Memory = a.Threads, a.Memory
	if a.CNTKDistribution {
		c.Distribution = minibatch.CNTKCompatible
	}
	if a.MinibatchSize < 0 || a.MaxSweeps < 0 || a.MaxSamples < 0 || a.EpochSize < 0 || c.RandomizationWindow < 0 {
		return c, fmt.Errorf("%w: minibatch_size, window, max_sweeps, max_samples and epoch_size must not be negative", format.ErrUsage)
	}
	if a.Workers == 0 && a.Rank != 0 {
		return c, fmt.Errorf("%w: rank needs workers", format.ErrUsage)
	}
	return c, nil
}

// source is a minibatch source: a minibatch.Reader whose Next runs on a goroutine of its own,
// so that the caller can wait for it with a timeout and handle signals meanwhile.
//
// Minibatches are packed straight into buffers the caller allocated, with no copy
// (minibatch.Batch.SetMemory): the caller holds one set of buffers per batch of the engine,
// and registers set k (mlfeed_source_fill) when the engine's batch k is first handed out, or
// when a minibatch outgrows it; from then on the engine's packers write batch k's minibatches
// into set k. The minibatch the caller holds stays where it is until the next mlfeed_next,
// which releases its batch to be packed again.
type source struct {
	ctx context.Context // carries the scheduler the engine runs on
	log *warnLog        // what the source's formats log while it reads (mlfeed_source_warnings)
	mu  sync.Mutex
	src mlfeed.Source
	// release closes src where the source opened it, or ends its use of the open data set src
	// belongs to (openDataset.use)
	release closer.Stack
	cfg     minibatch.Config
	r       *minibatch.Reader
	schema  mlfeed.Schema

	res      chan nextResult // the result of the Next running, when inFlight
	inFlight bool            // a Next runs or has finished and its result not yet been taken
	before   minibatch.State // the state before the Next in flight
	meta     []int64         // the meta of the minibatch read last (see metaLen)
	last     []int64         // meta, once that minibatch has been handed out; nil before one
	pending  bool            // last was returned and the caller has not confirmed taking it
	sets     []bufSet        // the caller's buffers, one set per batch of the engine
	setOf    map[*minibatch.Batch]int
	need     []int64 // scratch: byte sizes
	closeErr error   // what release returned
}

// bufSet is one set of the caller's buffers, laid out as chunkSizes describes.
type bufSet struct {
	ptrs []unsafe.Pointer
	caps []int64 // bytes
}

// fits reports whether data of the byte sizes need fits the set.
func (b *bufSet) fits(need []int64) bool {
	if len(b.caps) != len(need) {
		return false
	}
	for k, n := range need {
		if n > b.caps[k] {
			return false
		}
	}
	return true
}

// holds reports whether chunk c's numbers are in the set (packed there), so that only its
// strings are left to copy, and whether the set has room for those (need: the byte sizes).
func (b *bufSet) holds(c *mlfeed.Chunk, need []int64) bool {
	if !b.fits(need) {
		return false
	}
	in := func(p, data unsafe.Pointer, n int) bool { return n == 0 || p == data }
	for i := range c.Streams {
		d := &c.Streams[i]
		p := b.ptrs[sizesHeader+sizesPerStream*i:]
		if !in(p[0], unsafe.Pointer(unsafe.SliceData(d.SeqStart)), len(d.SeqStart)) ||
			!in(p[1], unsafe.Pointer(unsafe.SliceData(d.SampleStart)), len(d.SampleStart)) ||
			!in(p[2], unsafe.Pointer(unsafe.SliceData(d.Indices)), len(d.Indices)) ||
			!in(p[3], unsafe.Pointer(unsafe.SliceData(d.Values.Bytes)), len(d.Values.Bytes)) {
			return false
		}
	}
	return true
}

// memory returns stream i's buffers of the set as the memory a batch packs into.
func (b *bufSet) memory(i int) mlfeed.StreamData {
	p, c := b.ptrs[sizesHeader+sizesPerStream*i:], b.caps[sizesHeader+sizesPerStream*i:]
	return mlfeed.StreamData{
		SeqStart:    view[int64](p[0], c[0]/8),
		SampleStart: view[int64](p[1], c[1]/8),
		Indices:     view[int32](p[2], c[2]/4),
		Values:      mlfeed.Buffer{Bytes: view[byte](p[3], c[3])},
	}
}

// view returns the n values of type T at p, the caller's memory, as an empty slice of
// capacity n.
func view[T any](p unsafe.Pointer, n int64) []T {
	if p == nil || n <= 0 {
		return nil
	}
	return unsafe.Slice((*T)(p), n)[:0]
}

// byteSizes converts chunkSizes' counts into the byte size of each buffer, appended to
// dst[:0].
func byteSizes(dst, sizes []int64, nstreams int) []int64 {
	out := dst[:0]
	strs := func(n int64) int64 {
		if n == 0 {
			return 0
		}
		return 8 * (n + 1)
	}
	out = append(out, strs(sizes[0]), sizes[1])
	for i := range nstreams {
		s := sizes[sizesHeader+sizesPerStream*i:]
		out = append(out, 8*s[0], 8*s[1], 4*s[2], s[3], strs(s[4]), s[5])
	}
	return out
}

func opSource(ctx context.Context, args []byte) (any, error) {
	var a sourceArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Threads < 0 || a.Threads > 1<<16 || a.Memory < 0 || a.Packers < -1 || a.Packers > 1024 {
		return nil, fmt.Errorf("%w: threads must be from 0 (all cores) to 65536, packers from -1 to 1024, memory not negative", format.ErrUsage)
	}
	// Opening uses the threads and memory the minibatches will.
	ctx = sched.WithContext(context.WithoutCancel(ctx), sched.New(a.Threads, a.Memory))
	src, spec, release, err := a.open(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	cfg, err := a.config(spec)
	if err == nil {
		var s *source
		if s, err = newSource(ctx, src, release, cfg); err == nil {
			s.log = logOf(ctx)
			return map[string]any{"handle": uint64(cgo.NewHandle(s)), "streams": streamsOf(&s.schema),
				"sweep_samples": s.r.SweepSamples(), "has_ids": s.schema.HasIDs}, nil
		}
	}
	release.Close()
	return nil, err
}

// newSource starts the engine on the scheduler ctx carries (the source's threads and memory).
func newSource(ctx context.Context, src mlfeed.Source, release closer.Stack, cfg minibatch.Config) (*source, error) {
	r, err := minibatch.NewContext(ctx, src, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	n := sizesHeader + sizesPerStream*len(r.Schema().Streams)
	return &source{ctx: ctx, src: src, release: release, cfg: cfg, r: r, schema: r.Schema(), res: make(chan nextResult, 1),
		meta: make([]int64, metaLen+n), setOf: map[*minibatch.Batch]int{}, need: make([]int64, 0, n)}, nil
}

// nextResult is what a Next running on its goroutine returns.
type nextResult struct {
	ok  bool
	err error // a recovered panic, or an error describing the minibatch
}

// settle waits for a Next in flight and drops its minibatch.
func (s *source) settle() {
	if s.inFlight {
		<-s.res
		s.inFlight = false
	}
	s.last, s.pending = nil, false
}

// start reads the next minibatch on a goroutine and describes it in s.meta. It releases the
// minibatch handed out last, whose batch the engine then packs again.
func (s *source) start() {
	s.before = s.r.State()
	s.inFlight = true
	s.last, s.pending = nil, false
	rd := s.r
	go func() {
		var res nextResult
		defer func() {
			if v := recover(); v != nil {
				res = nextResult{err: recovered(v)}
			}
			s.res <- res
		}()
		if res.ok = rd.Next(); res.ok {
			res.err = s.place(rd.Batch())
		}
	}()
}

// nextHere reads the next minibatch on the calling goroutine, as start's goroutine does.
func (s *source) nextHere() (res nextResult) {
	s.before = s.r.State()
	s.last, s.pending = nil, false
	defer func() {
		if v := recover(); v != nil {
			res = nextResult{err: recovered(v)}
		}
	}()
	if res.ok = s.r.Next(); res.ok {
		res.err = s.place(s.r.Batch())
	}
	return res
}

// waitFor converts a timeout in milliseconds (negative: none) into a duration.
func waitFor(ms int64) time.Duration {
	if ms < 0 {
		return math.MaxInt64
	}
	return time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
}

// place describes batch b in s.meta, with its buffer set (assigned now if it has none), and,
// when the packers wrote it into that set, copies its strings there too.
func (s *source) place(b *minibatch.Batch) error {
	m := s.meta
	if err := fillMeta(b, m); err != nil {
		return err
	}
	k, ok := s.setOf[b]
	if !ok {
		k = len(s.setOf)
		s.setOf[b] = k
	}
	m[7], m[9] = int64(k), 0
	s.need = byteSizes(s.need, m[metaLen:], len(s.schema.Streams))
	if k < len(s.sets) && s.sets[k].holds(&b.Data, s.need) {
		fillStringsOf(&b.Data, s.sets[k].ptrs)
		m[9] = 1
	}
	return nil
}

func (s *source) close() { s.shut() }

// shut stops the engine and, where the source opened its data set, closes it, once; it
// returns what that Close returned (see openDataset.shut), every time it is called.
func (s *source) shut() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return s.closeErr
	}
	s.settle()
	s.r.Close()
	s.r = nil
	s.closeErr = s.release.Close()
	return s.closeErr
}

// state returns the position after the minibatch the caller holds.
func (s *source) state() minibatch.State {
	if s.inFlight {
		return s.before
	}
	return s.r.State()
}

// metaLen is the number of int64 entries mlfeed_next writes before the chunk sizes: sweep,
// sequences, samples, global samples, end of sweep, end of epoch, position, the buffer set k
// the minibatch belongs to, a bit mask of the streams whose every sequence has exactly one
// sample (bit i for stream i < 63), and whether the minibatch is in set k (1) or waits for
// the caller to register a set k that fits it with mlfeed_source_fill (0).
const metaLen = 10

// mlfeed_next waits up to timeout_ms milliseconds (negative: without limit) for the next
// minibatch of source h, releasing the one returned before. It returns 1 with meta filled
// (see metaLen, then the minibatch's sizes as mlfeed_sizes writes them), 0 at the end of the
// data, 2 when the minibatch is not ready yet (call again; nothing is lost), -1 with e filled
// on error. again non-zero says that the caller did not get to take the minibatch the
// previous call returned (it was interrupted): that minibatch is returned again.
//
//export mlfeed_next
func mlfeed_next(h C.uintptr_t, again C.int, timeoutMS C.int64_t, meta *C.int64_t, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	rc, err := sourceNext(uintptr(h), again != 0, int64(timeoutMS), unsafe.Slice((*int64)(unsafe.Pointer(meta)), int(n)))
	setError(e, err)
	return C.int(rc)
}

// sourceNext is mlfeed_next, with meta as m.
func sourceNext(h uintptr, again bool, timeoutMS int64, m []int64) (int, error) {
	s, err := value[*source](h)
	if err != nil {
		return -1, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.r == nil:
		return -1, fmt.Errorf("%w: the minibatch source is closed", format.ErrUsage)
	case len(m) != len(s.meta):
		return -1, fmt.Errorf("%w: %d meta entries for %d streams", format.ErrUsage, len(m), len(s.schema.Streams))
	case again && s.pending:
		copy(m, s.last)
		return 1, nil
	}
	if !s.inFlight {
		t0 := time.Now()
		if s.r.Ready(waitFor(timeoutMS)) {
			// The next minibatch is packed: Next only hands it over, here, with no goroutine
			// to wake and wait for.
			return s.result(s.nextHere(), m)
		}
		// Next may wait for data or pack: on a goroutine, so that the caller can handle
		// signals meanwhile.
		s.start()
		if timeoutMS >= 0 {
			timeoutMS = max(0, timeoutMS-time.Since(t0).Milliseconds())
		}
	}
	var res nextResult
	if timeoutMS < 0 {
		res = <-s.res
	} else {
		t := time.NewTimer(time.Duration(timeoutMS) * time.Millisecond)
		select {
		case res = <-s.res:
			t.Stop()
		case <-t.C:
			return 2, nil // the result stays in s.res for the next call
		}
	}
	s.inFlight = false
	return s.result(res, m)
}

// result is sourceNext's outcome for the result of a Next, with its meta copied into m.
func (s *source) result(res nextResult, m []int64) (int, error) {
	switch {
	case res.err != nil:
		return -1, res.err
	case !res.ok && s.r.Err() != nil:
		return -1, s.r.Err()
	case !res.ok:
		return 0, nil
	}
	s.last, s.pending = s.meta, true
	copy(m, s.meta)
	return 1, nil
}

// mlfeed_source_fill registers buffer set k of source h (n addresses and their capacities in
// bytes, laid out as mlfeed_sizes describes) for the minibatch mlfeed_next returned last,
// which waits for it (its meta names set k and says it is not in it), and moves that
// minibatch into it: from then on the engine packs the minibatches of its batch into these
// buffers. The caller keeps them alive, and writes to them never, until it registers others
// for set k or frees h; buffers of 64-bit and 32-bit values must be 8-byte aligned. It
// returns 0, or -1 with e filled.
//
//export mlfeed_source_fill
func mlfeed_source_fill(h C.uintptr_t, k C.int, ptrs *unsafe.Pointer, caps *C.int64_t, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	var b bufSet
	if n > 0 && n <= 1<<20 {
		b = bufSet{ptrs: make([]unsafe.Pointer, n), caps: make([]int64, n)}
		copy(b.ptrs, unsafe.Slice(ptrs, int(n)))
		copy(b.caps, unsafe.Slice((*int64)(unsafe.Pointer(caps)), int(n)))
	}
	err := sourceFill(uintptr(h), int(k), b)
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
}

func sourceFill(h uintptr, k int, b bufSet) error {
	s, err := value[*source](h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.r == nil:
		return fmt.Errorf("%w: the minibatch source is closed", format.ErrUsage)
	case s.last == nil || s.inFlight || s.last[7] != int64(k) || s.last[9] != 0:
		return fmt.Errorf("%w: no minibatch waits for buffer set %d", format.ErrUsage, k)
	case len(b.ptrs) != sizesHeader+sizesPerStream*len(s.schema.Streams):
		return fmt.Errorf("%w: %d buffers for %d streams", format.ErrUsage, len(b.ptrs), len(s.schema.Streams))
	}
	for j, p := range b.ptrs {
		if b.caps[j] < 0 || b.caps[j] > 0 && p == nil {
			return fmt.Errorf("%w: buffer %d: %d bytes at %p", format.ErrUsage, j, b.caps[j], p)
		}
		if j >= sizesHeader && (j-sizesHeader)%sizesPerStream < 3 && uintptr(p)%8 != 0 {
			return fmt.Errorf("%w: buffer %d is not 8-byte aligned", format.ErrUsage, j)
		}
	}
	if s.need = byteSizes(s.need, s.last[metaLen:], len(s.schema.Streams)); !b.fits(s.need) {
		return fmt.Errorf("%w: buffer set %d is too small for the minibatch", format.ErrUsage, k)
	}
	bt := s.r.Batch()
	for i := range s.schema.Streams {
		if err := bt.SetMemory(i, b.memory(i)); err != nil {
			return err
		}
	}
	fillStringsOf(&bt.Data, b.ptrs)
	for len(s.sets) <= k {
		s.sets = append(s.sets, bufSet{})
	}
	s.sets[k] = b
	s.last[9] = 1 // a caller interrupted now finds the minibatch in set k
	return nil
}

// fillMeta writes batch b's description (see metaLen) and sizes into m.
func fillMeta(b *minibatch.Batch, m []int64) error {
	m[0], m[1], m[2], m[3] = b.Sweep, int64(b.Sequences), b.Samples, b.GlobalSamples
	m[4], m[5], m[6], m[7] = boolInt(b.EndOfSweep), boolInt(b.EndOfEpoch), b.Position, -1
	m[8] = 0
	for i := range min(len(b.Data.Streams), 63) {
		if unitSequences(b.Data.Streams[i].SeqStart) {
			m[8] |= 1 << i
		}
	}
	return chunkSizes(&b.Data, m[metaLen:])
}

// unitSequences reports whether every sequence of seqStart has exactly one sample.
func unitSequences(seqStart []int64) bool {
	for q, v := range seqStart {
		if v != int64(q) {
			return false
		}
	}
	return true
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// mlfeed_state copies the JSON state of source h (the position after the minibatch last
// returned, as `mlfeed batches --save-state` writes it) into buf when it holds cap bytes, and
// returns its length, or -1 with e filled.
//
//export mlfeed_state
func mlfeed_state(h C.uintptr_t, buf *C.char, capacity C.int64_t, e *C.mlfeed_error) (n C.int64_t) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			n = -1
		}
	}()
	s, err := value[*source](uintptr(h))
	if err != nil {
		setError(e, err)
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		setError(e, fmt.Errorf("%w: the minibatch source is closed", format.ErrUsage))
		return -1
	}
	data, err := json.Marshal(s.state())
	if err != nil {
		setError(e, err)
		return -1
	}
	setError(e, nil)
	put(buf, capacity, data)
	return C.int64_t(len(data))
}

// mlfeed_source_warnings writes into buf (capacity bytes) the JSON list of the lines source h's
// formats logged since the last call (CTF's notice of values rounded to float32, given once
// every chunk is read), and returns the list's length in bytes: when it is over capacity,
// nothing is taken, and the caller calls again with a buffer that large. -1 with e filled on
// error.
//
//export mlfeed_source_warnings
func mlfeed_source_warnings(h C.uintptr_t, buf *C.char, capacity C.int64_t, e *C.mlfeed_error) (n C.int64_t) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			n = -1
		}
	}()
	s, err := value[*source](uintptr(h))
	if err != nil {
		setError(e, err)
		return -1
	}
	setError(e, nil)
	lines := s.log.peek()
	if len(lines) == 0 {
		return 0
	}
	data, err := json.Marshal(lines)
	if err != nil {
		setError(e, err)
		return -1
	}
	if put(buf, capacity, data) {
		s.log.drop(len(lines)) // taken only once the caller has them
	}
	return C.int64_t(len(data))
}

// mlfeed_restore moves source h to the JSON state st (mlfeed_state's, or CNTK's
// {"minibatchSourcePosition": N}) and applies the JSON settings cfg, when not NULL:
// {"minibatch_size", "workers", "rank"} (keys left out keep their values). It returns 0, or -1
// with e filled.
//
//export mlfeed_restore
func mlfeed_restore(h C.uintptr_t, st, cfg *C.char, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	err := restore(uintptr(h), st, cfg)
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
}

func restore(h uintptr, stJSON, cfgJSON *C.char) error {
	s, err := value[*source](h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return fmt.Errorf("%w: the minibatch source is closed", format.ErrUsage)
	}
	cfg := s.cfg
	if cfgJSON != nil {
		var c struct {
			MinibatchSize *int `json:"minibatch_size"`
			Workers       *int `json:"workers"`
			Rank          *int `json:"rank"`
		}
		if err := decode([]byte(C.GoString(cfgJSON)), &c); err != nil {
			return err
		}
		if c.MinibatchSize != nil {
			cfg.MinibatchSize = *c.MinibatchSize
		}
		if c.Workers != nil {
			cfg.Workers = *c.Workers
		}
		if c.Rank != nil {
			cfg.Rank = *c.Rank
		}
	}
	st := s.state()
	if stJSON != nil {
		st = minibatch.State{}
		if err := json.Unmarshal([]byte(C.GoString(stJSON)), &st); err != nil {
			return fmt.Errorf("%w: state: %v", minibatch.ErrState, err)
		}
	}
	// A fresh reader restored to the state: the simplest way to leave whatever the old one
	// was doing (reading ahead, finished, failed) behind.
	r, err := minibatch.NewContext(s.ctx, s.src, cfg)
	if err != nil {
		return fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	if err := r.Restore(st); err != nil {
		r.Close()
		return err
	}
	s.settle()
	s.r.Close()
	s.r, s.cfg = r, cfg
	clear(s.setOf) // the new reader's batches take the sets afresh
	return nil
}
