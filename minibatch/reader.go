package minibatch

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/keep"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Reader delivers minibatches from a source. Use it like bufio.Scanner:
//
//	for r.Next() {
//		b := r.Batch()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// The Reader is a thin front over three parts: the cursor walks the pure planner (planner.go)
// on the caller's goroutine, deciding every minibatch in order (cursor.go); the chunk cache
// requests, loads, holds and recycles the chunks they read (chunkcache.go); the packers pack
// several minibatches ahead at once (packers.go, pack.go). Loads and packers run on the
// threads of the scheduler the caller's ctx carries (NewContext), the caller's included. A
// Reader is not safe for concurrent use. It does not close the source; Close it before closing
// the source.
type Reader struct {
	schema  mlfeed.Schema
	samples int64 // samples per sweep

	cursor     // the planning position
	chunkCache // the chunks
	packing    // the minibatches planned and held

	cancel context.CancelFunc
	closed bool

	// Delivery: the position after the minibatch the caller holds (and, for a mixture, its
	// point).
	at    position
	atMix mixPoint
	done  bool
	err   error
	empty Batch // what Batch returns before the first minibatch
}

// New returns a Reader over src, on a scheduler of its own of Config.Threads threads and
// Config.Memory bytes: NewContext(context.Background(), src, cfg).
func New(src mlfeed.Source, cfg Config) (*Reader, error) {
	return NewContext(context.Background(), src, cfg)
}

// NewContext returns a Reader over src whose chunk loads and packers run on the scheduler ctx
// carries (internal/sched; the CLI's and the Python package's, which bound every read of the
// command by --threads and --memory), or, when ctx carries none, on a scheduler of its own of
// Config.Threads threads and Config.Memory bytes. The source's decoders see the scheduler
// through the ctx of ReadChunk. Ending ctx stops the reading: Next then reports ctx's error.
// It reads no data until the first call to Next.
func NewContext(ctx context.Context, src mlfeed.Source, cfg Config) (*Reader, error) {
	r := &Reader{schema: src.Schema()}
	cc := &r.chunkCache
	cc.src, cc.schema, cc.infos, cc.defining = src, &r.schema, src.Chunks(), -1
	r.cursor.cc, r.packing.cc = cc, cc
	pl := &r.pl
	if cfg.MinibatchSize < 0 {
		return nil, fmt.Errorf("%w: negative minibatch size %d", ErrConfig, cfg.MinibatchSize)
	}
	pl.mbSize = int64(cfg.MinibatchSize)
	if pl.mbSize == 0 {
		pl.mbSize = DefaultMinibatchSize
	}
	if cfg.EpochSize < 0 || cfg.MaxSamples < 0 || cfg.MaxSweeps < 0 || cfg.RandomizationWindow < 0 {
		return nil, fmt.Errorf("%w: negative epoch size, maximum or window", ErrConfig)
	}
	if cfg.DefinesMBSize != "" {
		cc.defining = r.schema.Index(cfg.DefinesMBSize)
		if cc.defining < 0 {
			return nil, fmt.Errorf("%w: definesMBSize: no stream %q", ErrConfig, cfg.DefinesMBSize)
		}
		cc.definesMB = true
	} else {
		for i := range r.schema.Streams {
			if r.schema.Streams[i].DefinesMBSize {
				cc.defining = i
			}
		}
	}
	pl.workers, pl.rank = cfg.Workers, cfg.Rank
	if pl.workers == 0 {
		pl.workers = 1
	}
	if pl.workers < 1 || pl.rank < 0 || pl.rank >= pl.workers {
		return nil, fmt.Errorf("%w: rank %d of %d workers", ErrConfig, cfg.Rank, cfg.Workers)
	}
	if cfg.Threads < 0 || cfg.Memory < 0 {
		return nil, fmt.Errorf("%w: negative threads or memory", ErrConfig)
	}
	cc.sched = sched.FromContext(ctx)
	if cc.sched == nil {
		cc.sched = sched.New(cfg.Threads, cfg.Memory)
	}
	switch {
	case cfg.Prefetch == 0:
		cc.prefetch = 2
	case cfg.Prefetch > 0:
		cc.prefetch = cfg.Prefetch
	}
	switch {
	case cc.sched.Threads() == 1 || cfg.Packers < 0:
	case cfg.Packers == 0:
		r.packers = min(cc.sched.Threads(), DefaultPackers)
	default:
		r.packers = cfg.Packers
	}
	pl.distribution = cfg.Distribution
	pl.frameMode = cfg.FrameMode
	pl.epochSize, pl.maxSamples, pl.maxSweeps = cfg.EpochSize, cfg.MaxSamples, cfg.MaxSweeps
	pl.lengths = cc.lengthsOf
	pl.rz = randomizer{randomize: !cfg.NoRandomize, seed: cfg.RandomizationSeed,
		window: cfg.RandomizationWindow, sampleBased: cfg.SampleBasedRandomizationWindow}
	maxLen := 0
	for _, c := range cc.infos {
		if c.Sequences < 0 || c.Samples < 0 {
			return nil, fmt.Errorf("%w: negative counts in the chunk table", mlfeed.ErrFormat)
		}
		pl.rz.chunks = append(pl.rz.chunks, chunkCounts{c.Sequences, c.Samples})
		pl.rz.sequences += c.Sequences
		r.samples += c.Samples
		maxLen = max(maxLen, c.Sequences)
		if pl.rz.sequences > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than 2^31 sequences", mlfeed.ErrTooLarge)
		}
	}
	pl.samples = r.samples
	cc.lengths = make([][]int32, len(cc.infos))
	cc.ones = make([]int32, maxLen)
	for i := range cc.ones {
		cc.ones[i] = 1
	}
	// Every sequence one sample long, as lengthsOf finds from the table (MNIST, any data set
	// of single samples): the lengths are known now, and the planner counts.
	pl.unit = true
	for _, c := range cc.infos {
		pl.unit = pl.unit && cc.oneSampleEach(c)
	}
	if pl.unit {
		for c, info := range cc.infos {
			cc.lengths[c] = cc.ones[:info.Sequences]
		}
		cc.known = len(cc.infos)
	}
	cc.slots = make([]*slot, len(cc.infos))
	if raw, ok := src.(mlfeed.RawSampler); ok && rawSchema(&r.schema) {
		cc.raw = raw
		cc.rawChunks = make([]atomic.Pointer[rawChunk], len(cc.infos))
		cc.identity = make([]int64, maxLen+1)
		for i := range cc.identity {
			cc.identity[i] = int64(i)
		}
	}
	if cfg.KeepDataInMemory {
		cc.keep = keep.New(len(cc.infos), cc.readKept)
	} else {
		cc.recycling = true
	}
	if x, ok := src.(*Mixed); ok {
		pl.mix = newMixPlanner(x, pl, cc.lengthsOf)
		r.atMix.copyFrom(&pl.mix.next)
	}
	if cfg.TraceLevel >= 2 && cfg.Log != nil {
		r.trace = cfg.Log
	}
	r.cur, r.nxt = &sweepPlan{}, &sweepPlan{}
	cc.ctx, r.cancel = context.WithCancel(sched.WithContext(ctx, cc.sched))
	r.empty.init(&r.schema, cfg.FrameMode)
	r.empty.reset()
	ahead := r.packers + 1
	if cfg.PackAhead > 0 && r.packers > 0 {
		ahead = r.packers + cfg.PackAhead
	}
	// Jobs: the one the caller holds, and those packed ahead of it.
	for range ahead + 1 {
		j := &job{done: make(chan struct{}, 1)}
		j.batch.init(&r.schema, cfg.FrameMode)
		r.free = append(r.free, j)
	}
	return r, nil
}

// Schema returns the source's schema.
func (r *Reader) Schema() mlfeed.Schema { return r.schema }

// SweepSamples returns the number of samples in one sweep (of a mixture: in one sweep of
// every data set, whose own sweeps a mixture sweep's length depends on).
func (r *Reader) SweepSamples() int64 { return r.samples }

// Position returns the global sample position of the next sequence: the one after the last
// minibatch Next returned.
func (r *Reader) Position() int64 { return r.at.pos }

// Batch returns the minibatch the last successful Next prepared. It is valid until the next
// call to Next, Restore, SetPosition or Close.
func (r *Reader) Batch() *Batch {
	if r.held != nil {
		return &r.held.batch
	}
	return &r.empty
}

// Err returns the error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// Close stops background reads and packing, waits for them to end, and releases the chunks
// held (their memory no longer counts against the scheduler's budget). It does not close the
// source.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cancel()
	r.stop()
	r.bg.Wait()
	r.chunkCache.close()
	r.held, r.queue = nil, nil
	r.done = true
	return nil
}

func (r *Reader) fail(err error) bool {
	r.err = err
	r.done = true
	return false
}

// drainsNow reports whether the sweep's minibatches are all planned and must be packed before
// the next sweep is planned, so that its chunks decode into the memory of this sweep's: when
// chunks are recycled and some were decoded. Chunks packed raw from the source's memory (a
// mapped file) have no memory of their own: the packers go on into the next sweep without a
// pause.
func (r *Reader) drainsNow() bool {
	return r.recycling && r.decoded.Load() && r.planned && r.next >= len(r.cur.order)
}

// Next prepares the next minibatch. It returns false at the end (MaxSweeps or MaxSamples
// reached, or an empty source) or on an error, which Err then returns.
func (r *Reader) Next() bool {
	if r.held != nil {
		r.recycle(r.held.seq)
		r.releaseHeld()
	}
	if r.done {
		return false
	}
	if r.recycling {
		// Chunks that only minibatches packed already read can go to the spares now.
		r.recycle(r.packedUpTo())
	}
	r.start()
	// Plan as far ahead as there are free jobs, handing each to the packers.
	for len(r.free) > 0 && !r.planEnd {
		if len(r.queue) > 0 && r.drainsNow() {
			// The sweep's minibatches are all planned. Let them be packed before planning
			// the next sweep, whose first minibatches need most chunks at once: then those
			// are decoded into the memory of this sweep's, not into new memory (a pause of
			// a minibatch or two per sweep, instead of twice the memory).
			for _, q := range r.queue {
				r.finish(q)
			}
			r.recycle(r.seq)
		}
		j := r.free[len(r.free)-1]
		if !r.planNext(j) {
			break
		}
		r.free = r.free[:len(r.free)-1]
		r.queue = append(r.queue, j)
		if r.work != nil && j.err == nil {
			r.send(j)
		}
	}
	if len(r.queue) == 0 {
		r.done = true
		r.clearSpare()
		return false
	}
	j := r.deliver()
	if j.err != nil {
		return r.fail(j.err)
	}
	r.at = j.at
	if r.pl.mix != nil {
		r.atMix.copyFrom(&j.mix)
	}
	if !r.readAhead {
		r.readAhead = true
		if !r.planEnd {
			// An error planning the next sweep is met again, and reported, when planning
			// reaches that sweep.
			_ = r.pump()
		}
	}
	return true
}
