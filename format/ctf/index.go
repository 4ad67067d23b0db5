package ctf

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"unsafe"

	"github.com/mlfeed/mlfeed/internal/fastfloat"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/prefetch"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// This file is the indexer: it finds sequence and chunk boundaries as CNTK's
// TextInputIndexBuilder does, by looking at line starts (ids) and, with a definesMBSize stream,
// at the stream's name, without parsing a single number.

// seqInfo describes one sequence found by the scanner.
type seqInfo struct {
	start, end int64  // byte range [start, end) in the file
	key        uint64 // the id, or the 0-based line number in line mode
	samples    int64  // CNTK's index sample count
	line       int64  // lines before start, counted from the range's first line
}

// chunkEntry is one chunk of the index.
type chunkEntry struct {
	start, end int64 // byte span of the chunk's sequences
	line       int64 // 0-based line number of start, -1 if unknown (index loaded from a cache)
	sequences  int
	samples    int64
}

// layout is what the indexer learns from the file's first bytes.
type layout struct {
	size      int64 // file size
	dataStart int64 // first byte after the BOM and leading white space
	dataLine  int64 // lines before dataStart
	ids       bool  // id mode (else line mode)
}

// maxSequenceBytes is CNTK's limit on one sequence's size in bytes.
const maxSequenceBytes = math.MaxUint32

// detectLayout applies CNTK's rules to the start of the file: a UTF-16 BOM is fatal, a UTF-8
// BOM (or the part of it that is there) is skipped, then white space; the next byte decides
// the mode.
func detectLayout(data []byte, skipIDs bool) (layout, error) {
	l := layout{size: int64(len(data))}
	if len(data) == 0 {
		return l, fmt.Errorf("%w: Input file is empty", ErrFormat)
	}
	if len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE {
		return l, fmt.Errorf("%w: found a UTF-16 BOM at the beginning of the input file; UTF-16 encoding is currently not supported", ErrFormat)
	}
	p := 0
	for _, c := range []byte{0xEF, 0xBB, 0xBF} {
		if p < len(data) && data[p] == c {
			p++
		} else {
			break
		}
	}
	for p < len(data) && isSpace(data[p]) {
		if data[p] == '\n' {
			l.dataLine++
		}
		p++
	}
	if p == len(data) {
		return l, fmt.Errorf("%w: Input file is empty", ErrFormat)
	}
	l.dataStart = int64(p)
	switch c := data[p]; {
	case skipIDs || c == '|':
	case isDigit(c):
		l.ids = true
	default:
		return l, &atOffset{int64(p), fmt.Errorf("%w: expected a sequence id (digits) or '|', found %q (CNTK: Expected a sequence id at the offset %d, none was found.)", ErrFormat, c, p)}
	}
	return l, nil
}

// atOffset is an indexing error at a byte offset; the Reader turns it into a line:column
// error.
type atOffset struct {
	off int64
	err error
}

func (e *atOffset) Error() string { return fmt.Sprintf("byte offset %d: %v", e.off, e.err) }
func (e *atOffset) Unwrap() error { return e.err }

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isDigit(c byte) bool { return c-'0' <= 9 }

// scanner walks the sequences of a byte range of the file, as the indexer sees them.
type scanner struct {
	data      []byte // the whole file
	from      int64  // start of the range (a sequence start)
	to        int64  // end of the range
	atEOF     bool   // to is the end of the file
	ids       bool   // id mode
	main      []byte // "|alias" of the definesMBSize stream, or nil
	firstLine int64  // line number of from, for line-mode keys
	lines     int64  // lines in the range, set by each when it ran to the end
}

// mentions reports whether line holds main followed by a delimiter (white space, '|', a
// control or non-ASCII byte) or the end of the line, as CNTK's FindMainStream does.
func mentions(line, main []byte) bool {
	for {
		i := bytes.Index(line, main)
		if i < 0 {
			return false
		}
		j := i + len(main)
		if j == len(line) {
			return true
		}
		if c := line[j]; c <= ' ' || c == '|' || c >= 0x80 {
			return true
		}
		line = line[i+1:]
	}
}

// readID reads the sequence id at data[p:to] as CNTK's indexer does: ok is false when the
// line does not start with a digit, or when its digits run to the end of the file.
func (s *scanner) readID(p int64) (id uint64, ok bool, err error) {
	if p+8 <= s.to {
		// The common case: an id of one to seven digits, read at once.
		if v, n := fastfloat.Digits8(s.data[p:]); n > 0 && n < 8 {
			return v, true, nil
		}
	}
	q := p
	for q < s.to {
		d := s.data[q] - '0'
		if d > 9 {
			break
		}
		if id > (math.MaxUint64-uint64(d))/10 {
			return 0, false, &atOffset{p, fmt.Errorf("%w: sequence id overflows 64 bits (CNTK: Overflow while reading a numeric sequence id)", ErrFormat)}
		}
		id = id*10 + uint64(d)
		q++
	}
	if q == p || q == s.to && s.atEOF {
		return 0, false, nil
	}
	return id, true, nil
}

// lineEnd returns the end of the line starting at p (the offset of its '\n' plus one, or to).
func (s *scanner) lineEnd(p int64) (content, next int64) {
	i := bytes.IndexByte(s.data[p:s.to], '\n')
	if i < 0 {
		return s.to, s.to
	}
	return p + int64(i), p + int64(i) + 1
}

// scanAhead is how far ahead of the line it scans the scanner has the text's cache lines
// loaded (prefetch.Span). The scan finds each line's end with one bytes.IndexByte, which
// waits for the line's memory; the hardware prefetcher starts late on every line.
// `mlfeed info` of bench/cbf.sh's 200 MB CTF file (the index): 34.3 -> 29.0 ms, 50 -> 40 ms
// of CPU (the same file without ids, line mode: 53 -> 50 ms, 83 -> 72 ms of CPU); convert
// --compat ctf2bin, which scans as it parses: 229 -> 218 ms (medians of 10 to 15 alternating
// runs; 2 KiB and 8 KiB ahead gained less).
const scanAhead = 4096

// ahead starts loading the bytes scanAhead after the line [p, next).
func (s *scanner) ahead(p, next int64) {
	if next+scanAhead < s.to {
		prefetch.Span(s.data[p+scanAhead : next+scanAhead])
	}
}

// each calls yield for every sequence of the range in order, until yield returns false.
func (s *scanner) each(yield func(seqInfo) bool) error {
	if !s.ids {
		line := int64(0)
		for p := s.from; p < s.to; line++ {
			c, next := s.lineEnd(p)
			s.ahead(p, next)
			if s.main == nil || mentions(s.data[p:c], s.main) {
				if !yield(seqInfo{start: p, end: next, key: uint64(s.firstLine + line), samples: 1, line: line}) {
					return nil
				}
			}
			p = next
		}
		s.lines = line
		return nil
	}
	prev, ok, err := s.readID(s.from)
	if err != nil {
		return err
	}
	if !ok {
		return &atOffset{s.from, fmt.Errorf("%w: expected a sequence id (CNTK: Expected a sequence id at the offset %d, none was found.)", ErrFormat, s.from)}
	}
	seq := seqInfo{start: s.from, key: prev}
	found := false
	line := int64(0)
	for p := s.from; p < s.to; {
		c, next := s.lineEnd(p)
		s.ahead(p, next)
		if s.main == nil || mentions(s.data[p:c], s.main) {
			seq.samples++
			found = true
		}
		line++
		p = next
		if p >= s.to {
			break
		}
		id, ok, err := s.readID(p)
		if err != nil {
			return err
		}
		if ok && id != prev {
			seq.end = p
			if found && !yield(seq) {
				return nil
			}
			prev = id
			seq = seqInfo{start: p, key: id, line: line}
			found = false
		}
	}
	seq.end = s.to
	s.lines = line
	if found {
		yield(seq)
	}
	return nil
}

// chunker groups sequences into chunks as CNTK's Index does: a new chunk starts when adding a
// sequence would make the current chunk's byte span exceed the limit.
type chunker struct {
	limit  int64
	chunks []chunkEntry
}

func (c *chunker) add(s seqInfo, line int64) {
	n := len(c.chunks)
	if n == 0 || c.chunks[n-1].end-c.chunks[n-1].start+(s.end-s.start) > c.limit {
		c.chunks = append(c.chunks, chunkEntry{start: s.start, line: line})
		n++
	}
	ch := &c.chunks[n-1]
	ch.end = s.end
	ch.sequences++
	ch.samples += s.samples
}

// checkSequence applies CNTK's limits to an indexed sequence.
func checkSequence(s seqInfo, frameMode bool) error {
	if s.end-s.start > maxSequenceBytes {
		return &atOffset{s.start, fmt.Errorf("%w: the sequence spans %d bytes; CNTK's limit is %d", ErrTooLarge, s.end-s.start, int64(maxSequenceBytes))}
	}
	if frameMode && s.samples != 1 {
		return &atOffset{s.start, fmt.Errorf("%w: the sequence has %d samples; frameMode requires 1 (CNTK: Detected a non-frame sequence of size %d in frame mode)", ErrFormat, s.samples, s.samples)}
	}
	return nil
}

// populateStep is how far ahead of the indexer buildIndex has the pages of a mapped file
// mapped in, in bytes.
const populateStep = 4 << 20

// buildIndex indexes the whole file. record, if not nil, receives every sequence (for the
// index cache). populate, if not nil, maps in the pages of a span of data before the indexer
// reads it (on the caller's goroutine: one system call instead of a page fault per page).
func buildIndex(data []byte, l layout, main []byte, chunkSize int64, frameMode bool, record func(seqInfo), populate func(off, end int64)) ([]chunkEntry, error) {
	if chunkSize > l.size {
		chunkSize = l.size // as CNTK's Index::Reserve does
	}
	ck := chunker{limit: chunkSize}
	s := scanner{data: data, from: l.dataStart, to: l.size, atEOF: true, ids: l.ids, main: main, firstLine: l.dataLine}
	var err error
	mapped := l.dataStart // data below this is mapped in
	if populate != nil {
		populate(mapped, min(mapped+populateStep, l.size))
		mapped = min(mapped+populateStep, l.size)
	}
	scanErr := s.each(func(q seqInfo) bool {
		if err = checkSequence(q, frameMode); err != nil {
			return false
		}
		if record != nil {
			record(q)
		}
		ck.add(q, l.dataLine+q.line)
		if populate != nil && mapped < l.size && q.end+populateStep/2 >= mapped {
			populate(mapped, min(mapped+populateStep, l.size))
			mapped = min(mapped+populateStep, l.size)
		}
		return true
	})
	if scanErr != nil {
		return nil, scanErr
	}
	return ck.chunks, err
}

// indexHold is how many bytes of sequences the index may keep for the chunks (the pieces of a
// parallel index hold up to twice as many until they are merged): a sixteenth of the file's
// size, at least 1 MiB, but no more than a sixteenth of the memory budget of the scheduler in
// ctx (if any), nor an eighth of the Go runtime's memory limit (GOMEMLIMIT), so that the index of a
// file larger than the memory it may use stays within it.
func indexHold(size int64, ctx context.Context) int64 {
	hold := max(size/16, 1<<20)
	if ctx != nil {
		if s := sched.FromContext(ctx); s != nil {
			hold = min(hold, s.Memory()/16)
		}
	}
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 {
		hold = min(hold, lim/8)
	}
	return hold
}

// indexMinParallel is the least data indexParallel cuts into pieces (a variable for tests).
var indexMinParallel int64 = 8 << 20

// indexParallel is buildIndex on the idle threads of the scheduler in the options' Context:
// the data is cut at sequence starts into one piece per thread, the pieces are scanned at
// once, their sequences are checked and go to keep on the same threads, and then through
// record (if not nil) and the chunker in order, as buildIndex's do. It returns nil chunks and
// no error when it does not apply (no scheduler, one thread, small data) or gives up (the
// pieces' sequences would take more than twice indexHold), and the caller indexes
// sequentially.
func (r *Reader) indexParallel(main []byte, record func(seqInfo), populate func(off, end int64), keep *seqKeeper) ([]chunkEntry, error) {
	o, l := &r.opts, r.layout
	if o.Context == nil || l.size-l.dataStart < indexMinParallel {
		return nil, nil
	}
	sc := sched.FromContext(o.Context)
	if sc == nil || sc.Threads() < 2 {
		return nil, nil
	}
	n := sc.Threads()
	all := chunkEntry{start: l.dataStart, end: l.size}
	pts := []int64{l.dataStart}
	for k := 1; k < n; k++ {
		p := r.sequenceStartAfter(all, l.dataStart+(l.size-l.dataStart)*int64(k)/int64(n))
		if p < 0 {
			break
		}
		if p > pts[len(pts)-1] {
			pts = append(pts, p)
		}
	}
	pts = append(pts, l.size)
	type part struct {
		seqs  []seqInfo
		lines int64
		err   error
		over  bool
	}
	parts := make([]part, len(pts)-1)
	hold := indexHold(l.size, o.Context)
	err := sched.Parallel(o.Context, len(parts), func(ctx context.Context, k int) (err error) {
		defer mmap.Recover(mmap.Catch(), &err) // the mapped file may shrink meanwhile
		pt := &parts[k]
		from, to := pts[k], pts[k+1]
		// The pieces' sequences are held until the chunker has taken them in order: up to
		// twice what the index may hold, shared by the pieces by their bytes. They are reserved
		// a sixteenth at a time, doubled as they fill (a copy of at most as much as they hold),
		// so that a file of long sequences does not reserve heap for many more.
		limit := 2 * hold * (to - from) / (l.size - l.dataStart) / int64(unsafe.Sizeof(seqInfo{}))
		limit = min(limit, to-from+1) // no more sequences than bytes
		pt.seqs = make([]seqInfo, 0, max(limit/16, 1))
		mapped := from
		if populate != nil {
			mapped = min(from+populateStep, to)
			populate(from, mapped)
		}
		s := scanner{data: r.data, from: from, to: to, atEOF: to == l.size, ids: l.ids, main: main}
		pt.err = s.each(func(q seqInfo) bool {
			if int64(len(pt.seqs)) >= limit {
				pt.over = true
				return false
			}
			if populate != nil && mapped < to && q.end+populateStep/2 >= mapped {
				populate(mapped, min(mapped+populateStep, to))
				mapped = min(mapped+populateStep, to)
			}
			if len(pt.seqs) == cap(pt.seqs) {
				pt.seqs = append(make([]seqInfo, 0, min(2*int64(cap(pt.seqs)), limit)), pt.seqs...)
			}
			pt.seqs = append(pt.seqs, q)
			return true
		})
		pt.lines = s.lines
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := 0
	for _, pt := range parts {
		if pt.over {
			return nil, nil
		}
		total += len(pt.seqs)
	}
	// Lines (and line-mode keys) counted from the data's start, as buildIndex counts them, and
	// each piece's place among the kept sequences.
	base, at := make([]int64, len(parts)), make([]int, len(parts))
	for k := 1; k < len(parts); k++ {
		base[k] = base[k-1] + parts[k-1].lines
		at[k] = at[k-1] + len(parts[k-1].seqs)
	}
	kept := keep.take(total)
	checked := make([]error, len(parts))
	err = sched.Parallel(o.Context, len(parts), func(ctx context.Context, k int) error {
		seqs := parts[k].seqs
		for j := range seqs {
			q := &seqs[j]
			q.line += base[k]
			if !l.ids {
				q.key += uint64(l.dataLine + base[k])
			}
			if err := checkSequence(*q, o.FrameMode); err != nil {
				checked[k], parts[k].seqs = err, seqs[:j]
				break
			}
		}
		if kept != nil {
			copy(kept[at[k]:], parts[k].seqs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// In order, as buildIndex: the first error in the file wins.
	ck := chunker{limit: min(o.ChunkSize, l.size)}
	for k, pt := range parts {
		for _, q := range pt.seqs {
			if record != nil {
				record(q)
			}
			ck.add(q, l.dataLine+q.line)
		}
		if checked[k] != nil {
			return nil, checked[k]
		}
		if pt.err != nil {
			return nil, pt.err
		}
	}
	return ck.chunks, nil
}
