package ctf

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// This file parses one chunk on several cores: the chunk is cut at sequence starts into
// pieces that the scheduler's idle threads parse at once, and that are joined. A piece that meets anything CNTK would log or
// count as an error gives up, and the chunk is parsed again in one piece, so that messages,
// their order and the error budget are exactly those of a sequential parse.

// minSplit is the smallest chunk worth splitting.
const minSplit = 1 << 20

// errSequential makes a piece give up.
var errSequential = errors.New("ctf: parse sequentially")

// parsePieces parses chunk i in n pieces when it holds at least minBytes, the pieces as tasks
// of the scheduler in ctx (sched.Parallel), into the buffers of mem (or new ones) where
// they are large enough.
func parsePieces[T float32 | float64](ctx context.Context, r *Reader, i, n int, minBytes int64, mem []acc[T]) (*mlfeed.Chunk, int, *diag, error) {
	c := r.chunks[i]
	if n < 2 || c.end-c.start < minBytes || r.lazy { // a lazy chunk has no count to check the pieces against
		return parseChunkInto(ctx, r, i, nil, mem)
	}
	pts := r.splits(i, n)
	if len(pts) < 3 {
		return parseChunkInto(ctx, r, i, nil, mem)
	}
	first := make([]int64, len(pts)-1) // line-mode keys: the line where each piece starts
	if !r.layout.ids {
		base := r.chunkLine(i)
		prev := c.start
		for k, p := range pts[:len(pts)-1] {
			base += int64(bytes.Count(r.data[prev:p], []byte{'\n'}))
			first[k] = base
			prev = p
		}
	}
	parts := make([]piece[T], len(pts)-1)
	err := sched.Parallel(ctx, len(parts), func(ctx context.Context, k int) (err error) {
		defer mmap.Recover(mmap.Catch(), &err) // the mapped file may shrink meanwhile
		parts[k] = parsePiece[T](r, i, pts[k], pts[k+1], first[k])
		return nil
	})
	if err != nil {
		return nil, 0, nil, err
	}
	seqs := 0
	for _, pc := range parts {
		if pc.err != nil {
			return parseChunkInto(ctx, r, i, nil, mem)
		}
		seqs += pc.seqs
	}
	if seqs != c.sequences {
		return parseChunkInto(ctx, r, i, nil, mem)
	}
	rounded := make([][]roundStat, len(parts))
	for k, pc := range parts {
		rounded[k] = pc.p.rounded
	}
	r.noteRounded(i, rounded...)
	out := join(r, parts, seqs, mem)
	for _, pc := range parts {
		r.spare.Put(&pc.p.acc)
	}
	return out, 0, nil, nil
}

// piece is the result of parsing part of a chunk.
type piece[T float32 | float64] struct {
	p    *parser[T]
	ids  []string
	seqs int
	err  error
}

// parsePiece parses the sequences in [from, to) of chunk ci quietly: it gives up with
// errSequential at the first message or error.
func parsePiece[T float32 | float64](r *Reader, ci int, from, to, firstLine int64) (pc piece[T]) {
	c := r.chunks[ci]
	p := newParser[T](r.sp, r.data, 0, func() int64 { return 0 })
	p.quiet = true
	share := func(n int64) int64 { return n*(to-from)/(c.end-c.start) + 1 }
	var mem []acc[T]
	if m, ok := r.spare.Get().(*[]acc[T]); ok {
		mem = *m
	}
	p.reserve(chunkEntry{start: from, end: to, samples: share(c.samples), sequences: int(share(int64(c.sequences)))}, r.density, mem)
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(abort); !ok {
				panic(v)
			}
			pc = piece[T]{err: errSequential}
		}
	}()
	each := func(yield func(seqInfo) bool) error {
		s := scanner{data: r.data, from: from, to: to, atEOF: to == r.layout.size, ids: r.layout.ids, main: r.sp.main, firstLine: firstLine}
		return s.each(yield)
	}
	if r.seqs != nil {
		// The index's sequences that start in [from, to), their lines counted from from's.
		seqs := r.seqs[ci]
		lo, _ := slices.BinarySearchFunc(seqs, from, func(q seqInfo, off int64) int { return cmp.Compare(q.start, off) })
		hi, _ := slices.BinarySearchFunc(seqs, to, func(q seqInfo, off int64) int { return cmp.Compare(q.start, off) })
		// In id mode from starts a sequence; in line mode firstLine is from's line.
		base := firstLine - c.line
		if r.layout.ids && lo < hi {
			base = seqs[lo].line
		}
		each = func(yield func(seqInfo) bool) error {
			for _, q := range seqs[lo:hi] {
				q.line -= base
				if !yield(q) {
					break
				}
			}
			return nil
		}
	}
	var ids idList
	if r.layout.ids {
		ids.reserve(int(share(int64(c.sequences))))
	}
	n := 0
	if err := each(func(q seqInfo) bool {
		p.sequence(q)
		if r.layout.ids {
			ids.add(q.key)
		}
		n++
		return true
	}); err != nil {
		return piece[T]{err: err}
	}
	return piece[T]{p: p, ids: ids.strings(), seqs: n}
}

// join concatenates the pieces' stream data into one chunk, in the buffers of mem where they
// are large enough.
func join[T float32 | float64](r *Reader, parts []piece[T], seqs int, mem []acc[T]) *mlfeed.Chunk {
	var ids []string
	if r.layout.ids {
		ids = make([]string, 0, seqs)
		for _, pc := range parts {
			ids = append(ids, pc.ids...)
		}
	}
	out := newParser[T](r.sp, nil, 0, nil)
	for s := range out.acc {
		o := &out.acc[s]
		nv, ns, nss := 0, 1, 1
		for _, pc := range parts {
			a := &pc.p.acc[s]
			nv += len(a.vals)
			ns += len(a.seqStart) - 1
			nss += max(len(a.sampleStart)-1, 0)
		}
		var m acc[T]
		if s < len(mem) {
			m = mem[s]
		}
		o.vals = reuse(m.vals, int64(nv))
		o.seqStart = reuse(m.seqStart, int64(ns))[:1]
		if !r.sp.dense[s] {
			o.idx = reuse(m.idx, int64(nv))
			o.sampleStart = reuse(m.sampleStart, int64(nss))[:1]
		}
		for _, pc := range parts {
			a := &pc.p.acc[s]
			vbase := int64(len(o.vals))
			for _, v := range a.seqStart[1:] {
				o.seqStart = append(o.seqStart, o.n+v)
			}
			if !r.sp.dense[s] {
				for _, v := range a.sampleStart[1:] {
					o.sampleStart = append(o.sampleStart, vbase+v)
				}
				o.idx = append(o.idx, a.idx...)
			}
			o.vals = append(o.vals, a.vals...)
			o.n += a.n
		}
	}
	return out.chunk(seqs, ids)
}

// splits returns about n+1 offsets that cut chunk i at sequence starts, the chunk's start
// first and its end last.
func (r *Reader) splits(i, n int) []int64 {
	c := r.chunks[i]
	pts := []int64{c.start}
	for k := 1; k < n; k++ {
		target := c.start + (c.end-c.start)*int64(k)/int64(n)
		if p := r.sequenceStartAfter(c, max(target, pts[len(pts)-1]+1)); p > 0 {
			pts = append(pts, p)
		}
	}
	return append(pts, c.end)
}

// sequenceStartAfter returns the first offset at or after target, past chunk c's start, where
// a sequence of the index starts (in line mode, a line that may be one), or -1.
func (r *Reader) sequenceStartAfter(c chunkEntry, target int64) int64 {
	target = max(target, c.start+1) // c's start is its first sequence's: no cut there
	if target >= c.end {
		return -1
	}
	d := r.data[:c.end]
	p := target
	if d[p-1] != '\n' {
		j := bytes.IndexByte(d[p:], '\n')
		if j < 0 || p+int64(j)+1 >= c.end {
			return -1
		}
		p += int64(j) + 1
	}
	if !r.layout.ids {
		return p
	}
	// Id mode: a sequence starts at a line whose id differs from the last id before it.
	s := scanner{data: r.data, to: c.end, atEOF: c.end == r.layout.size}
	cur, ok := uint64(0), false
	for q := p - 1; !ok; {
		ls := int64(bytes.LastIndexByte(d[c.start:q], '\n')) + 1 + c.start
		cur, ok, _ = s.readID(ls)
		q = ls - 1
		if ls == c.start {
			break
		}
	}
	for p < c.end {
		id, ok2, err := s.readID(p)
		if err != nil {
			return -1
		}
		if ok2 && (!ok || id != cur) {
			return p
		}
		j := bytes.IndexByte(d[p:], '\n')
		if j < 0 {
			return -1
		}
		p += int64(j) + 1
	}
	return -1
}
