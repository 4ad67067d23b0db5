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
type source struct {
	mu     sync.Mutex
	src    mlfeed.Source
	own    bool
	cfg    minibatch.Config
	r      *minibatch.Reader
	schema mlfeed.Schema

	res       chan nextResult // the result of the Next running, when inFlight
	inFlight  bool            // a Next runs or has finished and its result not yet been taken
	before    minibatch.State
	delivered bool // the caller holds r.Batch()
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
	ok  bool
	err error // a recovered panic
}

// settle waits for a Next in flight and drops its minibatch.
func (s *source) settle() {
	if s.inFlight {
		<-s.res
		s.inFlight = false
	}
	s.delivered = false
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

func (s *source) current() (*mlfeed.Chunk, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil || !s.delivered {
		return nil, fmt.Errorf("%w: no current minibatch", format.ErrUsage)
	}
	return &s.r.Batch().Data, nil
}

// state returns the position after the minibatch the caller holds.
func (s *source) state() minibatch.State {
	if s.inFlight {
		return s.before
	}
	return s.r.State()
}

// metaLen is the number of int64 entries mlfeed_next writes before the chunk sizes.
const metaLen = 7

// mlfeed_next waits up to timeout_ms milliseconds (negative: without limit) for the next
// minibatch of source h; with again non-zero it returns the minibatch it returned last, if it
// has, instead (for a caller interrupted before it could take it). It returns 1 with meta filled (sweep, sequences, samples, global
// samples, end of sweep, end of epoch, position, then the minibatch's sizes as mlfeed_sizes
// writes them), 0 at the end of the data, 2 when the minibatch is not ready yet (call again;
// nothing is lost), -1 with e filled on error.
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
	if again != 0 && s.delivered && !s.inFlight {
		return s.meta(meta, n, e)
	}
	if !s.inFlight {
		s.delivered = false
		s.before = s.r.State()
		s.inFlight = true
		rd := s.r
		go func() {
			var res nextResult
			defer func() {
				if v := recover(); v != nil {
					res = nextResult{err: recovered(v)}
				}
				s.res <- res
			}()
			res.ok = rd.Next()
		}()
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
	ok := res.ok
	s.inFlight = false
	if !ok {
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
	s.delivered = true
	return s.meta(meta, n, e)
}

// meta writes the current minibatch's description for mlfeed_next and returns 1.
func (s *source) meta(meta *C.int64_t, n C.int64_t, e *C.mlfeed_error) C.int {
	b := s.r.Batch()
	m := unsafe.Slice((*int64)(unsafe.Pointer(meta)), int(n))
	if len(m) != metaLen+sizesHeader+sizesPerStream*len(s.schema.Streams) {
		setError(e, fmt.Errorf("%w: %d meta entries for %d streams", format.ErrUsage, len(m), len(s.schema.Streams)))
		return -1
	}
	m[0], m[1], m[2], m[3] = b.Sweep, int64(b.Sequences), b.Samples, b.GlobalSamples
	m[4], m[5], m[6] = boolInt(b.EndOfSweep), boolInt(b.EndOfEpoch), b.Position
	if err := chunkSizes(&b.Data, m[metaLen:]); err != nil {
		setError(e, err)
		return -1
	}
	return 1
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
