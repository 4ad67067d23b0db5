package minibatch

import (
	"slices"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/prefetch"
)

// Packing copies a planned minibatch's sequences out of their chunks into its Batch and lays
// them out (batch.go); packers.go decides which goroutine packs which minibatch.

// pack copies a planned job's sequences into its batch and lays them out.
func (p *packing) pack(j *job) {
	defer mmap.Recover(mmap.Catch(), &j.err) // chunks may alias a mapped file that shrinks meanwhile
	b := &j.batch
	b.reset()
	if p.packRaw(j) {
		b.pack()
		return
	}
	b.reserve(j.refs)
	var last *slot
	if len(j.refs) > 0 {
		prefetchSamples(&j.refs[0], b.schema)
	}
	for k, x := range j.refs {
		// Start loading what later sequences will read, so that their cache misses overlap
		// this sequence's copy (a shuffled gather is bound by the latency of those misses):
		// the offsets of the sequence prefetchAhead on, the first values of the one
		// valuesAhead on, and all the samples of the next one, where they are one fixed-size
		// sample.
		if k+prefetchAhead < len(j.refs) {
			prefetchOffsets(&j.refs[k+prefetchAhead])
		}
		if k+valuesAhead < len(j.refs) {
			prefetchValues(&j.refs[k+valuesAhead], b.schema)
		}
		if k+1 < len(j.refs) {
			prefetchSamples(&j.refs[k+1], b.schema)
		}
		if x.s != last {
			p.cc.waitHelping(x.s, j.refs[k+1:])
			if x.s.err != nil {
				j.err = x.s.err
				return
			}
			last = x.s
		}
		if err := b.add(x.s.chunk, x.s.unit, x.s.views, int(x.chunk), int(x.idx), x.n); err != nil {
			j.err = err
			return
		}
	}
	b.pack()
}

// packRaw packs job j as pack does when every chunk it reads is loaded and holds one
// fixed-size sample per sequence in every stream (views: the source's memory, as in a mapped
// file's shuffled sweep, or a decoded chunk's), with nothing to decide per sequence but where
// its samples lie; it reports false, having done nothing, when one is not.
func (p *packing) packRaw(j *job) bool {
	var last *slot
	for k := range j.refs {
		if s := j.refs[k].s; s != last {
			if !s.loaded.Load() || s.err != nil || s.views == nil {
				return false
			}
			last = s
		}
	}
	b := &j.batch
	sc := b.schema
	n := len(j.refs)
	// Every stream holds one fixed-size sample per sequence: its values and offsets are sized
	// once and filled in place (in the memory the batch has, a caller's included, when it is
	// large enough).
	for i := range b.Data.Streams {
		d := &b.Data.Streams[i]
		size := n * sc.Streams[i].Dim * sc.Streams[i].Type.Size()
		d.Values.Bytes = slices.Grow(d.Values.Bytes[:0], size)[:size]
		d.SeqStart = slices.Grow(d.SeqStart[:0], n+1)[:n+1]
		for q := range d.SeqStart {
			d.SeqStart[q] = int64(q)
		}
	}
	for k := range j.refs {
		x := &j.refs[k]
		if k+valuesAhead < n {
			y := &j.refs[k+valuesAhead]
			for i := range y.s.views {
				prefetch.Bytes(y.s.views[i].sample(int(y.idx)))
			}
		}
		if k+1 < n {
			y := &j.refs[k+1]
			for i := range y.s.views {
				// (A small sample's line was prefetched valuesAhead on.)
				if v := &y.s.views[i]; v.size > smallSample {
					prefetch.Span(v.sample(int(y.idx)))
				}
			}
		}
		for i := range b.Data.Streams {
			v := &x.s.views[i]
			dst := b.Data.Streams[i].Values.Bytes[k*v.size : (k+1)*v.size]
			if v.size <= smallSample && v.swap == 0 {
				// A label or a scalar: a few bytes, copied here rather than by a call.
				for q, c := range v.sample(int(x.idx)) {
					dst[q] = c
				}
				continue
			}
			v.put(dst, int(x.idx))
		}
		if b.Data.IDs != nil && x.s.chunk.IDs != nil {
			b.Data.IDs = append(b.Data.IDs, x.s.chunk.IDs[x.idx])
		}
		b.Origins = append(b.Origins, Origin{int(x.chunk), int(x.idx)})
		b.Samples += x.n
	}
	b.Data.Sequences += n
	b.Sequences += n
	return true
}

// smallSample is the most bytes packRaw copies in its loop, and prefetches with one line.
const smallSample = 8

// prefetchAhead and valuesAhead are how many sequences ahead pack prefetches offsets and
// the first values. The whole of a sample (an MNIST image as float32 is 49 cache lines over
// one or two pages) is prefetched one sequence ahead; two ahead measured no better, and
// without the first-line prefetch four ahead a randomized sweep took about 10% more CPU.
const prefetchAhead, valuesAhead = 8, 4

// prefetchOffsets prefetches the start of x's sequence in each stream, if its chunk is loaded.
func prefetchOffsets(x *jobRef) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		if !x.s.unit[i] {
			prefetch.Int64s(x.s.chunk.Streams[i].SeqStart[x.idx:])
		}
	}
}

// prefetchValues prefetches the first values of x's sequence in each stream (the first sample
// offsets, for streams that have them), if its chunk is loaded.
func prefetchValues(x *jobRef, sc *mlfeed.Schema) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		d := &x.s.chunk.Streams[i]
		switch {
		case x.s.views != nil:
			prefetch.Bytes(x.s.views[i].sample(int(x.idx)))
			continue
		case x.s.unit[i]:
			prefetch.Bytes(d.Values.Bytes[int(x.idx)*sc.Streams[i].Dim*d.Values.Type.Size():])
			continue
		}
		s0 := d.SeqStart[x.idx]
		switch {
		case d.SampleStart != nil:
			prefetch.Int64s(d.SampleStart[s0:])
		case d.Values.Strings == nil:
			if o := s0 * int64(sc.Streams[i].Dim*d.Values.Type.Size()); o < int64(len(d.Values.Bytes)) {
				prefetch.Bytes(d.Values.Bytes[o:])
			}
		}
	}
}

// prefetchSamples prefetches every cache line of x's sample in each stream that holds one
// fixed-size sample per sequence (a raw chunk's views, or a decoded chunk's unit streams), if
// its chunk is loaded: the bytes add will copy.
func prefetchSamples(x *jobRef, sc *mlfeed.Schema) {
	if !x.s.loaded.Load() || x.s.err != nil {
		return
	}
	for i := range x.s.chunk.Streams {
		if !x.s.unit[i] {
			continue
		}
		if x.s.views != nil {
			prefetch.Span(x.s.views[i].sample(int(x.idx)))
			continue
		}
		size := sc.Streams[i].Dim * x.s.chunk.Streams[i].Values.Type.Size()
		prefetch.Span(x.s.chunk.Streams[i].Values.Bytes[int(x.idx)*size : int(x.idx+1)*size])
	}
}
