package minibatch

import (
	"fmt"
	"math"

	"github.com/mlfeed/mlfeed"
)

// The planner's lengths: how many samples each sequence counts toward the minibatch size. A
// chunk table of one sample per sequence says so at once; otherwise the source's index
// (Source.SequenceLengths) or, with a defining stream, the decoded chunk tells, once per chunk.

// oneSampleEach reports whether chunk table entry info says that every sequence of its chunk
// is one sample long: the table counts samples as the planner does (no defining stream), and
// sequences are at least one sample long.
func (cc *chunkCache) oneSampleEach(info mlfeed.ChunkInfo) bool {
	return info.Samples == int64(info.Sequences) && !cc.definesMB
}

// lengthsOf returns the lengths of chunk c's sequences (the planner's lengths).
func (cc *chunkCache) lengthsOf(c int32) ([]int32, error) {
	if l := cc.lengths[c]; l != nil {
		return l, nil
	}
	info := cc.infos[c]
	var l []int32
	switch {
	case cc.oneSampleEach(info):
		l = cc.ones[:info.Sequences]
	case cc.defining < 0:
		// The source's lengths are each sequence's longest stream's, as ours.
		ls, err := cc.src.SequenceLengths(int(c))
		if err != nil {
			return nil, err
		}
		if len(ls) != info.Sequences {
			return nil, fmt.Errorf("%w: chunk %d: %d sequence lengths for %d sequences", mlfeed.ErrFormat, c, len(ls), info.Sequences)
		}
		l = make([]int32, len(ls))
		for i, v := range ls {
			if v < 0 || v > math.MaxInt32 {
				return nil, fmt.Errorf("%w: chunk %d: sequence length %d", mlfeed.ErrFormat, c, v)
			}
			l[i] = int32(v)
		}
	default:
		var ch *mlfeed.Chunk
		if s := cc.slots[c]; s != nil {
			cc.wait(s)
			if s.err != nil {
				return nil, s.err
			}
			ch = s.chunk
		} else if cc.keep != nil {
			k, err := cc.keptChunk(c) // read once, for this and for its minibatches
			if err != nil {
				return nil, err
			}
			ch = k.chunk
		} else {
			var err error
			if ch, err = cc.src.ReadChunk(cc.ctx, int(c)); err != nil {
				return nil, err
			}
		}
		if ch.Sequences != info.Sequences {
			return nil, fmt.Errorf("%w: chunk %d has %d sequences, its table entry %d", mlfeed.ErrFormat, c, ch.Sequences, info.Sequences)
		}
		l = make([]int32, ch.Sequences)
		for q := range l {
			d := &ch.Streams[cc.defining]
			l[q] = int32(d.SeqStart[q+1] - d.SeqStart[q])
		}
	}
	cc.lengths[c] = l
	if l != nil {
		cc.known++
	}
	return l, nil
}
