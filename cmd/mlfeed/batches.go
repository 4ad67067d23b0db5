package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/inspect"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/minibatch"
)

func init() {
	var in inputFlags
	var f batchFlags
	cmd := &cobra.Command{
		Use:   "batches [flags] FILE...|--config FILE[:SECTION] [NAME=VALUE...]",
		Short: "Run the minibatch engine over a data set; print shapes, sweeps and samples/s",
		Long: `batches reads a data set the way CNTK's readers feed training: block-randomized sweeps
(CNTK's randomizer, bit for bit), minibatches of --mb-size samples, distributed over
--workers, and prints the streams' shapes, the sweeps and minibatches read and the rate.

--config FILE[:SECTION] takes the data file(s), the streams and the reader options from a
CNTK configuration's reader section (both the reader = [ ... ] and the composite
deserializers = ({ ... }) forms); flags given explicitly override it. Without SECTION the
file's only reader section is used. NAME=VALUE arguments set the configuration's variables
as on CNTK's command line (DataDir=/data sets $DataDir$).

--dump prints one JSON line per minibatch instead: {"sweep": S, "sequences": N,
"<stream>": [the minibatch's sequences, each as a list of samples as in cat --json]}.

--sweeps and --max-samples are totals counted from the start of training, so a run
restored with --restore stops where the uninterrupted one would have stopped.
--save-state FILE --after K stops after K minibatches and writes the position as JSON.

--mix WEIGHT=PATH (repeated) reads a mixture of data sets in place of FILE arguments:
each sequence's data set is drawn by the weights from the seed and its sample position,
each data set in its own randomized order. --mix-file FILE gives the mixture as JSON
(sources with "weight" and "path" or "paths", "format", "inputs", "options"; "stop";
"schedule" of {"at": POSITION, "weights": [...]}). --stop first_exhausted (the default)
ends a sweep when a data set ends its own, all_exhausted when every one has, never not at
all (give --max-samples). See docs/minibatch.md.`,
		Example: `  mlfeed batches --mb-size 256 --sweeps 2 train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz
  mlfeed batches --dump --mb-size 100 --no-randomize t10k-labels-idx1-ubyte.gz
  mlfeed batches --config dense.cntk:MNIST --mb-size 1000
  mlfeed batches --config ConvNet_MNIST.cntk:trainNetwork DataDir=/data/mnist
  mlfeed batches --workers 4 --rank 1 --seed 7 data.cbf
  mlfeed batches --save-state st.json --after 100 data.cbf && mlfeed batches --restore st.json data.cbf
  mlfeed batches --mix 0.7=wiki/ --mix 0.3=code/ --stop never --max-samples 1000000
  mlfeed batches --mix-file mix.json --save-state st.json --after 500`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatches(cmd, &in, &f, args)
		},
	}
	in.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&f.mbSize, "mb-size", minibatch.DefaultMinibatchSize, "minibatch size in `N` samples (of the stream that defines it; over all workers)")
	fl.Uint64Var(&f.seed, "seed", 0, "randomization seed `N` (sweep s uses N+s)")
	fl.BoolVar(&f.noRandomize, "no-randomize", false, "read in file order")
	fl.Int64Var(&f.window, "window", 0, "randomization window in `N` chunks (0: the whole data set)")
	fl.BoolVar(&f.sampleWindow, "sample-window", false, "count --window in samples instead of chunks")
	fl.BoolVar(&f.frameMode, "frame-mode", false, "frame mode: sequences of one sample, no padding")
	fl.StringVar(&f.definesMB, "defines-mb-size", "", "`STREAM` whose samples count toward the minibatch size")
	fl.Int64Var(&f.sweeps, "sweeps", 0, "stop after `N` sweeps from the start of training (default 1 unless --max-samples)")
	fl.Int64Var(&f.maxSamples, "max-samples", 0, "stop at the first minibatch reaching `N` samples from the start of training")
	fl.IntVar(&f.workers, "workers", 0, "number of workers `N` (default $WORLD_SIZE, else 1)")
	fl.IntVar(&f.rank, "rank", 0, "this worker's rank `R` (default $RANK)")
	fl.IntVar(&f.packers, "packers", 0, "goroutines `N` packing minibatches ahead (default: one per thread, 4 at most; -1: pack on the reading goroutine)")
	fl.BoolVar(&f.keep, "keep-in-memory", false, "keep every chunk read in memory: decode each once (CNTK's keepDataInMemory)")
	fl.BoolVar(&f.cntkDist, "cntk-distribution", false, "divide data among workers as CNTK does (by chunk), not balanced")
	fl.StringVar(&f.saveState, "save-state", "", "write the reader's state as JSON to `FILE` at the end")
	fl.Int64Var(&f.after, "after", 0, "stop after `K` minibatches (with --save-state)")
	fl.StringVar(&f.restore, "restore", "", "restore the reader's state from `FILE` before reading")
	fl.BoolVar(&f.dump, "dump", false, "print each minibatch as a JSON line")
	fl.BoolVar(&f.stats, "stats", false, "print how well mixed each sweep's minibatches are (chunks per minibatch, rank correlation, label divergence) on stderr")
	fl.StringArrayVar(&f.mix, "mix", nil, "read a mixture: data set `WEIGHT=PATH` (repeatable) in place of FILE arguments")
	fl.StringVar(&f.mixFile, "mix-file", "", "read the mixture JSON `FILE` describes (sources, weights, stop, schedule)")
	fl.StringVar(&f.stop, "stop", "", "a mixture's stopping `RULE`: first_exhausted (default), all_exhausted or never")
	fl.StringVar(&f.statsLabel, "stats-label", "", "the label `STREAM` for --stats (default: the first integer-scalar or one-hot stream)")
	rootCmd.AddCommand(cmd)
}

// Limits of batches' flags: each packer holds a minibatch; a worker is a process.
const (
	maxPackers = 1024
	maxWorkers = 1 << 20
)

type batchFlags struct {
	mbSize                            int
	seed                              uint64
	noRandomize, sampleWindow         bool
	frameMode, cntkDist, dump, keep   bool
	window, sweeps, maxSamples, after int64
	workers, rank, packers            int
	definesMB, saveState, restore     string
	stats                             bool
	statsLabel                        string
	mix                               []string
	mixFile, stop                     string
}

// mixture sets spec.Mix from --mix, --mix-file and --stop, if given.
func (f *batchFlags) mixture(spec *dataset.Spec) error {
	if len(f.mix) == 0 && f.mixFile == "" {
		if f.stop != "" {
			return usageErr("--stop applies to a mixture (--mix or --mix-file)")
		}
		return nil
	}
	switch {
	case len(f.mix) > 0 && f.mixFile != "":
		return usageErr("--mix and --mix-file: give the mixture one way")
	case len(spec.Paths) > 0:
		return usageErr("a mixture (--mix, --mix-file) takes the place of FILE arguments")
	case spec.Config != "":
		return usageErr("a mixture (--mix, --mix-file) does not take --config")
	}
	m := &dataset.Mix{}
	if f.mixFile != "" {
		data, err := os.ReadFile(f.mixFile)
		if err != nil {
			return usageErr("--mix-file: %v", err)
		}
		if m, err = dataset.ParseMix(data, f.mixFile, filepath.Dir(f.mixFile)); err != nil {
			return err
		}
	}
	for _, a := range f.mix {
		in, err := dataset.ParseMixArg(a)
		if err != nil {
			return err
		}
		m.Sources = append(m.Sources, in)
	}
	if f.stop != "" {
		st, err := minibatch.ParseStop(f.stop)
		if err != nil {
			return usageErr("--stop: %v", err)
		}
		m.Stop = st
	}
	if m.Stop == minibatch.Never && f.maxSamples == 0 && f.after == 0 {
		return usageErr("a mixture that never stops needs --max-samples (or --after)")
	}
	spec.Mix = m
	return nil
}

// config builds the engine configuration: the data set's (its --config reader section), with
// the flags given explicitly over it.
func (f *batchFlags) config(cmd *cobra.Command, spec *dataset.Spec) (minibatch.Config, error) {
	changed := cmd.Flags().Changed
	r := &spec.Randomization
	if changed("seed") {
		r.Seed = &f.seed
	}
	if changed("no-randomize") {
		randomize := !f.noRandomize
		r.Randomize = &randomize
	}
	if changed("window") {
		r.Window = &f.window
	}
	if changed("sample-window") {
		r.SampleWindow = &f.sampleWindow
	}
	if changed("frame-mode") {
		r.FrameMode = &f.frameMode
	}
	c, err := spec.MinibatchConfig()
	if err != nil {
		return c, err
	}
	c.Log = os.Stderr
	c.MinibatchSize = f.mbSize
	c.DefinesMBSize = f.definesMB
	c.KeepDataInMemory = f.keep
	c.Packers = f.packers
	c.MaxSweeps, c.MaxSamples = f.sweeps, f.maxSamples
	if c.MaxSweeps == 0 && c.MaxSamples == 0 {
		c.MaxSweeps = 1
	}
	c.Workers, c.Rank = f.workers, f.rank
	if f.workers == 0 && changed("rank") {
		return c, usageErr("--rank needs --workers")
	}
	if f.workers == 0 {
		env, err := minibatch.ConfigFromEnv()
		if err != nil {
			return c, usageErr("%v", err)
		}
		c.Workers, c.Rank = env.Workers, env.Rank
	}
	if f.cntkDist {
		c.Distribution = minibatch.CNTKCompatible
	}
	if err := checkRange("--packers", int64(f.packers), -1, maxPackers); err != nil {
		return c, err
	}
	if err := checkRange("--workers", int64(f.workers), 0, maxWorkers); err != nil {
		return c, err
	}
	if f.workers > 0 {
		if err := checkRange("--rank", int64(f.rank), 0, int64(f.workers)-1); err != nil {
			return c, err
		}
	}
	if f.mbSize <= 0 || f.window < 0 || f.sweeps < 0 || f.maxSamples < 0 || f.after < 0 {
		return c, usageErr("--mb-size must be positive; --window, --sweeps, --max-samples and --after not negative")
	}
	if f.after > 0 && f.saveState == "" {
		return c, usageErr("--after needs --save-state")
	}
	return c, nil
}

func runBatches(cmd *cobra.Command, in *inputFlags, f *batchFlags, args []string) (err error) {
	if len(args) == 0 && in.config == "" && len(f.mix) == 0 && f.mixFile == "" {
		return usageErr("batches needs FILE arguments, --config or --mix (see '%s --help')", cmd.CommandPath())
	}
	spec, err := in.spec(args)
	if err != nil {
		return err
	}
	if err := f.mixture(spec); err != nil {
		return err
	}
	cfg, err := f.config(cmd, spec)
	if err != nil {
		return err
	}
	src, err := spec.Open(in.ctx)
	if err != nil {
		return err
	}
	defer closer.Into(src, &err)
	// The engine runs on the command's scheduler: --threads and --memory bound it too.
	r, err := minibatch.NewContext(cmd.Context(), src, cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	defer r.Close()
	if f.restore != "" {
		data, err := os.ReadFile(f.restore)
		if err != nil {
			return usageErr("--restore: %v", err)
		}
		var st minibatch.State
		if err := json.Unmarshal(data, &st); err != nil {
			return usageErr("--restore %s: %v", f.restore, err)
		}
		if err := r.Restore(st); err != nil {
			return usageErr("--restore %s: %v", f.restore, err)
		}
	}
	var mix *minibatch.Stats
	mixed, _ := src.(*minibatch.Mixed)
	var fromSet []int64 // a mixture's sequences read from each data set
	if mixed != nil {
		fromSet = make([]int64, len(mixed.Mix().Sources))
	}
	if f.stats {
		if mix, err = minibatch.NewStats(r, f.statsLabel); err != nil {
			return usageErr("--stats: %v", err)
		}
	}
	w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	sc := r.Schema()
	var (
		n, samples int64
		empty      int64 // minibatches with no sequence of this worker's
		sweeps     = map[int64]bool{}
		buf        []byte
		first      *minibatch.Batch
		start      = time.Now()
		sweepEnds  []time.Duration // time since start at the end of each whole sweep read
	)
	for (f.after == 0 || n < f.after) && r.Next() {
		b := r.Batch()
		if mix != nil {
			mix.Add(b)
		}
		n++
		samples += b.Samples
		if mixed != nil {
			for _, o := range b.Origins {
				if k := mixed.SourceOf(o.Chunk); k >= 0 {
					fromSet[k]++
				}
			}
		}
		sweeps[b.Sweep] = true
		if b.EndOfSweep {
			sweepEnds = append(sweepEnds, time.Since(start))
		}
		if b.Sequences == 0 {
			// A worker's share of a minibatch is empty when none of its sequences are this
			// worker's (chunks are shared out whole).
			empty++
		} else if first == nil && !f.dump {
			first = b.Clone()
		}
		if f.dump {
			buf = appendBatchJSON(buf[:0], &sc, b)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
	}
	elapsed := time.Since(start)
	if err := r.Err(); err != nil {
		return err
	}
	if mix != nil {
		writeMixing(cmd.ErrOrStderr(), mix.Sweeps())
	}
	if f.saveState != "" {
		data, err := json.Marshal(r.State())
		if err != nil {
			return err
		}
		out, err := createOutput(f.saveState)
		if err != nil {
			return err
		}
		if _, err := out.Write(append(data, '\n')); err != nil {
			out.Abort()
			return out.Err(err)
		}
		if err := out.Commit(); err != nil {
			return err
		}
	}
	if !f.dump {
		writeBatchSummary(w, &sc, cfg, r, first, n, empty, samples, len(sweeps), elapsed, sweepEnds)
		if mixed != nil {
			writeMixSummary(w, mixed, fromSet)
		}
	}
	return w.Flush()
}

// writeMixing prints --stats: one line per sweep.
func writeMixing(w io.Writer, sweeps []minibatch.SweepStats) {
	for _, s := range sweeps {
		fmt.Fprintf(w, "sweep %d: %d minibatches, %d sequences; chunks per minibatch %.1f (%d-%d of %d); rank correlation %.3f",
			s.Sweep, s.Minibatches, s.Sequences, s.MeanChunks, s.MinChunks, s.MaxChunks, s.Chunks, s.RankCorrelation)
		switch {
		case s.Label != "":
			fmt.Fprintf(w, "; labels %q: %d classes, divergence %.3f bits (a random draw: %.3f)", s.Label, s.Classes, s.Divergence, s.RandomDivergence)
		case s.LabelNote != "":
			fmt.Fprintf(w, "; no label figures: %s", s.LabelNote)
		}
		fmt.Fprintln(w)
	}
}

// appendBatchJSON appends the --dump line of a minibatch.
func appendBatchJSON(buf []byte, sc *mlfeed.Schema, b *minibatch.Batch) []byte {
	buf = append(buf, `{"sweep":`...)
	buf = strconv.AppendInt(buf, b.Sweep, 10)
	buf = append(buf, `,"sequences":`...)
	buf = strconv.AppendInt(buf, int64(b.Sequences), 10)
	for i := range sc.Streams {
		buf = append(buf, ',')
		buf = strconv.AppendQuote(buf, sc.Streams[i].Name)
		buf = append(buf, ":["...)
		for q := 0; q < b.Sequences; q++ {
			if q > 0 {
				buf = append(buf, ',')
			}
			buf = inspect.AppendSamples(buf, &sc.Streams[i], &b.Data.Streams[i], q)
		}
		buf = append(buf, ']')
	}
	return append(buf, "}\n"...)
}

// writeBatchSummary prints what batches read. With several workers, the minibatch size and
// the samples per sweep are the data set's, over all workers, and the rest this worker's:
// its first minibatch with samples, its minibatches (some empty: those whose sequences are all
// other workers'), its samples.
func writeBatchSummary(w io.Writer, sc *mlfeed.Schema, cfg minibatch.Config, r *minibatch.Reader, first *minibatch.Batch, n, empty, samples int64, sweeps int, elapsed time.Duration, sweepEnds []time.Duration) {
	order := "randomized"
	if cfg.NoRandomize {
		order = "file order"
	}
	if cfg.Workers > 1 {
		fmt.Fprintf(w, "minibatch size %d samples over all workers, %s, %d samples per sweep over all workers; worker %d of %d, whose share follows\n",
			cfg.MinibatchSize, order, r.SweepSamples(), cfg.Rank, cfg.Workers)
	} else {
		fmt.Fprintf(w, "minibatch size %d samples, %s, %d samples per sweep\n", cfg.MinibatchSize, order, r.SweepSamples())
	}
	for i := range sc.Streams {
		st := &sc.Streams[i]
		fmt.Fprintf(w, "  %-12s %s %s %s", st.Name, st.Storage, st.Type, shapeString(st))
		if first != nil {
			l := first.Layouts[i]
			fmt.Fprintf(w, "  first minibatch: %d rows x %d steps", l.Rows, l.Width)
		}
		fmt.Fprintln(w)
	}
	if empty > 0 {
		fmt.Fprintf(w, "%d minibatches (%d empty: no sequence of this worker's), ", n, empty)
	} else {
		fmt.Fprintf(w, "%d minibatches, ", n)
	}
	rate := float64(samples) / elapsed.Seconds()
	fmt.Fprintf(w, "%d samples, %d sweeps in %.3fs: %.0f samples/s\n", samples, sweeps, elapsed.Seconds(), rate)
	if len(sweepEnds) >= 2 {
		// The first sweep read to its end pays for starting up (memory that is new to the
		// process, files not yet mapped); the sweeps after it show the steady rate.
		d := make([]float64, len(sweepEnds)-1)
		for k := range d {
			d[k] = (sweepEnds[k+1] - sweepEnds[k]).Seconds()
		}
		slices.Sort(d)
		fmt.Fprintf(w, "sweep times: first %.4fs, then median %.4fs over %d sweeps\n", sweepEnds[0].Seconds(), d[len(d)/2], len(d))
	}
}

// writeMixSummary prints how many sequences each data set of a mixture gave (this worker's,
// with several), against its first weight's share.
func writeMixSummary(w io.Writer, x *minibatch.Mixed, from []int64) {
	m := x.Mix()
	var total int64
	var weights float64
	for k, s := range m.Sources {
		total += from[k]
		weights += s.Weight
	}
	fmt.Fprintf(w, "mixture of %d data sets, stop %s:", len(m.Sources), m.Stop)
	for k, s := range m.Sources {
		share := 0.0
		if total > 0 {
			share = float64(from[k]) / float64(total)
		}
		fmt.Fprintf(w, " %s %d sequences (%.1f%%, weight %.1f%%);", s.Name, from[k], 100*share, 100*s.Weight/weights)
	}
	fmt.Fprintln(w)
}
