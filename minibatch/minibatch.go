// Package minibatch turns an mlfeed.Source into training minibatches the way CNTK's readers do:
// block randomization, minibatches counted in samples, sequence and frame packing, distributed
// reading, checkpoint and restore, and background prefetch of chunks.
//
// # Timeline
//
// The engine walks a global timeline of samples, sweep after sweep (a sweep is one pass over
// the data). Each sweep has its own order of sequences: with randomization, CNTK's block
// randomizer seeded with RandomizationSeed + sweep (the chunks are shuffled, then sequences are
// shuffled within a rolling window of chunks or samples); without it, file order. A minibatch
// takes whole sequences while their samples add up to at most MinibatchSize (always at least
// one sequence), never crosses the end of a sweep, and stops at the first sequence that reaches
// an epoch end or MaxSamples. Only the chunks of the current window are held in memory; each
// is released after its last sequence is delivered.
//
// # Distributed reading
//
// With Workers > 1 every worker walks the same global timeline, so minibatch boundaries and
// positions are the same on every worker, and keeps its own sequences of each minibatch.
// Ownership is decided from (seed, sweep, rank) alone. The default, Balanced, cuts the sweep's
// chunk order into Workers ranges of equal sample counts: a sequence belongs to the worker whose
// range holds its first sample. Every worker gets its share to within one sequence per range
// end, even when the data set is a single chunk, and reads only the chunks its range overlaps.
// CNTKCompatible reproduces CNTK: by the chunk's randomized position modulo Workers, or by the
// sequence's position in the sweep without randomization.
//
// # Checkpoints
//
// State returns the position as a small JSON-serializable value, and Restore continues
// exactly where it was taken: the next minibatches are the same, across sweep boundaries,
// and with any worker count (the state is the global position, which every worker shares).
//
// # Buffers
//
// Next reuses the Batch and its buffers: a batch is valid until the following call to Next.
// A caller that keeps a batch longer calls Batch.Clone. In steady state Next makes no
// allocations.
// Batch.SetMemory has a batch packed into memory the caller provides (the Python package's
// zero-copy path).
//
// # Mixtures
//
// A mixture feeds one minibatch stream from several data sets in set proportions. NewMix
// makes its source; New (or NewContext) given that source draws each sequence's data set by
// the weights:
//
//   - The sequence that starts at global sample position p comes from the data set that a
//     counter-based generator (SplitMix64 at step p of a stream seeded from
//     RandomizationSeed) draws by the weights in force at p: any position's draw is computed
//     without replaying the ones before it, and every worker draws the same.
//   - Within a data set, its own randomized order: CNTK's randomizer over its own chunks,
//     sweep s seeded with RandomizationSeed + i<<32 + s for data set i (the first data set
//     of a mixture is read in the order it has alone), with the same window; its own sweeps
//     follow one another.
//   - A mixture sweep (Batch.Sweep, Batch.EndOfSweep, MaxSweeps) starts every data set at the
//     start of a sweep of its own and ends by the stopping rule (Stop): FirstExhausted after
//     the sequence that ends the first data set's sweep, AllExhausted once every data set
//     that the weights can draw has ended a sweep (those that ended start their next), Never
//     not at all (MaxSamples ends reading).
//   - Weights may change at given sample positions (Mix.Schedule).
//
// Workers split a mixture as they split one data set: every worker walks the same global
// timeline, and a sequence is the worker's that its data set's sweep gives it (Balanced or
// CNTKCompatible over that data set's chunks). The state (State) holds the global position
// and how many sequences each data set has given, so Restore continues exactly, with any
// number of workers.
package minibatch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mlfeed/mlfeed"
)

// Errors.
var (
	// ErrConfig is wrapped by errors for an invalid configuration.
	ErrConfig = errors.New("minibatch: invalid configuration")
	// ErrState is wrapped by errors for a checkpoint state that does not fit the data or the
	// configuration.
	ErrState = errors.New("minibatch: invalid state")
	// ErrFrameMode is wrapped by the error for a sequence of more than one sample in frame
	// mode.
	ErrFrameMode = fmt.Errorf("minibatch: %w: not a frame", mlfeed.ErrFormat)
)

// Distribution selects how sequences are divided among workers.
type Distribution uint8

const (
	// Balanced gives each worker a contiguous range of equal sample count of the sweep's chunk
	// order (the default).
	Balanced Distribution = iota
	// CNTKCompatible divides as CNTK does: a sequence belongs to worker r when its chunk's
	// randomized position modulo Workers is r, or, without randomization, when its position in
	// the sweep modulo Workers is r. With fewer chunks than workers some workers get nothing.
	CNTKCompatible
)

// DefaultMinibatchSize is the minibatch size used when Config.MinibatchSize is zero.
const DefaultMinibatchSize = 256

// DefaultPackers bounds the packing goroutines used when Config.Packers is zero: a shuffled
// gather is bound by memory, which a few cores saturate, and every packer holds a minibatch.
const DefaultPackers = 4

// Config configures a Reader. The zero value randomizes over the whole data set with seed 0,
// minibatches of DefaultMinibatchSize samples, one worker, on every core, and runs forever.
// It never reads the environment (see ConfigFromEnv).
type Config struct {
	// MinibatchSize is the number of samples per minibatch, counted in the stream that defines
	// the minibatch size (summed over all workers). Zero means DefaultMinibatchSize.
	MinibatchSize int
	// NoRandomize turns randomization off (CNTK's randomize=false): sequences come in file
	// order.
	NoRandomize bool
	// RandomizationSeed is CNTK's randomizationSeed; sweep s is randomized with seed
	// RandomizationSeed + s.
	RandomizationSeed uint64
	// RandomizationWindow is CNTK's randomizationWindow, in chunks or, with
	// SampleBasedRandomizationWindow, in samples. Zero means the whole data set. (CNTK's own
	// default of 4 GiB / chunkSizeInBytes chunks is what package cntkconfig fills in.)
	RandomizationWindow int64
	// SampleBasedRandomizationWindow counts RandomizationWindow in samples instead of chunks.
	SampleBasedRandomizationWindow bool
	// FrameMode packs samples without padding; every sequence must have exactly one sample.
	FrameMode bool
	// DefinesMBSize names the stream whose samples count toward the minibatch size. Empty
	// means the schema's stream marked DefinesMBSize, or else a sequence's longest stream.
	DefinesMBSize string
	// EpochSize, when positive, is the epoch length in samples: minibatches stop at epoch ends
	// (Batch.EndOfEpoch). Zero means no epochs.
	EpochSize int64
	// MaxSamples, when positive, ends reading at the first minibatch that reaches this global
	// sample position, counted from the start of training.
	MaxSamples int64
	// MaxSweeps, when positive, ends reading after this many sweeps from the start of training.
	MaxSweeps int64
	// Workers is CNTK's numberOfWorkers and Rank its workerRank. Zero means a single
	// worker; ConfigFromEnv takes both from $WORLD_SIZE and $RANK, as torchrun sets them.
	Workers int
	// Rank is this worker's rank in [0, Workers).
	Rank int
	// Distribution selects how sequences are divided among workers.
	Distribution Distribution
	// KeepDataInMemory keeps every chunk read for the rest of the reader's life, as CNTK's
	// keepDataInMemory does: each chunk is read and decoded once, and memory holds the whole
	// data set (counted against the budget, see Memory). By default a chunk is released after
	// its last sequence of the sweep.
	KeepDataInMemory bool
	// Prefetch is the number of chunks read and decoded ahead in the background, once the
	// first minibatch is delivered (before, they would only delay it). Zero means 2; negative
	// turns prefetching off.
	Prefetch int
	// Packers is the number of goroutines that pack minibatches (copy their sequences out of
	// the chunks and lay them out) ahead of Next, several minibatches at once, each on a
	// thread of the Reader's scheduler while it packs; each holds a minibatch's memory. Zero
	// means DefaultPackers or Threads, whichever is smaller; negative (or one thread) packs
	// each minibatch in Next on the caller's goroutine. The minibatches are the same either
	// way.
	Packers int
	// PackAhead is how many minibatches beyond one per packer may be packed ahead of the one
	// the caller holds, each in memory of its own. Zero means 1: a packer always finds the
	// next minibatch to pack while the caller waits for the oldest. When the caller packs too
	// (Ready, while it waits between stretches of work of its own), it takes minibatches the
	// packers would have packed, and with one ahead they often found none planned until the
	// caller's next Next: the Python package asks for 3. Unused without packers.
	PackAhead int
	// Threads bounds the threads that load chunks and pack minibatches, the caller's
	// included (the caller packs a minibatch that no packer has started when Next needs
	// it), in the scheduler New makes (NewContext with a ctx that carries a scheduler uses
	// that one's threads instead). Zero means runtime.GOMAXPROCS(0); with 1, everything
	// runs in Next on the caller's goroutine.
	Threads int
	// Memory is the memory budget in bytes of the scheduler New makes (zero: the default,
	// sched.DefaultMemory); NewContext with a ctx that carries a scheduler uses that one's
	// budget instead. The chunks the Reader holds count against it, as do the source's
	// decoders' (which see the scheduler through the ctx of ReadChunk): chunks are read ahead
	// (Prefetch) and kept to decode into only while the budget is not spent. The chunks that
	// the randomization window and the minibatches planned ahead read are held whatever the
	// budget: a window larger than the budget holds more. Close gives the memory back.
	Memory int64
	// TraceLevel is CNTK's traceLevel: at 2 and above the reader logs each sweep to Log.
	TraceLevel int
	// Log receives trace output. Nil discards it.
	Log io.Writer
}

// ConfigFromEnv returns the zero Config with Workers and Rank taken from the environment, as
// torchrun and other launchers set them: $WORLD_SIZE workers, this one of rank $RANK. Without
// $WORLD_SIZE it is the zero Config (a single worker). A Config's zero value never reads the
// environment; the CLI and the Python package start from ConfigFromEnv.
func ConfigFromEnv() (Config, error) {
	var c Config
	ws := os.Getenv("WORLD_SIZE")
	if ws == "" {
		return c, nil
	}
	n, err := strconv.Atoi(ws)
	if err != nil || n < 1 {
		return c, fmt.Errorf("%w: WORLD_SIZE=%q", ErrConfig, ws)
	}
	rs := os.Getenv("RANK")
	rank, err := strconv.Atoi(rs)
	if err != nil || rank < 0 || rank >= n {
		return c, fmt.Errorf("%w: RANK=%q with WORLD_SIZE=%d", ErrConfig, rs, n)
	}
	c.Workers, c.Rank = n, rank
	return c, nil
}
