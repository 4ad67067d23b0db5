package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/render"
	"github.com/mlfeed/mlfeed/stats"
)

func init() {
	var in inputFlags
	var asJSON, quiet bool
	var pngOut string
	var opts stats.Options
	cmd := &cobra.Command{
		Use:   "stats [flags] DATA...",
		Short: "Describe the values of a data set in one streaming pass",
		Long: `stats reads a data set once, chunk by chunk in bounded memory, and describes each stream:
its sample and value counts; for numbers the minimum, maximum, mean, standard deviation, NaN,
infinity and zero counts and a histogram; for integer scalars and one-hot vectors the class
counts; for sparse streams the non-zeros per sample and the most frequent indices; for text
the lengths and the most frequent values; for bytes the sizes and the media types their first
bytes show (PNG, JPEG, GIF, WebP, WAV, FLAC, MP3, gzip, ...). It also gives the distribution
of the sequences' lengths. Several inputs that hold one record set each are combined, as
everywhere.

Counts, minimum and maximum are exact, the mean is a compensated sum, and histogram counts are
exact for the edges shown (see docs/view.md); the most frequent text values and the indices
of sparse streams wider than 2^18 come from a bounded sketch whose error bound is printed.

--limit N reads the first N sequences only, --sample N reads N sequences drawn at random
(the same ones for the same --seed). --json prints the figures as one JSON document, the one
Python's mlfeed.stats returns. --png FILE also draws the histograms and class counts as one
PNG image, for reports (FILE "-": standard output, instead of the text). A progress bar is
shown on a terminal.`,
		Example: `  mlfeed stats t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz
  mlfeed stats --json --sample 10000 --seed 1 train.ctf > stats.json
  mlfeed stats --limit 1000 --input features:dense:784 --input labels:dense:10 train.ctf
  mlfeed stats --png stats.png train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz
  mlfeed stats s3://bucket/shards/`,
		Args: filesArgs(&in, 1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkRange("--limit", opts.Limit, 0, math.MaxInt64); err != nil {
				return err
			}
			if err := checkRange("--sample", opts.Sample, 0, math.MaxInt64); err != nil {
				return err
			}
			if err := checkRange("--bins", int64(opts.Bins), 1, 10000); err != nil {
				return err
			}
			if err := checkRange("--top", int64(opts.Top), 1, 1000); err != nil {
				return err
			}
			spec, err := in.spec(args)
			if err != nil {
				return err
			}
			src, err := spec.Open(in.ctx)
			if err != nil {
				return err
			}
			defer closer.Into(src, &err)
			finish := func() {}
			if !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
				var bar *progressbar.ProgressBar
				opts.Progress = func(done, total int64) {
					if bar == nil {
						bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(os.Stderr),
							progressbar.OptionSetDescription("reading"), progressbar.OptionShowCount(),
							progressbar.OptionSetItsString("sequences"), progressbar.OptionShowIts(),
							progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())
					}
					bar.Set64(done)
				}
				finish = func() {
					if bar != nil {
						bar.Finish() // clears the bar
					}
				}
			}
			res, err := stats.Compute(cmd.Context(), src, &opts)
			finish()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if pngOut != "" {
				if err := writeStatsPNG(pngOut, args, res); err != nil || pngOut == "-" {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return writeStats(w, spec.FormatName(), res)
		},
	}
	in.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	f.Int64Var(&opts.Limit, "limit", 0, "read only the first `N` sequences (0: all)")
	f.Int64Var(&opts.Sample, "sample", 0, "read `N` sequences drawn at random (0: all)")
	f.Uint64Var(&opts.Seed, "seed", 0, "seed of the --sample draw")
	f.IntVar(&opts.Bins, "bins", stats.DefaultBins, "histogram bins (at most `N`)")
	f.IntVar(&opts.Top, "top", stats.DefaultTop, "most frequent values and indices to show (`N`)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	f.StringVar(&pngOut, "png", "", "also draw the charts to `FILE` as PNG (-: standard output)")
	rootCmd.AddCommand(cmd)
}

// writeStatsPNG draws the charts of res into the file name, atomically.
func writeStatsPNG(name string, inputs []string, res *stats.Result) error {
	f, err := createOutput(name)
	if err != nil {
		return err
	}
	defer f.Abort()
	var names []string
	for _, in := range inputs {
		names = append(names, filepath.Base(in))
	}
	heading := fmt.Sprintf("mlfeed stats %s: %d sequences, %d samples", strings.Join(names, " "), res.Sequences, res.Samples)
	if err := render.ChartsPNG(f, heading, render.StatsCharts(res)); err != nil {
		return f.Err(fmt.Errorf("%s: %w", name, err))
	}
	return f.Commit()
}

// writeStats prints res for a terminal.
func writeStats(w io.Writer, formatName string, res *stats.Result) error {
	p := &printer{w: w}
	p.f("format:    %s\n", formatName)
	p.f("sequences: %d", res.Sequences)
	from := res.TotalSequences
	if res.Limit > 0 && res.Limit < from {
		from = res.Limit
	}
	switch {
	case res.Sample > 0 && res.Sequences < from:
		p.f(" drawn at random (seed %d) from the first %d of %d", res.Seed, from, res.TotalSequences)
	case res.Sequences < res.TotalSequences:
		p.f(" (the first) of %d", res.TotalSequences)
	}
	p.f("\nsamples:   %d\n", res.Samples)
	p.lengths("sequence length", &res.SequenceLengths, "")
	for i := range res.Streams {
		p.stream(&res.Streams[i])
	}
	return p.err
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) stream(s *stats.Stream) {
	shape := fmt.Sprint(s.Dim)
	if s.Shape != nil {
		d := make([]string, len(s.Shape))
		for i, v := range s.Shape {
			d[i] = fmt.Sprint(v)
		}
		shape = strings.Join(d, "x")
	} else if s.Dim == 0 {
		shape = "variable"
	}
	p.f("\nstream %s: %s %s %s, %d samples, %d values\n", s.Name, s.Storage, s.Type, shape, s.Samples, s.Values)
	if n := s.Numeric; n != nil {
		p.f("  min %s  max %s  mean %s  std %s\n", num(n.Min), num(n.Max), num(n.Mean), num(n.Std))
		p.f("  zeros %s", share(n.Zeros, n.Count))
		if s.Type == "float32" || s.Type == "float64" {
			p.f("  NaN %s  +Inf %d  -Inf %d", share(n.NaN, n.Count), n.PosInf, n.NegInf)
		}
		p.f("\n")
		if s.Classes == nil || s.Classes.Kind != "integer" { // the classes show the same counts
			p.histogram("  ", &n.Histogram, integral(n.Histogram.Edges))
		}
	}
	if c := s.Classes; c != nil {
		p.f("  classes (%s): %d distinct", c.Kind, c.Distinct)
		if c.Truncated {
			p.f(", the %d most frequent shown", len(c.Counts))
		}
		if !c.Exact {
			p.f(", counts estimated (+error)")
		}
		p.f("\n")
		var total int64
		for _, cc := range c.Counts {
			total += cc.Count
		}
		const most = 30
		for i, cc := range c.Counts {
			if i == most {
				p.f("    ... %d more (--json lists them)\n", len(c.Counts)-most)
				break
			}
			p.f("    %8d  %s\n", cc.Class, bar(cc.Count, maxCount(c.Counts), share(cc.Count, total)+errNote(cc.Error)))
		}
	}
	if sp := s.Sparse; sp != nil {
		p.f("  density %s\n", num(sp.Density))
		p.lengths("non-zeros per sample", &sp.NonZeros, "  ")
		p.f("  most frequent indices%s:", exactNote(sp.TopExact))
		for _, t := range sp.TopIndices {
			p.f(" %d (%d%s)", t.Index, t.Count, errNote(t.Error))
		}
		p.f("\n")
	}
	if l := s.ValuesPerSample; l != nil {
		p.lengths("values per sample", l, "  ")
	}
	if t := s.Text; t != nil {
		p.lengths("length (characters)", &t.Lengths, "  ")
		p.f("  most frequent values%s:\n", exactNote(t.TopExact))
		for _, v := range t.Top {
			q := fmt.Sprintf("%q", v.Value)
			if v.Truncated {
				q += "..."
			}
			p.f("    %8d%s  %s\n", v.Count, errNote(v.Error), q)
		}
	}
	if t := s.Times; t != nil {
		p.f("  min %s  max %s\n", t.MinText, t.MaxText)
	}
	if b := s.Bytes; b != nil {
		p.lengths("size (bytes)", &b.Sizes, "  ")
		p.f("  media types:")
		for _, m := range b.MediaTypes {
			p.f(" %s %s", m.Type, share(m.Count, s.Values))
		}
		p.f("\n")
	}
}

// lengths prints a distribution of counts: one line when every item has the same count.
func (p *printer) lengths(what string, l *stats.Lengths, indent string) {
	if l.Min == l.Max {
		p.f("%s%s: %d (all)\n", indent, what, l.Min)
		return
	}
	p.f("%s%s: min %d  max %d  mean %s\n", indent, what, l.Min, l.Max, num(l.Mean))
	p.histogram(indent+"  ", &l.Histogram, true)
}

// histogram prints one line per bin with a bar.
func (p *printer) histogram(indent string, h *stats.Histogram, integers bool) {
	var most, total int64
	for _, c := range h.Counts {
		most = max(most, c)
		total += c
	}
	labels := make([]string, len(h.Counts))
	width := 0
	for i := range h.Counts {
		lo, hi := h.Edges[i], h.Edges[i+1]
		switch {
		case integers && hi-lo == 1:
			labels[i] = num(lo)
		case integers:
			labels[i] = num(lo) + ".." + num(hi-1)
		default:
			labels[i] = "[" + num(lo) + ", " + num(hi) + ")"
		}
		width = max(width, len(labels[i]))
	}
	for i, c := range h.Counts {
		p.f("%s%-*s  %s\n", indent, width, labels[i], bar(c, most, share(c, total)))
	}
}

// bar draws n out of most as a bar of up to 30 cells, followed by note.
func bar(n, most int64, note string) string {
	const cells = 30
	k := 0
	if most > 0 {
		k = int((n*cells + most - 1) / most)
	}
	return strings.Repeat("█", k) + strings.Repeat(" ", cells-k) + " " + note
}

func maxCount(cs []stats.ClassCount) int64 {
	var m int64
	for _, c := range cs {
		m = max(m, c.Count)
	}
	return m
}

// share prints n and its percentage of total.
func share(n, total int64) string {
	if total == 0 || n == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%.3g%%)", n, 100*float64(n)/float64(total))
}

// num prints v with 6 significant digits, or whole when it is an integer below 10^15.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// integral reports whether every edge is an integer: bins of whole numbers.
func integral(edges []float64) bool {
	for _, e := range edges {
		if e != math.Trunc(e) {
			return false
		}
	}
	return true
}

func errNote(e int64) string {
	if e == 0 {
		return ""
	}
	return fmt.Sprintf(" +%d", e)
}

func exactNote(exact bool) string {
	if exact {
		return ""
	}
	return " (estimated; +N: the most a count may exceed the true one)"
}
