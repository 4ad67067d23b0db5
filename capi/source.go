//go:build cgo

package main

/*
#include "abi.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/format"
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

// config builds the engine's configuration as `mlfeed batches` does: the config's reader
// section, then the explicit settings.
func (a *sourceArgs) config(rc *cntkconfig.Reader) (minibatch.Config, error) {
	c := minibatch.Config{Log: io.Discard}
	if rc != nil {
		c.NoRandomize = !rc.Randomize
		c.RandomizationSeed = rc.RandomizationSeed
		c.RandomizationWindow = rc.RandomizationWindow
		c.SampleBasedRandomizationWindow = rc.SampleBasedRandomizationWindow
		c.FrameMode = rc.FrameMode
	}
	if a.Randomize != nil {
		c.NoRandomize = !*a.Randomize
	}
	if a.Seed != nil {
		c.RandomizationSeed = *a.Seed
	}
	if a.Window != nil {
		c.RandomizationWindow = *a.Window
	}
	if a.SampleWindow != nil {
		c.SampleBasedRandomizationWindow = *a.SampleWindow
	}
	if a.FrameMode != nil {
		c.FrameMode = *a.FrameMode
	}
	c.MinibatchSize = a.MinibatchSize
	c.DefinesMBSize = a.DefinesMBSize
	c.MaxSweeps, c.MaxSamples, c.EpochSize = a.MaxSweeps, a.MaxSamples, a.EpochSize
	c.Workers, c.Rank = a.Workers, a.Rank
	c.KeepDataInMemory = a.KeepInMemory
	c.Packers, c.Prefetch = a.Packers, a.Prefetch
	c.Threads, c.Memory = a.Threads, a.Memory
	if a.Threads < 0 || a.Threads > 1<<16 || a.Memory < 0 || a.Packers < -1 || a.Packers > 1024 {
		return c, fmt.Errorf("%w: threads must be from 0 (all cores) to 65536, packers from -1 to 1024, memory not negative", format.ErrUsage)
	}
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
// The caller registers two sets of buffers (mlfeed_buffers). As soon as a minibatch has been
// handed out, the next one is read ahead and copied into the other set, while the caller uses
// the first: the copy out of the engine's memory overlaps the caller's work. A minibatch that
// does not fit its set is left in the engine's memory for mlfeed_source_fill, which copies it
// after the caller has grown the set.
type source struct {
	mu     sync.Mutex
	src    mlfeed.Source
	own    bool
	cfg    minibatch.Config
	r      *minibatch.Reader
	schema mlfeed.Schema

	res      chan nextResult // the result of the Next running, when inFlight
	inFlight bool            // a Next runs or has finished and its result not yet been taken
	before   minibatch.State // the state after the minibatch handed out last
	last     []int64         // the meta of the minibatch handed out last, nil before one
	pending  bool            // last was returned and the caller has not confirmed taking it
	sets     [2]bufSet       // the caller's buffers
	target   int             // the set the next read-ahead copies into
}

// bufSet is one set of the caller's buffers, laid out as chunkSizes describes.
type bufSet struct {
	ptrs []unsafe.Pointer
	caps []int64 // bytes
}

// fits reports whether data of the byte sizes need fits the set.
func (b bufSet) fits(need []int64) bool {
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

// byteSizes converts chunkSizes' counts into the byte size of each buffer.
func byteSizes(sizes []int64, nstreams int) []int64 {
	out := make([]int64, 0, len(sizes))
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

func opSource(args []byte) (any, error) {
	var a sourceArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	src, rc, own, err := a.open()
	if err != nil {
		return nil, err
	}
	cfg, err := a.config(rc)
	if err == nil {
		var s *source
		if s, err = newSource(src, own, cfg); err == nil {
			return map[string]any{"handle": uint64(cgo.NewHandle(s)), "streams": streamsOf(&s.schema),
				"sweep_samples": s.r.SweepSamples(), "has_ids": s.schema.HasIDs}, nil
		}
	}
	if own {
		src.Close()
	}
	return nil, err
}

func newSource(src mlfeed.Source, own bool, cfg minibatch.Config) (*source, error) {
	r, err := minibatch.New(src, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", format.ErrUsage, err)
	}
	return &source{src: src, own: own, cfg: cfg, r: r, schema: r.Schema(), res: make(chan nextResult, 1)}, nil
}

// nextResult is what a Next running on its goroutine returns.
type nextResult struct {
	ok     bool
	err    error   // a recovered panic
	meta   []int64 // the minibatch's meta, as mlfeed_next returns it
	filled int     // the set the minibatch was copied into, or -1
}

// settle waits for a Next in flight and drops its minibatch.
func (s *source) settle() {
	if s.inFlight {
		<-s.res
		s.inFlight = false
	}
	s.last, s.pending = nil, false
}

// start reads the next minibatch on a goroutine and copies it into set target if it fits.
func (s *source) start(target int) {
	s.before = s.r.State()
	s.inFlight = true
	rd, set, nstreams := s.r, s.sets[target], len(s.schema.Streams)
	go func() {
		res := nextResult{filled: -1}
		defer func() {
			if v := recover(); v != nil {
				res = nextResult{err: recovered(v), filled: -1}
			}
			s.res <- res
		}()
		if res.ok = rd.Next(); !res.ok {
			return
		}
		b := rd.Batch()
		res.meta = make([]int64, metaLen+sizesHeader+sizesPerStream*nstreams)
		if err := fillMeta(b, res.meta); err != nil {
			res = nextResult{err: err, filled: -1}
			return
		}
		if set.fits(byteSizes(res.meta[metaLen:], nstreams)) {
			if err := fillChunk(&b.Data, set.ptrs); err != nil {
				res = nextResult{err: err, filled: -1}
				return
			}
			res.filled = target
		}
		res.meta[7] = int64(res.filled)
	}()
}

func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return
	}
	s.settle()
	s.r.Close()
	s.r = nil
	if s.own {
		s.src.Close()
	}
}

// state returns the position after the minibatch the caller holds.
func (s *source) state() minibatch.State {
	if s.inFlight {
		return s.before
	}
	return s.r.State()
}

// metaLen is the number of int64 entries mlfeed_next writes before the chunk sizes: sweep,
// sequences, samples, global samples, end of sweep, end of epoch, position, and the buffer set
// the minibatch was copied into (-1: none; call mlfeed_source_fill), and a bit mask of the
// streams whose every sequence has exactly one sample (bit i for stream i < 63).
const metaLen = 9

// mlfeed_next waits up to timeout_ms milliseconds (negative: without limit) for the next
// minibatch of source h. It returns 1 with meta filled (see metaLen, then the minibatch's
// sizes as mlfeed_sizes writes them), 0 at the end of the data, 2 when the minibatch is not
// ready yet (call again; nothing is lost), -1 with e filled on error. again non-zero says
// that the caller did not get to take the minibatch the previous call returned (it was
// interrupted): that minibatch is returned again.
//
//export mlfeed_next
func mlfeed_next(h C.uintptr_t, again C.int, timeoutMS C.int64_t, meta *C.int64_t, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	setError(e, nil)
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
	m := unsafe.Slice((*int64)(unsafe.Pointer(meta)), int(n))
	if len(m) != metaLen+sizesHeader+sizesPerStream*len(s.schema.Streams) {
		setError(e, fmt.Errorf("%w: %d meta entries for %d streams", format.ErrUsage, len(m), len(s.schema.Streams)))
		return -1
	}
	if again != 0 && s.pending {
		copy(m, s.last)
		return 1
	}
	s.pending = false
	if !s.inFlight {
		s.start(s.target)
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
			return 2 // the result stays in s.res for the next call
		}
	}
	s.inFlight = false
	if !res.ok {
		s.last = nil
		if err := res.err; err != nil {
			setError(e, err)
			return -1
		}
		if err := s.r.Err(); err != nil {
			setError(e, err)
			return -1
		}
		return 0
	}
	s.last, s.pending = res.meta, true
	copy(m, res.meta)
	if res.filled >= 0 {
		// Read the next one ahead, into the other set.
		s.target = 1 - res.filled
		s.start(s.target)
	}
	return 1
}

// mlfeed_source_fill copies the minibatch mlfeed_next returned last, which it could not copy
// itself (meta's set is -1), into buffer set (0 or 1), which the caller has grown to fit it
// and registered, and reads the next minibatch ahead into the other set. It returns 0, or -1
// with e filled.
//
//export mlfeed_source_fill
func mlfeed_source_fill(h C.uintptr_t, set C.int, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	err := sourceFill(uintptr(h), int(set))
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
}

func sourceFill(h uintptr, set int) error {
	s, err := value[*source](h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.r == nil:
		return fmt.Errorf("%w: the minibatch source is closed", format.ErrUsage)
	case set != 0 && set != 1:
		return fmt.Errorf("%w: buffer set %d", format.ErrUsage, set)
	case s.last == nil || s.inFlight || s.last[7] >= 0:
		return fmt.Errorf("%w: no minibatch waits to be copied", format.ErrUsage)
	}
	b := s.r.Batch()
	if !s.sets[set].fits(byteSizes(s.last[metaLen:], len(s.schema.Streams))) {
		return fmt.Errorf("%w: buffer set %d is too small for the minibatch", format.ErrUsage, set)
	}
	if err := fillChunk(&b.Data, s.sets[set].ptrs); err != nil {
		return err
	}
	s.last[7] = int64(set) // a caller interrupted now finds the minibatch in set
	s.target = 1 - set
	s.start(s.target)
	return nil
}

// mlfeed_buffers registers buffer set (0 or 1) of source h: n addresses and their capacities
// in bytes, laid out as mlfeed_sizes describes. The caller keeps them alive until it registers
// others or frees h, and changes a set only when mlfeed_next has returned a minibatch that is
// not in it (meta's set) and none is being read ahead into it: when that minibatch's set is -1.
// It returns 0, or -1 with e filled.
//
//export mlfeed_buffers
func mlfeed_buffers(h C.uintptr_t, set C.int, ptrs *unsafe.Pointer, caps *C.int64_t, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	err := func() error {
		s, err := value[*source](uintptr(h))
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if set != 0 && set != 1 || int(n) != sizesHeader+sizesPerStream*len(s.schema.Streams) {
			return fmt.Errorf("%w: buffer set %d of %d buffers", format.ErrUsage, set, n)
		}
		if s.inFlight && s.target == int(set) {
			return fmt.Errorf("%w: buffer set %d is being filled", format.ErrUsage, set)
		}
		b := bufSet{ptrs: make([]unsafe.Pointer, n), caps: make([]int64, n)}
		copy(b.ptrs, unsafe.Slice(ptrs, int(n)))
		copy(b.caps, unsafe.Slice((*int64)(unsafe.Pointer(caps)), int(n)))
		s.sets[set] = b
		return nil
	}()
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
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
	if int64(len(data)) <= int64(capacity) {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(data)), data)
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
	r, err := minibatch.New(s.src, cfg)
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
	return nil
}
