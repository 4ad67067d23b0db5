package minibatch

import (
	"fmt"
	"math"
	"slices"

	"github.com/mlfeed/mlfeed"
)

// Stats measures how well mixed a reader's minibatches are, sweep by sweep, so that a window
// size can be chosen from figures rather than guessed (`mlfeed batches --stats`). Feed it
// every minibatch the reader returns:
//
//	st, err := minibatch.NewStats(r, "")
//	for r.Next() {
//		st.Add(r.Batch())
//	}
//	for _, s := range st.Sweeps() { ... }
//
// It keeps 8 bytes per sequence of the sweep in progress (12 with a label stream), and the
// figures of the sweeps before.
type Stats struct {
	chunks int
	first  []int64 // per chunk: the data position (index in file order) of its first sequence
	label  int     // the label stream, or -1
	auto   bool    // the label stream is to be found among the candidates on the first minibatch
	// onehot says the label stream holds one-hot samples (else integer scalars).
	onehot      bool
	classes     map[int64]int32 // integer labels' class numbers, in order of appearance
	labelStream string
	labelErr    string

	done  []SweepStats
	cur   sweepAcc
	stamp []int64 // per chunk: the last minibatch (counted from 1) that had a sequence of it
	mbs   int64   // minibatches added
}

// sweepAcc is what Stats gathers of the sweep in progress.
type sweepAcc struct {
	sweep     int64
	started   bool
	data      []int64 // data position of each sequence, in the order delivered
	labels    []int32 // the class of each label sample, in the order delivered
	mbLabels  []int   // per minibatch: the end of its labels in labels
	mbSeqs    []int   // per minibatch: its sequence count
	chunkSum  int64   // distinct chunks summed over minibatches
	minChunks int
	maxChunks int
}

// SweepStats are one sweep's figures of mixing, over this worker's minibatches of the sweep.
type SweepStats struct {
	// Sweep is the sweep's number; Minibatches and Sequences count what was added of it
	// (minibatches with no sequence of this worker's are counted and skipped by the figures).
	Sweep       int64 `json:"sweep"`
	Minibatches int   `json:"minibatches"`
	Sequences   int   `json:"sequences"`
	// Chunks is the data's chunk count; MeanChunks, MinChunks and MaxChunks are the distinct
	// chunks a minibatch's sequences come from (1 for a minibatch in file order within a chunk;
	// with a window of w chunks, up to w).
	Chunks     int     `json:"chunks"`
	MeanChunks float64 `json:"mean_chunks"`
	MinChunks  int     `json:"min_chunks"`
	MaxChunks  int     `json:"max_chunks"`
	// RankCorrelation is Spearman's rank correlation between a sequence's position in the data
	// (file order) and its position in the sweep: 1 in file order, about 0 when well shuffled
	// (within ±2/sqrt(Sequences) for a uniformly random order).
	RankCorrelation float64 `json:"rank_correlation"`
	// Label names the label stream (integer scalars, or one-hot samples), or is empty when
	// there is none; LabelNote then says why, when a stream was asked for or looked like one.
	Label     string `json:"label,omitempty"`
	LabelNote string `json:"label_note,omitempty"`
	// Classes is the number of classes seen in the sweep. Divergence is the mean, over the
	// minibatches, of the Kullback-Leibler divergence in bits of the minibatch's label
	// distribution from the sweep's (from the whole data set's, for a single worker).
	// RandomDivergence is what a uniformly random draw of the same minibatch sizes gives on
	// average, (Classes-1) / (2 n ln 2) for a minibatch of n labels (the large-sample
	// approximation): a Divergence near it is as well mixed as shuffling can be, one far above
	// it means minibatches lean toward some classes (too small a window on sorted data).
	Classes          int     `json:"classes,omitempty"`
	Divergence       float64 `json:"divergence,omitempty"`
	RandomDivergence float64 `json:"random_divergence,omitempty"`
}

// NewStats returns the statistics of r's minibatches. label names the label stream whose
// class distribution it compares (the empty string: the first stream of integer scalars, or
// else the first dense stream of floating-point samples of 2 to 65536 values that are all
// one-hot in the first minibatch; none if there is no such stream). A named stream that is
// neither is an error (ErrConfig).
func NewStats(r *Reader, label string) (*Stats, error) {
	infos := r.chunkCache.infos
	s := &Stats{chunks: len(infos), first: make([]int64, len(infos)), label: -1, stamp: make([]int64, len(infos))}
	var at int64
	for c, info := range infos {
		s.first[c] = at
		at += int64(info.Sequences)
	}
	sc := &r.schema
	if label == "" {
		s.auto = true
		return s, nil
	}
	i := sc.Index(label)
	if i < 0 {
		return nil, fmt.Errorf("%w: stats: no stream %q", ErrConfig, label)
	}
	switch {
	case integerScalar(&sc.Streams[i]):
	case oneHotCandidate(&sc.Streams[i]):
		s.onehot = true
	default:
		st := &sc.Streams[i]
		return nil, fmt.Errorf("%w: stats: stream %q (%s %s of %d values) holds neither integer scalars nor one-hot samples",
			ErrConfig, label, st.Storage, st.Type, st.Dim)
	}
	s.label, s.labelStream = i, label
	return s, nil
}

// integerScalar reports whether a stream's samples are one integer each.
func integerScalar(st *mlfeed.Stream) bool {
	return st.Storage == mlfeed.Dense && st.Dim == 1 && st.Type.IsInteger()
}

// oneHotCandidate reports whether a stream's samples could be one-hot vectors.
func oneHotCandidate(st *mlfeed.Stream) bool {
	return st.Storage == mlfeed.Dense && st.Dim >= 2 && st.Dim <= 1<<16 && st.Type.IsFloat()
}

// Add counts minibatch b, which the reader of NewStats returned; minibatches are added in the
// order returned. A minibatch of a later sweep ends the sweep in progress.
func (s *Stats) Add(b *Batch) {
	if s.cur.started && b.Sweep != s.cur.sweep {
		s.done = append(s.done, s.finish(&s.cur))
		s.cur = sweepAcc{data: s.cur.data[:0], labels: s.cur.labels[:0], mbLabels: s.cur.mbLabels[:0], mbSeqs: s.cur.mbSeqs[:0]}
	}
	if !s.cur.started {
		s.cur.started, s.cur.sweep = true, b.Sweep
	}
	if s.auto {
		s.pickLabel(b)
	}
	a := &s.cur
	s.mbs++
	distinct := 0
	for _, o := range b.Origins {
		if s.stamp[o.Chunk] != s.mbs {
			s.stamp[o.Chunk] = s.mbs
			distinct++
		}
		a.data = append(a.data, s.first[o.Chunk]+int64(o.Index))
	}
	a.mbSeqs = append(a.mbSeqs, b.Sequences)
	if b.Sequences > 0 {
		a.chunkSum += int64(distinct)
		if a.minChunks == 0 || distinct < a.minChunks {
			a.minChunks = distinct
		}
		a.maxChunks = max(a.maxChunks, distinct)
	}
	if s.label >= 0 {
		s.addLabels(b)
	}
	a.mbLabels = append(a.mbLabels, len(a.labels))
}

// pickLabel chooses the label stream on the first minibatch, as NewStats describes.
func (s *Stats) pickLabel(b *Batch) {
	s.auto = false
	sc := b.schema
	for i := range sc.Streams {
		if integerScalar(&sc.Streams[i]) {
			s.label, s.labelStream = i, sc.Streams[i].Name
			return
		}
	}
	for i := range sc.Streams {
		if !oneHotCandidate(&sc.Streams[i]) {
			continue
		}
		d := &b.Data.Streams[i]
		dim := sc.Streams[i].Dim
		ok := d.Values.Len() > 0
		for k := 0; ok && k < d.Values.Len()/dim; k++ {
			_, ok = oneHot(d.Values, k, dim)
		}
		if ok {
			s.label, s.onehot, s.labelStream = i, true, sc.Streams[i].Name
			return
		}
	}
}

// oneHot returns the position of the 1 of sample k of dim values, and whether the sample is
// one-hot (a single 1, every other value 0).
func oneHot(v mlfeed.Buffer, k, dim int) (int, bool) {
	hot := -1
	for j := range dim {
		switch x := v.Float64At(k*dim + j); {
		case x == 0:
		case x == 1 && hot < 0:
			hot = j
		default:
			return 0, false
		}
	}
	return hot, hot >= 0
}

// addLabels appends the classes of b's label samples; a sample that is not a label stops the
// label figures, with a note.
func (s *Stats) addLabels(b *Batch) {
	st := &b.schema.Streams[s.label]
	d := &b.Data.Streams[s.label]
	a := &s.cur
	if !s.onehot {
		if s.classes == nil {
			s.classes = map[int64]int32{}
		}
		for k := range d.Values.Len() {
			v := d.Values.Int64At(k)
			c, ok := s.classes[v]
			if !ok {
				c = int32(len(s.classes))
				s.classes[v] = c
			}
			a.labels = append(a.labels, c)
		}
		return
	}
	for k := range d.Values.Len() / st.Dim {
		c, ok := oneHot(d.Values, k, st.Dim)
		if !ok {
			o := b.Origins[0]
			for q := 0; q+1 < len(d.SeqStart); q++ {
				if d.SeqStart[q+1] > int64(k) {
					o = b.Origins[q]
					break
				}
			}
			s.labelErr = fmt.Sprintf("stream %q: a sample of sequence %d of chunk %d is not one-hot", st.Name, o.Index, o.Chunk)
			s.label = -1
			return
		}
		a.labels = append(a.labels, int32(c))
	}
}

// Sweeps returns the figures of every sweep added so far, the one in progress last.
func (s *Stats) Sweeps() []SweepStats {
	out := slices.Clone(s.done)
	if s.cur.started {
		out = append(out, s.finish(&s.cur))
	}
	return out
}

// finish computes a sweep's figures.
func (s *Stats) finish(a *sweepAcc) SweepStats {
	st := SweepStats{Sweep: a.sweep, Minibatches: len(a.mbSeqs), Sequences: len(a.data), Chunks: s.chunks,
		MinChunks: a.minChunks, MaxChunks: a.maxChunks, LabelNote: s.labelErr}
	with := 0
	for _, n := range a.mbSeqs {
		if n > 0 {
			with++
		}
	}
	if with > 0 {
		st.MeanChunks = float64(a.chunkSum) / float64(with)
	}
	st.RankCorrelation = spearman(a.data)
	if s.label >= 0 && s.labelErr == "" {
		st.Label = s.labelStream
		st.Classes, st.Divergence, st.RandomDivergence = divergence(a.labels, a.mbLabels)
	}
	return st
}

// spearman returns Spearman's rank correlation between the values of data (distinct) and their
// positions: 1 - 6 sum d^2 / (n (n^2 - 1)), d being a value's rank minus its position.
func spearman(data []int64) float64 {
	n := len(data)
	if n < 2 {
		return 0
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		switch {
		case data[a] < data[b]:
			return -1
		case data[a] > data[b]:
			return 1
		}
		return 0
	})
	var sum float64
	for rank, pos := range idx {
		d := float64(rank) - float64(pos)
		sum += d * d
	}
	fn := float64(n)
	return 1 - 6*sum/(fn*(fn*fn-1))
}

// divergence returns the number of classes in labels, the mean over the minibatches (ends:
// each one's end in labels) of the Kullback-Leibler divergence in bits of its label
// distribution from that of all labels, and the mean of what a random draw gives.
func divergence(labels []int32, ends []int) (classes int, mean, random float64) {
	var total []int64
	for _, c := range labels {
		if int(c) >= len(total) {
			total = append(total, make([]int64, int(c)+1-len(total))...)
		}
		total[c]++
	}
	for _, n := range total {
		if n > 0 {
			classes++
		}
	}
	count := make([]int64, len(total))
	n, from := 0, 0
	for _, end := range ends {
		mb := labels[from:end]
		from = end
		if len(mb) == 0 {
			continue
		}
		for _, c := range mb {
			count[c]++
		}
		m := float64(len(mb))
		var kl float64
		for _, c := range mb {
			if k := count[c]; k > 0 {
				p := float64(k) / m
				q := float64(total[c]) / float64(len(labels))
				kl += p * math.Log2(p/q)
				count[c] = 0
			}
		}
		mean += kl
		random += float64(classes-1) / (2 * m * math.Ln2)
		n++
	}
	if n > 0 {
		mean /= float64(n)
		random /= float64(n)
	}
	return classes, mean, random
}
