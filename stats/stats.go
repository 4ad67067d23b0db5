// Package stats describes the values of a data set in one streaming pass: per stream the
// counts, and by the stream's kind the numbers' range, mean, deviation and histogram, the class
// counts of labels, the non-zeros of sparse features, the lengths and most frequent values of
// text, the sizes and media types of encoded bytes, the range of dates, times and durations;
// per data set the sequence lengths. It is
// what `mlfeed stats` prints and Python's mlfeed.stats returns.
//
// [Compute] reads a [mlfeed.Source] chunk by chunk, in memory bounded by the chunks being
// decoded plus a bounded amount per stream (about 1.25 MiB at most for a numeric stream, a
// few KiB for most; 8 bytes a column for a sparse one of up to 2^18 columns), whatever the
// data set's size. [Options.Limit] looks at the first sequences only, [Options.Sample] at
// sequences drawn at random. A [Collector] takes chunks from a caller that reads them itself
// and gives a [Result] at any point.
//
// What is exact and what is approximate:
//   - Counts (values, samples, sequences, NaN, infinities, zeros, classes, media types) and
//     the minimum and maximum are exact.
//   - The mean is the sum of the finite values over their count, the sum kept in float64 and
//     compensated (Neumaier) across blocks of 1024 values; the standard deviation (numpy's
//     default: divided by the count) merges the blocks' deviations (Chan et al.).
//   - Histograms are exact for the edges they report: bin i counts the values v with
//     Edges[i] <= v < Edges[i+1]. Integers spanning at most 65536 values (all 8- and 16-bit
//     types, labels, lengths) get bins of equal integer width. Other values are counted on a
//     grid of numbers with 8 significant bits (a cell is at most 1/128 of its value wide); the
//     bins are equally wide but for edges moved to the nearest grid line where values lie.
//     Values beyond ±2^128 (float64 only) share the outermost cells, whose edges they exceed.
//   - The most frequent text values and sparse indices (beyond 2^18 columns) come from a
//     space-saving sketch of 1024 counters: every value more frequent than 1/1024 of the
//     values is found, and each count exceeds the true one by at most its Error (0 and Exact
//     while there were no more distinct values than counters).
package stats

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Options choose what Compute reads and how much it reports. The zero value reads every
// sequence and reports DefaultBins bins and DefaultTop top values.
type Options struct {
	// Limit, when positive, reads only the first Limit sequences.
	Limit int64
	// Sample, when positive, reads Sample sequences drawn at random without replacement (from
	// the first Limit when Limit is set too), the same ones for the same Seed.
	Sample int64
	// Seed seeds the draw of Sample.
	Seed uint64
	// Bins is the number of histogram bins (at most; 0: DefaultBins).
	Bins int
	// Top is how many most frequent values, indices and classes are reported (0: DefaultTop;
	// classes: MaxClasses).
	Top int
	// Progress, when set, is called after each chunk with the sequences read so far and the
	// number to read.
	Progress func(done, total int64)
}

// Defaults of Options.
const (
	DefaultBins = 20
	DefaultTop  = 10
	// MaxClasses is the most classes a Classes lists (the most frequent ones).
	MaxClasses = 1000
	// sketchSize is the number of counters of a space-saving sketch.
	sketchSize = 1024
	// maxIndexArray is the largest Dim whose sparse indices are counted exactly.
	maxIndexArray = 1 << 18
	// maxOneHot is the largest Dim of a dense stream checked for one-hot samples.
	maxOneHot = 1 << 16
	// previewRunes is how much of a text value a Result shows.
	previewRunes = 100
)

// Result is what Compute finds; its JSON is the output of `mlfeed stats --json`.
type Result struct {
	// Sequences and Samples count what was read: sequences and the sum of their lengths.
	Sequences int64 `json:"sequences"`
	Samples   int64 `json:"samples"`
	// TotalSequences is the number of sequences of the data set (its chunk table).
	TotalSequences int64 `json:"total_sequences"`
	// Limit, Sample and Seed repeat the options that chose the sequences read.
	Limit  int64  `json:"limit,omitempty"`
	Sample int64  `json:"sample,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	// SequenceLengths is the distribution of the sequences' lengths (mlfeed.Chunk.SequenceLength).
	SequenceLengths Lengths `json:"sequence_lengths"`
	// Streams describes each stream, in schema order.
	Streams []Stream `json:"streams"`
}

// Stream describes one stream's values. Which of the optional parts are set depends on its
// kind: Numeric for numbers (integers, floats, bool; the stored values of a sparse stream);
// Classes for integer scalars and one-hot vectors; Sparse for sparse streams; ValuesPerSample
// for dense streams of variable size; Text for strings; Bytes for byte strings; Times for
// dates and times and durations (when there is a value).
type Stream struct {
	Name    string `json:"name"`
	Storage string `json:"storage"`
	Type    string `json:"type"`
	Dim     int    `json:"dim"`
	Shape   []int  `json:"shape,omitempty"`
	// Samples and Values count the samples and the stored values (for sparse: non-zeros).
	Samples         int64    `json:"samples"`
	Values          int64    `json:"values"`
	Numeric         *Numeric `json:"numeric,omitempty"`
	Classes         *Classes `json:"classes,omitempty"`
	Sparse          *Sparse  `json:"sparse,omitempty"`
	ValuesPerSample *Lengths `json:"values_per_sample,omitempty"`
	Text            *Text    `json:"text,omitempty"`
	Bytes           *Bytes   `json:"bytes,omitempty"`
	Times           *Times   `json:"times,omitempty"`
}

// Times describes dates and times (a datetime stream) or durations (a duration stream): the
// exact range, in ticks of 100 ns and as text (mlfeed.AppendTicks: ISO 8601 for a datetime,
// [-][d.]hh:mm:ss[.fffffff] for a duration).
type Times struct {
	Min     int64  `json:"min"`
	Max     int64  `json:"max"`
	MinText string `json:"min_text"`
	MaxText string `json:"max_text"`
}

// Numeric describes numbers. Min, Max, Mean and Std are over the finite values (0 when there
// are none); Std divides by the count, as numpy's std does by default.
type Numeric struct {
	Count     int64     `json:"count"`
	Finite    int64     `json:"finite"`
	NaN       int64     `json:"nan"`
	PosInf    int64     `json:"pos_inf"`
	NegInf    int64     `json:"neg_inf"`
	Zeros     int64     `json:"zeros"`
	Min       float64   `json:"min"`
	Max       float64   `json:"max"`
	Mean      float64   `json:"mean"`
	Std       float64   `json:"std"`
	Histogram Histogram `json:"histogram"`
}

// Classes counts labels: the values of an integer scalar stream (Kind "integer"), or the
// position of the 1 in one-hot vectors (Kind "one-hot"). Counts lists every class by class
// when there are at most MaxClasses, else the MaxClasses most frequent (Truncated).
type Classes struct {
	Kind      string       `json:"kind"`
	Distinct  int          `json:"distinct"`
	Counts    []ClassCount `json:"counts"`
	Truncated bool         `json:"truncated,omitempty"`
	// Exact is false when the counts come from the sketch of a sparse stream's indices (more
	// than 2^18 columns): then each count may exceed the true one by its Error.
	Exact bool `json:"exact"`
}

// ClassCount is the number of samples of one class.
type ClassCount struct {
	Class int64 `json:"class"`
	Count int64 `json:"count"`
	Error int64 `json:"error,omitempty"`
}

// Lengths is the distribution of a count per item: a sequence's length, a sample's non-zeros
// or values, a text's characters, a byte string's size.
type Lengths struct {
	Min       int64     `json:"min"`
	Max       int64     `json:"max"`
	Mean      float64   `json:"mean"`
	Histogram Histogram `json:"histogram"`
}

// Sparse describes a sparse stream's structure.
type Sparse struct {
	NonZeros Lengths `json:"nonzeros_per_sample"`
	// Density is the mean non-zeros per sample over Dim (0 when Dim is unknown).
	Density    float64    `json:"density"`
	TopIndices []TopIndex `json:"top_indices"`
	// TopExact says the counts of TopIndices are exact.
	TopExact bool `json:"top_exact"`
}

// TopIndex is a sparse index and the number of samples that store a value for it; Count
// exceeds the true count by at most Error.
type TopIndex struct {
	Index int64 `json:"index"`
	Count int64 `json:"count"`
	Error int64 `json:"error,omitempty"`
}

// Text describes a text stream: lengths in characters (Unicode code points) and the most
// frequent values.
type Text struct {
	Lengths  Lengths   `json:"lengths"`
	Top      []TopText `json:"top"`
	TopExact bool      `json:"top_exact"`
}

// TopText is a text value and its count, which exceeds the true count by at most Error. Value
// holds the first 100 characters of longer values (Truncated).
type TopText struct {
	Value     string `json:"value"`
	Truncated bool   `json:"truncated,omitempty"`
	Count     int64  `json:"count"`
	Error     int64  `json:"error,omitempty"`
}

// Bytes describes a stream of byte strings: sizes in bytes and media types (MediaType).
type Bytes struct {
	Sizes      Lengths      `json:"sizes"`
	MediaTypes []MediaCount `json:"media_types"`
}

// MediaCount is the number of values of one media type.
type MediaCount struct {
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// Compute reads src once and returns its statistics. The chunks are decoded ahead on the
// scheduler ctx carries (package internal/sched; one thread without), and the figures are
// collected on the calling goroutine. A chunk that holds another number of sequences than
// the chunk table says is an error wrapping mlfeed.ErrFormat.
func Compute(ctx context.Context, src mlfeed.Source, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.Limit < 0 || opts.Sample < 0 || opts.Bins < 0 || opts.Top < 0 {
		return nil, fmt.Errorf("stats: negative Limit, Sample, Bins or Top")
	}
	table := src.Chunks()
	total, _ := mlfeed.Totals(table)
	p := newPlan(table, total, opts)
	col := NewCollector(src.Schema(), opts)
	col.total = total
	if len(p.order) == 0 {
		return col.Result(), ctx.Err()
	}
	s := sched.FromContext(ctx)
	if s == nil {
		s = sched.New(1, 0)
	}
	ra := s.ReadAhead(ctx, src, p.order, &sched.ReadAheadOptions{Recycle: true})
	defer ra.Close()
	var done int64
	for ra.Next() {
		i, c := ra.Index(), ra.Chunk()
		if c.Sequences != table[i].Sequences {
			return nil, fmt.Errorf("stats: chunk %d: %w: holds %d sequences, the chunk table says %d", i, mlfeed.ErrFormat, c.Sequences, table[i].Sequences)
		}
		if err := checkShape(c, col.schema); err != nil {
			return nil, fmt.Errorf("stats: chunk %d: %w", i, err)
		}
		done += p.each(i, func(from, to int) { col.Add(c, from, to) })
		if opts.Progress != nil {
			opts.Progress(done, p.want)
		}
	}
	if err := ra.Err(); err != nil {
		return nil, err
	}
	return col.Result(), nil
}

// plan says which chunks to read and which of their sequences to count.
type plan struct {
	table []mlfeed.ChunkInfo
	first []int64 // first sequence of each chunk
	limit int64   // sequences [0, limit) are considered
	want  int64   // sequences to count
	order []int   // chunks to read
	// With a sample, rng replays Knuth's selection sampling (Algorithm S) chunk by chunk, in
	// order, as newPlan ran it to find the chunks.
	sample    bool
	rng       *rand.Rand
	seen, got int64
	next      int // the next chunk whose draws are to be made
}

func newPlan(table []mlfeed.ChunkInfo, total int64, o *Options) *plan {
	p := &plan{table: table, first: make([]int64, len(table)), limit: total}
	if o.Limit > 0 && o.Limit < total {
		p.limit = o.Limit
	}
	p.want = p.limit
	var at int64
	for i, c := range table {
		p.first[i] = at
		at += int64(c.Sequences)
	}
	if o.Sample > 0 && o.Sample < p.limit {
		p.sample, p.want = true, o.Sample
		p.rng = rand.New(rand.NewPCG(o.Seed, 0x6d6c66656564))
		for i := range table {
			if p.first[i] >= p.limit {
				break
			}
			if len(p.pick(i)) > 0 {
				p.order = append(p.order, i)
			}
		}
		p.rng = rand.New(rand.NewPCG(o.Seed, 0x6d6c66656564))
		p.seen, p.got = 0, 0
		return p
	}
	for i := range table {
		if p.first[i] >= p.limit {
			break
		}
		if table[i].Sequences > 0 {
			p.order = append(p.order, i)
		}
	}
	return p
}

// pick draws the sequences of chunk i that the sample takes, as indices in the chunk. It must
// be called for every chunk in order (chunks before i that are not read included).
func (p *plan) pick(i int) []int {
	n := min(int64(p.table[i].Sequences), p.limit-p.first[i])
	var out []int
	if n <= 0 {
		return nil
	}
	for q := int64(0); q < n; q++ {
		if p.rng.Int64N(p.limit-p.seen) < p.want-p.got {
			out = append(out, int(q))
			p.got++
		}
		p.seen++
	}
	return out
}

// each calls fn with the ranges of sequences of chunk i to count and returns how many.
func (p *plan) each(i int, fn func(from, to int)) int64 {
	if !p.sample {
		n := min(int64(p.table[i].Sequences), p.limit-p.first[i])
		fn(0, int(n))
		return n
	}
	// Replay the draws of the chunks skipped since the last one read.
	for ; p.next < i; p.next++ {
		p.pick(p.next)
	}
	qs := p.pick(i)
	p.next = i + 1
	for _, q := range qs {
		fn(q, q+1)
	}
	return int64(len(qs))
}

// checkShape checks what Collector.Add indexes by, so that a source's inconsistent chunk is
// an error rather than a panic: offsets of the right lengths whose last entries lie within
// the values.
func checkShape(c *mlfeed.Chunk, sc *mlfeed.Schema) error {
	if len(c.Streams) != len(sc.Streams) {
		return fmt.Errorf("%w: %d streams, the schema has %d", mlfeed.ErrFormat, len(c.Streams), len(sc.Streams))
	}
	for k := range c.Streams {
		d, st := &c.Streams[k], &sc.Streams[k]
		if len(d.SeqStart) != c.Sequences+1 || d.SeqStart[0] != 0 {
			return fmt.Errorf("stream %q: %w: %d sequence offsets for %d sequences", st.Name, mlfeed.ErrFormat, len(d.SeqStart), c.Sequences)
		}
		if d.Values.Type != st.Type {
			return fmt.Errorf("stream %q: %w: values are %s, the stream %s", st.Name, mlfeed.ErrFormat, d.Values.Type, st.Type)
		}
		n := d.Samples()
		nv := int64(d.Values.Len())
		if d.SampleStart == nil {
			if st.Storage == mlfeed.Sparse || n*int64(st.Dim) != nv {
				return fmt.Errorf("stream %q: %w: %d values for %d samples", st.Name, mlfeed.ErrFormat, nv, n)
			}
			continue
		}
		if int64(len(d.SampleStart)) != n+1 || d.SampleStart[0] != 0 || d.SampleStart[n] != nv ||
			st.Storage == mlfeed.Sparse && int64(len(d.Indices)) != nv {
			return fmt.Errorf("stream %q: %w: sample offsets do not match %d samples and %d values", st.Name, mlfeed.ErrFormat, n, nv)
		}
	}
	return nil
}

// A Collector gathers statistics from chunks handed to it; Result may be called at any time
// (`mlfeed view` shows the figures as they fill in). It is not safe for concurrent use.
type Collector struct {
	schema  *mlfeed.Schema
	opts    Options
	streams []*streamAcc
	seqs    int64
	samples int64
	total   int64
	seqLen  countDist
	scratch []float64
}

// NewCollector returns a collector for chunks of schema sc. opts' Bins, Top, Limit, Sample and
// Seed are used (the last three only to be reported).
func NewCollector(sc mlfeed.Schema, opts *Options) *Collector {
	c := &Collector{schema: &sc, scratch: make([]float64, blockSize)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Bins == 0 {
		c.opts.Bins = DefaultBins
	}
	if c.opts.Top == 0 {
		c.opts.Top = DefaultTop
	}
	seed := maphash.MakeSeed()
	for i := range sc.Streams {
		c.streams = append(c.streams, newStreamAcc(&sc.Streams[i], seed))
	}
	return c
}

// Add counts sequences [from, to) of ch, a chunk of the collector's schema whose offsets are
// consistent (mlfeed.Chunk.Validate). Add keeps no reference to ch's memory.
func (c *Collector) Add(ch *mlfeed.Chunk, from, to int) {
	for q := from; q < to; q++ {
		l := ch.SequenceLength(q)
		c.seqLen.add(l)
		c.samples += l
	}
	c.seqs += int64(to - from)
	for k, a := range c.streams {
		a.add(&ch.Streams[k], from, to, c.scratch)
	}
}

// Result returns the statistics of what was added so far.
func (c *Collector) Result() *Result {
	r := &Result{Sequences: c.seqs, Samples: c.samples, TotalSequences: c.total,
		Limit: c.opts.Limit, Sample: c.opts.Sample, SequenceLengths: c.seqLen.lengths(c.opts.Bins)}
	if c.opts.Sample > 0 {
		r.Seed = c.opts.Seed
	}
	if c.total < c.seqs {
		r.TotalSequences = c.seqs
	}
	for _, a := range c.streams {
		r.Streams = append(r.Streams, a.result(&c.opts))
	}
	return r
}

// streamAcc accumulates one stream.
type streamAcc struct {
	st              *mlfeed.Stream
	samples, values int64
	ints            *ints      // integer and bool values
	floats          *moments   // float values
	perSample       *countDist // sparse and variable-size dense: values per sample
	oneHot          bool       // every sample so far is one-hot (dense) or a single 1 (sparse)
	hot             []int64    // dense one-hot: samples per class
	idx             []int64    // sparse: samples per index, Dim <= maxIndexArray
	idxTop          *topK      // sparse: the sketch of indices otherwise
	lengths         *countDist // text lengths, byte sizes
	textTop         *topK      // text values
	media           map[string]int64
	times           *Times // datetime and duration values: the range so far
	seed            maphash.Seed
}

func newStreamAcc(st *mlfeed.Stream, seed maphash.Seed) *streamAcc {
	a := &streamAcc{st: st, seed: seed}
	t := st.Type
	switch {
	case t.IsInteger() || t == mlfeed.Bool:
		a.ints = &ints{}
	case t.IsFloat():
		a.floats = newMoments()
	case t == mlfeed.String:
		a.lengths, a.textTop = &countDist{}, newTopK(sketchSize)
	case t == mlfeed.Bytes:
		a.lengths, a.media = &countDist{}, map[string]int64{}
	case t == mlfeed.DateTime || t == mlfeed.Duration:
		a.times = &Times{Min: math.MaxInt64, Max: math.MinInt64}
	}
	if st.Storage == mlfeed.Sparse {
		a.perSample = &countDist{}
		a.oneHot = t.IsNumeric()
		if st.Dim > 0 && st.Dim <= maxIndexArray {
			a.idx = make([]int64, st.Dim)
		} else {
			a.idxTop = newTopK(sketchSize)
		}
	} else {
		if st.Dim == 0 && st.Shape == nil {
			a.perSample = &countDist{}
		}
		a.oneHot = t.IsNumeric() && st.Dim > 1 && st.Dim <= maxOneHot
	}
	return a
}

func (a *streamAcc) add(d *mlfeed.StreamData, from, to int, scratch []float64) {
	st := a.st
	s0, s1 := d.SeqStart[from], d.SeqStart[to]
	v0, v1 := s0*int64(st.Dim), s1*int64(st.Dim)
	if d.SampleStart != nil {
		v0, v1 = d.SampleStart[s0], d.SampleStart[s1]
		for s := s0; s < s1; s++ {
			a.perSample.add(d.SampleStart[s+1] - d.SampleStart[s])
		}
	}
	a.samples += s1 - s0
	a.values += v1 - v0
	if v0 == v1 {
		return
	}
	b := d.Values.Slice(int(v0), int(v1))
	switch {
	case a.ints != nil || a.floats != nil:
		a.addNumbers(b, scratch)
		if !a.oneHot {
			break
		}
		if st.Storage == mlfeed.Dense {
			if a.hot == nil {
				a.hot = make([]int64, st.Dim)
			}
			a.oneHot = oneHotDense(b, st.Dim, a.hot)
		} else {
			for s := s0; s < s1 && a.oneHot; s++ {
				a.oneHot = d.SampleStart[s+1]-d.SampleStart[s] == 1 && d.Values.Float64At(int(d.SampleStart[s])) == 1
			}
		}
	case a.textTop != nil:
		for _, v := range b.Strings {
			a.lengths.add(int64(utf8.RuneCountInString(v)))
			a.textTop.add(maphash.String(a.seed, v), func() string {
				return strings.Clone(cutRunes(v, previewRunes+1))
			})
		}
	case a.media != nil:
		for _, v := range b.Strings {
			a.lengths.add(int64(len(v)))
			a.media[MediaType(v)]++
		}
	case a.times != nil:
		lo, hi := a.times.Min, a.times.Max
		for j := 0; j+8 <= len(b.Bytes); j += 8 {
			v := int64(binary.LittleEndian.Uint64(b.Bytes[j:]))
			lo, hi = min(lo, v), max(hi, v)
		}
		a.times.Min, a.times.Max = lo, hi
	}
	if st.Storage == mlfeed.Sparse {
		ix := d.Indices[v0:v1]
		if a.idx != nil {
			for _, i := range ix {
				if uint(i) < uint(len(a.idx)) {
					a.idx[i]++
				}
			}
		} else {
			for _, i := range ix {
				a.idxTop.add(uint64(uint32(i)), nil)
			}
		}
	}
}

func (a *streamAcc) addNumbers(b mlfeed.Buffer, scratch []float64) {
	switch b.Type {
	case mlfeed.Float32:
		a.floats.addFloat32s(b.Float32s(), scratch)
	case mlfeed.Float64:
		a.floats.addFloat64s(b.Float64s(), scratch)
	case mlfeed.Int8:
		a.ints.addBytes(b.Bytes, true)
	case mlfeed.Int16:
		addInts(a.ints, b.Int16s(), scratch)
	case mlfeed.Int32:
		addInts(a.ints, b.Int32s(), scratch)
	case mlfeed.Int64:
		addInts(a.ints, b.Int64s(), scratch)
	case mlfeed.Uint8, mlfeed.Bool:
		a.ints.addBytes(b.Bytes, false)
	case mlfeed.Uint16:
		addInts(a.ints, b.Uint16s(), scratch)
	case mlfeed.Uint32:
		addInts(a.ints, b.Uint32s(), scratch)
	case mlfeed.Uint64:
		addUint64s(a.ints, b.Uint64s(), scratch)
	}
}

// oneHotDense counts the class of each sample of b (dim values each) in hot and reports
// whether every sample was one-hot: a single 1, every other value 0.
func oneHotDense(b mlfeed.Buffer, dim int, hot []int64) bool {
	switch b.Type {
	case mlfeed.Float32:
		return oneHot(b.Float32s(), dim, hot)
	case mlfeed.Float64:
		return oneHot(b.Float64s(), dim, hot)
	case mlfeed.Int8:
		return oneHot(b.Int8s(), dim, hot)
	case mlfeed.Int16:
		return oneHot(b.Int16s(), dim, hot)
	case mlfeed.Int32:
		return oneHot(b.Int32s(), dim, hot)
	case mlfeed.Int64:
		return oneHot(b.Int64s(), dim, hot)
	case mlfeed.Uint8, mlfeed.Bool:
		return oneHot(b.Bytes, dim, hot)
	case mlfeed.Uint16:
		return oneHot(b.Uint16s(), dim, hot)
	case mlfeed.Uint32:
		return oneHot(b.Uint32s(), dim, hot)
	case mlfeed.Uint64:
		return oneHot(b.Uint64s(), dim, hot)
	}
	return false
}

func oneHot[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T, dim int, hot []int64) bool {
	for s := 0; s+dim <= len(vals); s += dim {
		k := -1
		for i, v := range vals[s : s+dim] {
			if v != 0 {
				if v != 1 || k >= 0 {
					return false
				}
				k = i
			}
		}
		if k < 0 {
			return false
		}
		hot[k]++
	}
	return true
}

func (a *streamAcc) result(o *Options) Stream {
	st := a.st
	r := Stream{Name: st.Name, Storage: st.Storage.String(), Type: st.Type.String(), Dim: st.Dim,
		Shape: st.Shape, Samples: a.samples, Values: a.values}
	switch {
	case a.ints != nil:
		r.Numeric = a.ints.numeric(o.Bins)
		if st.Storage == mlfeed.Dense && st.Dim == 1 && a.ints.exact() && a.values > 0 {
			vals, counts := a.ints.w.pairs()
			r.Classes = classes("integer", vals, counts, nil, true)
		}
	case a.floats != nil:
		r.Numeric = a.floats.numeric(o.Bins)
	case a.textTop != nil:
		top := a.textTop.top(o.Top)
		r.Text = &Text{Lengths: a.lengths.lengths(o.Bins), TopExact: !a.textTop.evicted, Top: make([]TopText, len(top))}
		for i, it := range top {
			v, cut := preview(it.label)
			r.Text.Top[i] = TopText{Value: v, Truncated: cut, Count: it.count, Error: it.err}
		}
	case a.media != nil:
		r.Bytes = &Bytes{Sizes: a.lengths.lengths(o.Bins), MediaTypes: []MediaCount{}}
		for t, n := range a.media {
			r.Bytes.MediaTypes = append(r.Bytes.MediaTypes, MediaCount{Type: t, Count: n})
		}
		slices.SortFunc(r.Bytes.MediaTypes, func(x, y MediaCount) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Type, y.Type))
		})
	case a.times != nil && a.values > 0:
		r.Times = &Times{Min: a.times.Min, Max: a.times.Max,
			MinText: string(mlfeed.AppendTicks(nil, st.Type, a.times.Min)), MaxText: string(mlfeed.AppendTicks(nil, st.Type, a.times.Max))}
	}
	if st.Storage == mlfeed.Sparse {
		sp := &Sparse{NonZeros: a.perSample.lengths(o.Bins), TopIndices: []TopIndex{}}
		if st.Dim > 0 {
			sp.Density = sp.NonZeros.Mean / float64(st.Dim)
		}
		var vals, counts, errs []int64
		if a.idx != nil {
			sp.TopExact = true
			for i, n := range a.idx {
				if n != 0 {
					vals, counts = append(vals, int64(i)), append(counts, n)
				}
			}
		} else {
			sp.TopExact = !a.idxTop.evicted
			for _, it := range a.idxTop.top(sketchSize) {
				vals, counts, errs = append(vals, int64(it.key)), append(counts, it.count), append(errs, it.err)
			}
		}
		for _, k := range topIndices(counts, o.Top) {
			ti := TopIndex{Index: vals[k], Count: counts[k]}
			if errs != nil {
				ti.Error = errs[k]
			}
			sp.TopIndices = append(sp.TopIndices, ti)
		}
		if a.oneHot && a.samples > 0 {
			r.Classes = classes("one-hot", vals, counts, errs, sp.TopExact)
		}
		r.Sparse = sp
	} else if a.perSample != nil {
		l := a.perSample.lengths(o.Bins)
		r.ValuesPerSample = &l
	}
	if st.Storage == mlfeed.Dense && a.oneHot && a.samples > 0 {
		var vals, counts []int64
		for i, n := range a.hot {
			if n != 0 {
				vals, counts = append(vals, int64(i)), append(counts, n)
			}
		}
		r.Classes = classes("one-hot", vals, counts, nil, true)
	}
	return r
}

// topIndices returns the positions of the n largest counts, largest first (ties: first
// position first).
func topIndices(counts []int64, n int) []int {
	k := make([]int, len(counts))
	for i := range k {
		k[i] = i
	}
	slices.SortStableFunc(k, func(x, y int) int { return cmp.Compare(counts[y], counts[x]) })
	return k[:min(n, len(k))]
}

// classes lists classes by class, the MaxClasses most frequent when there are more.
func classes(kind string, vals, counts, errs []int64, exact bool) *Classes {
	c := &Classes{Kind: kind, Distinct: len(vals), Exact: exact, Counts: []ClassCount{}}
	keep := topIndices(counts, MaxClasses)
	c.Truncated = len(keep) < len(vals)
	slices.Sort(keep)
	for _, k := range keep {
		cc := ClassCount{Class: vals[k], Count: counts[k]}
		if errs != nil {
			cc.Error = errs[k]
		}
		c.Counts = append(c.Counts, cc)
	}
	if errs != nil {
		slices.SortFunc(c.Counts, func(x, y ClassCount) int { return cmp.Compare(x.Class, y.Class) })
	}
	return c
}

// preview returns the first previewRunes characters of s, and whether s is longer.
func preview(s string) (string, bool) {
	p := cutRunes(s, previewRunes)
	return p, len(p) < len(s)
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	k := 0
	for i := range s {
		if k == n {
			return s[:i]
		}
		k++
	}
	return s
}

// lengths summarises the distribution.
func (c *countDist) lengths(bins int) Lengths {
	_, lo, hi, mean := c.summary()
	return Lengths{Min: lo, Max: hi, Mean: mean, Histogram: c.histogram(bins)}
}
