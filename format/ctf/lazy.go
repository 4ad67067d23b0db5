package ctf

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// This file opens a file for a sequential read without an index. The index costs a pass over
// the whole file before the first chunk can be parsed, and a conversion (which reads every
// chunk once, in order: ReaderOptions.Sequential) needs no more of it than chunks that start
// on sequence starts. So the file is cut every ChunkSize bytes at the next sequence start,
// found by reading a few lines after each cut point, and the parse of each chunk finds its
// sequences as it goes (while their lines are in the cache anyway), checking them as the index
// would. The counts of the chunk table come from a scan on the first call to Chunks.
// `mlfeed convert --compat ctf2bin` of bench/cbf.sh's 200 MB CTF file on 2 cores, median of
// 10 alternating runs: 234 ms (426 ms of CPU) with the index, 221 ms (411 ms) without. The
// index took 40 ms of CPU; the parse's own scan for sequences costs part of it back, but on
// lines it is about to parse, and on every core from the start.

// lazyMin is the least data a sequential read opens without an index (a variable for tests).
var lazyMin int64 = 8 << 20

// lazyApplies reports whether the file is opened without an index: a sequential read of
// enough data with sequence ids (in line mode a sequence's key is its line number, which
// takes counting the lines before it), no index cache to write or read, and chunks that are
// not kept.
func (r *Reader) lazyApplies() bool {
	o := &r.opts
	return o.Sequential && r.layout.ids && !o.CacheIndex && !o.KeepDataInMemory &&
		r.layout.size-r.layout.dataStart >= lazyMin
}

// cutLazily cuts the data into chunks at sequence starts about ChunkSize bytes apart (see
// seqStartAfter) and sets the reader up for parsing them without an index.
func (r *Reader) cutLazily() {
	l, size := r.layout, r.opts.ChunkSize
	var chunks []chunkEntry
	start, from := l.dataStart, l.dataStart+size
	for from < l.size {
		p, ok := r.seqStartAfter(from, min(from+size, l.size))
		if !ok {
			from += size // a sequence spans the whole step: the chunk grows
			continue
		}
		chunks = append(chunks, chunkEntry{start: start, end: p, line: -1})
		start, from = p, p+size
	}
	chunks = append(chunks, chunkEntry{start: start, end: l.size, line: -1})
	chunks[0].line = l.dataLine
	r.chunks, r.lazy = chunks, true
	if o := &r.opts; o.Log != nil && o.TraceLevel >= levelWarning {
		r.lazyIDs = &idFeed{chunks: len(chunks), pending: map[int][]uint64{}, warn: func(c *idCheck) { c.warn(o.Log, r.name) }}
	}
}

// seqStartAfter returns the start of a sequence that starts in [from, limit), reading lines
// from the first that starts at or after from: the lines up to the first whose id differs from
// the first id found have that id or none, so they belong to one sequence, and that line starts
// the next one (the index's rule, see scanner.each). It reports false when no such line starts
// before limit, or when an id cannot be read (the parse reports it).
func (r *Reader) seqStartAfter(from, limit int64) (int64, bool) {
	i := bytes.IndexByte(r.data[from-1:limit], '\n') // from-1 is at or after dataStart
	if i < 0 {
		return 0, false
	}
	s := scanner{data: r.data, to: r.layout.size, atEOF: true, ids: true}
	var first uint64
	found := false
	for p := from + int64(i); p < limit; {
		id, ok, err := s.readID(p)
		if err != nil {
			return 0, false
		}
		if ok && found && id != first {
			return p, true
		}
		if ok && !found {
			first, found = id, true
		}
		_, p = s.lineEnd(p)
	}
	return 0, false
}

// countLazily makes the chunk table of a reader opened without an index: each chunk's
// sequences and samples, counted by scanning them (on the threads of the scheduler in the
// options' Context, if any). A chunk whose scan fails keeps the counts found before the
// failure; reading it reports the error.
func (r *Reader) countLazily() {
	infos := make([]mlfeed.ChunkInfo, len(r.chunks))
	count := func(_ context.Context, i int) error {
		if err := r.acquire(); err != nil {
			return nil
		}
		defer r.closeMu.RUnlock()
		in := &infos[i]
		r.scanChunk(i, func(q seqInfo) bool {
			in.Sequences++
			in.Samples += q.samples
			return true
		})
		return nil
	}
	ctx := r.opts.Context
	if ctx == nil || sched.FromContext(ctx) == nil {
		for i := range infos {
			count(ctx, i)
		}
	} else {
		sched.Parallel(context.WithoutCancel(ctx), len(infos), count)
	}
	r.infos = infos
}

// lazyRates are the sequences and samples per MiB of text of the chunks a lazy reader parsed
// last, so that the next chunk's buffers are reserved about the size they will need.
type lazyRates struct {
	sequences, samples atomic.Int64
}

// note records a parsed chunk of n bytes, seqs sequences and samples samples.
func (l *lazyRates) note(n int64, seqs int, samples int64) {
	if n > 0 {
		l.sequences.Store(int64(seqs)<<20/n + 1)
		l.samples.Store(samples<<20/n + 1)
	}
}

// estimate returns c with the counts the rates predict, with a margin of 1/16 (zero before
// any chunk was parsed: the buffers then grow as needed).
func (l *lazyRates) estimate(c chunkEntry) chunkEntry {
	n := c.end - c.start
	if s := l.sequences.Load(); s > 0 {
		c.sequences = int(n*s>>20 + n*s>>24 + 1)
	}
	if s := l.samples.Load(); s > 0 {
		c.samples = n*s>>20 + n*s>>24 + 1
	}
	return c
}

// idFeed gives the ids of a lazy reader's chunks to the id check (idCheck) in file order,
// as the chunks are parsed in any order, and warns once the last chunk's ids are in. A
// sequential read parses each chunk once, a few ahead of the one it uses: pending holds the
// ids of those.
type idFeed struct {
	mu      sync.Mutex
	next    int              // the chunk whose ids go to the check next
	chunks  int              // chunks in the file
	pending map[int][]uint64 // ids of chunks parsed ahead of next
	check   idCheck
	warn    func(*idCheck)
}

// add takes the ids of chunk i (once: a chunk parsed again adds nothing).
func (f *idFeed) add(i int, keys []uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.pending[i]; ok || i < f.next {
		return
	}
	f.pending[i] = keys
	for {
		k, ok := f.pending[f.next]
		if !ok {
			break
		}
		delete(f.pending, f.next)
		for _, key := range k {
			f.check.add(key)
		}
		f.next++
	}
	if f.next == f.chunks {
		f.warn(&f.check)
		f.next++ // warned: nothing more to take
	}
}
