package ctf

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
)

// This file is the parser: it turns a chunk's bytes into columnar stream data, following
// CNTK's TextParser step by step so that recovery from malformed input, the messages and their
// byte offsets are CNTK's.

// spec is what every parser of a Reader shares (read-only).
type spec struct {
	file     string // the name in messages
	path     string // the name in positional errors
	names    []string
	aliases  [][]byte
	dense    []bool
	dims     []int
	defines  []bool // streams whose sample count is checked against the row count
	maxAlias int
	main     []byte // "|alias" of the definesMBSize stream, nil if none
	ids      bool
	prec     precMode // what happens to values float32 does not hold as written
	trace    int
	log      io.Writer
	logMu    *sync.Mutex
}

// abort carries a fatal error out of the parser's recursion-free but deep call chain.
type abort struct{ err error }

// acc collects one stream's samples for a chunk.
type acc[T float32 | float64] struct {
	vals        []T
	idx         []int32
	sampleStart []int64 // sparse: first value of each sample
	seqStart    []int64
	n           int64 // samples in the chunk so far
	seqN        int64 // samples in the current sequence
	seqVals     int   // len(vals) when the current sequence started
	lastRow     int   // the row that last had a sample (strict duplicate check)
}

// parser parses the sequences of one chunk.
type parser[T float32 | float64] struct {
	sp       *spec
	data     []byte
	pos, end int // position, end of the current sequence
	acc      []acc[T]
	budget   int // errors still allowed
	errors   int // errors counted in this chunk
	key      uint64

	last, prev  diag // the latest warnings, for error messages
	lastFail    diag // the cause of the latest counted error
	hadWarnings bool

	// Positions: the chunk's first line (absolute, -1 until known) and the current row.
	lineBase  func() int64
	rowLine   int64 // line of the current row, relative to the chunk
	rowStart  int
	itemStart int // the '|' of the current sample
	row       int // rows read in the chunk (strict duplicate check)
	seqStart  int
	seqLine   int64
	seqIssues int // problems reported in the current sequence (strict)

	// strict, when set, receives every problem instead of the log (Validate).
	strict func(error) bool
	// quiet makes the parser give up (errSequential) at anything it would log or count.
	quiet bool
	// check makes checkValue see every value T does not hold exactly, and every nonzero
	// text that reads as 0.
	check bool
	// cur is the stream of the sample being read; rounded counts, per stream, the values
	// float32 rounded (precRound), nil until one is.
	cur     int
	rounded []roundStat
	scratch []int32 // a sparse sample's indices, sorted to find a repeated one
}

func newParser[T float32 | float64](sp *spec, data []byte, budget int, lineBase func() int64) *parser[T] {
	p := &parser[T]{sp: sp, data: data, budget: budget, lineBase: lineBase}
	p.check = sp.prec != precDouble
	p.acc = make([]acc[T], len(sp.names))
	for i := range p.acc {
		p.acc[i].seqStart = []int64{0}
		p.acc[i].lastRow = -1
		if !sp.dense[i] {
			p.acc[i].sampleStart = []int64{0}
		}
	}
	return p
}

// reserve sizes the buffers for a chunk: a dense stream holds at most dim values per indexed
// sample, and every value takes at least two bytes of text (padding grows the buffer as
// needed); a sparse stream holds as many values per byte as density (values per MiB of text)
// says, the density of the last chunk parsed, or, before any, a share of one value per eight
// bytes. The buffers of mem (a chunk's memory given back, or nil) are used where they are
// large enough.
func (p *parser[T]) reserve(c chunkEntry, density []atomic.Int64, mem []acc[T]) {
	bytes := c.end - c.start
	sparse := 0
	for i := range p.acc {
		if !p.sp.dense[i] {
			sparse++
		}
	}
	for i := range p.acc {
		a := &p.acc[i]
		var m acc[T]
		if i < len(mem) {
			m = mem[i]
		}
		a.seqStart = reuse(m.seqStart, int64(c.sequences)+1)[:1]
		if p.sp.dense[i] {
			n := min(c.samples*int64(p.sp.dims[i]), bytes/2+1)
			a.vals = reuse(m.vals, n)
			continue
		}
		n := bytes / int64(8*sparse)
		if d := density[i].Load(); d > 0 {
			n = bytes*d>>20 + bytes*d>>24 + 64 // a margin of 1/16
		}
		a.vals = reuse(m.vals, n)
		a.idx = reuse(m.idx, n)
		a.sampleStart = reuse(m.sampleStart, c.samples+1)[:1]
	}
}

// reuse returns b emptied when it can hold n elements, else a new slice of capacity n.
// Reusing memory spares the page faults and the zeroing of fresh memory.
func reuse[E any](b []E, n int64) []E {
	if int64(cap(b)) >= n {
		return b[:0]
	}
	return make([]E, 0, n)
}

// memOf returns the memory of a chunk this package parsed, given back (by ReadChunkReuse),
// as buffers for a parser of nstreams streams: nil when c is nil or not such a chunk.
func memOf[T float32 | float64](c *mlfeed.Chunk, nstreams int) []acc[T] {
	if c == nil || len(c.Streams) != nstreams {
		return nil
	}
	var zero T
	et := mlfeed.Float32
	if unsafe.Sizeof(zero) == 8 {
		et = mlfeed.Float64
	}
	mem := make([]acc[T], nstreams)
	for i := range c.Streams {
		d := &c.Streams[i]
		m := &mem[i]
		m.seqStart, m.sampleStart, m.idx = d.SeqStart, d.SampleStart, d.Indices
		b := d.Values.Bytes
		if d.Values.Type == et && cap(b) >= int(unsafe.Sizeof(zero)) &&
			uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(zero) == 0 {
			m.vals = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/int(unsafe.Sizeof(zero)))
		}
	}
	return mem
}

// lineCol returns the 1-based line and column of file offset off, which lies in the current
// sequence.
func (p *parser[T]) lineCol(off int64) (int, int) {
	o := int(off)
	start, line := p.rowStart, p.rowLine
	if o < start {
		start, line = p.seqStart, p.seqLine
	}
	if o > len(p.data) {
		o = len(p.data)
	}
	line += int64(bytes.Count(p.data[start:o], []byte{'\n'}))
	if i := bytes.LastIndexByte(p.data[start:o], '\n'); i >= 0 {
		start += i + 1
	}
	return int(p.lineBase() + line + 1), o - start + 1
}

// errorAt returns a positional error for d with CNTK's message appended.
func (p *parser[T]) errorAt(d *diag, cntk string) error {
	line, col := p.lineCol(d.at())
	msg := d.text()
	if cntk != "" {
		msg += " (CNTK: " + cntk + ")"
	}
	return mlfeed.LineError(p.sp.path, line, col, fmt.Errorf("%w: %s", ErrFormat, msg))
}

// at is the position our own messages use: CNTK reports row and sequence problems after the
// fact, at the next line or the sequence end; we name the line or the sequence start.
func (d *diag) at() int64 {
	if d.own {
		return d.ownPos
	}
	return d.off
}

// note reports d: to the log as CNTK would, or to the strict reporter.
func (p *parser[T]) note(d diag) {
	lvl := d.level()
	if lvl == levelWarning {
		p.hadWarnings = true
		p.prev, p.last = p.last, d
	}
	if p.strict != nil {
		p.report(&d)
		return
	}
	if p.sp.trace >= lvl && p.sp.log != nil {
		if p.quiet {
			panic(abort{errSequential})
		}
		p.logLine(d.cntk(p.sp.file))
	}
}

func (p *parser[T]) logLine(s string) {
	p.sp.logMu.Lock()
	io.WriteString(p.sp.log, s+"\n")
	p.sp.logMu.Unlock()
}

// report passes a problem to the strict reporter. Consequences of problems already reported
// in the sequence, and messages that are not problems, are left out.
func (p *parser[T]) report(d *diag) {
	switch d.kind {
	case dFinished, dExhaustedDense, dExhaustedSparse, dExhaustedUint, dExhaustedRow, dRowFailed, dRowTooMany:
		return
	case dSeqExhausted, dFewerSamples, dTooManySamples:
		if p.seqIssues > 0 {
			return
		}
	}
	p.seqIssues++
	if !p.strict(p.errorAt(d, "")) {
		panic(abort{nil})
	}
}

// fail counts one recoverable error against the budget, as CNTK's IncrementNumberOfErrorsOrDie.
func (p *parser[T]) fail() {
	if p.quiet {
		panic(abort{errSequential})
	}
	p.errors++
	if p.strict != nil {
		return
	}
	cause := p.last
	if cause.kind == dRowFailed {
		cause = p.prev
	}
	p.lastFail = cause
	if p.budget == 0 {
		p.warningNotice()
		panic(abort{p.errorAt(&cause, "Reached the maximum number of allowed errors while reading the input file ("+p.sp.file+").")})
	}
	p.budget--
}

// warningNotice prints CNTK's hint when warnings were generated but not shown.
func (p *parser[T]) warningNotice() {
	if p.hadWarnings && p.sp.trace < levelWarning && p.sp.log != nil {
		p.logLine("A number of warnings were generated while reading input data, to see them please set 'traceLevel' to a value greater or equal to 1.")
	}
}

// sequence parses one indexed sequence: the bytes [q.start, q.end), expecting q.samples rows.
func (p *parser[T]) sequence(q seqInfo) {
	p.pos, p.end = int(q.start), int(q.end)
	p.key = q.key
	p.seqStart, p.seqLine = p.pos, q.line
	p.seqIssues = 0
	for i := range p.acc {
		a := &p.acc[i]
		a.seqN = 0
		a.seqVals = len(a.vals)
	}
	read, expected := int64(0), q.samples
	for rowNumber := int64(1); p.pos < p.end; rowNumber++ {
		p.rowStart, p.rowLine = p.pos, q.line+rowNumber-1
		p.row++
		if p.readRow() {
			read++
		} else {
			p.note(diag{kind: dRowFailed, off: int64(p.pos), a: rowNumber, key: p.key, own: true, ownPos: int64(p.rowStart)})
			p.fail()
		}
	}
	off, here := int64(p.pos), int64(p.seqStart)
	p.hadWarnings = true // CNTK's ShouldWarn() runs here for every sequence, which sets it
	if read < expected {
		p.note(diag{kind: dSeqExhausted, off: off, own: true, ownPos: here, key: p.key, a: read, b: expected})
	}
	empty, dup := false, false
	var longest int64
	for i := range p.acc {
		a := &p.acc[i]
		if a.seqN == 0 {
			if p.quiet {
				panic(abort{errSequential})
			}
			d := diag{kind: dEmptyInput, off: off, own: true, ownPos: here, key: p.key, name: p.sp.names[i]}
			if p.strict != nil {
				p.report(&d)
			} else {
				if p.sp.log != nil {
					p.logLine(d.cntk(p.sp.file))
				}
				empty = true
				if p.last.kind != dEmptyInput {
					p.prev, p.last = p.last, d
				}
			}
		}
		if !p.sp.defines[i] {
			continue
		}
		longest = max(longest, a.seqN)
		if a.seqN > expected {
			dup = true
			p.note(diag{kind: dTooManySamples, off: off, own: true, ownPos: here, key: p.key, name: p.sp.names[i], a: a.seqN, b: expected})
		}
	}
	if empty {
		p.warningNotice()
		d := p.last
		panic(abort{p.errorAt(&d, "Malformed input file. Bailing out.")})
	}
	if dup {
		p.fail()
	} else if longest < expected {
		p.note(diag{kind: dFewerSamples, off: off, own: true, ownPos: here, key: p.key, a: longest, b: expected})
		p.fail()
	}
	if p.sp.trace >= levelInfo {
		p.note(diag{kind: dFinished, off: off, key: p.key, a: read, b: expected})
	}
	for i := range p.acc {
		a := &p.acc[i]
		a.seqStart = append(a.seqStart, a.n)
	}
}

// readRow parses one line, as CNTK's TryReadRow. It reports whether the row counts as read.
func (p *parser[T]) readRow() bool {
	b := p.data
	for p.pos < p.end && isDigit(b[p.pos]) {
		p.pos++
	}
	samples := 0
	for p.pos < p.end {
		c := b[p.pos]
		switch {
		case c == '\n':
			p.pos++
			if samples == 0 {
				p.note(diag{kind: dEmptyRow, off: int64(p.pos), own: true, ownPos: int64(p.rowStart)})
			} else if samples > len(p.acc) {
				p.note(diag{kind: dRowTooMany, off: int64(p.pos), a: int64(samples), b: int64(len(p.acc))})
			}
			return samples > 0
		case c == ' ' || c == '\t':
			p.pos++
		case c < ' ' || c >= 0x80:
			if p.strict != nil && !(c == '\r' && p.pos+1 < len(b) && b[p.pos+1] == '\n') {
				p.note(diag{kind: dStrictByte, off: int64(p.pos), c: c})
			}
			p.pos++
		default:
			if p.sample() {
				samples++
			} else {
				p.skipToNextInput()
			}
		}
	}
	p.note(diag{kind: dExhaustedRow, off: int64(p.pos)})
	return true
}

// skipToNextInput moves to the next '|' or the end of the line.
func (p *parser[T]) skipToNextInput() {
	b := p.data[p.pos:p.end]
	for i, c := range b {
		if c == '|' || c == '\n' {
			p.pos += i
			return
		}
	}
	p.pos = p.end
}

// sample parses one "|name values" item, as CNTK's TryReadSample.
func (p *parser[T]) sample() bool {
	b := p.data
	if b[p.pos] != '|' {
		p.note(diag{kind: dUnexpectedPrefix, off: int64(p.pos), c: b[p.pos]})
		p.fail()
		return false
	}
	p.itemStart = p.pos
	p.pos++
	if p.pos < p.end && b[p.pos] == '#' {
		p.pos++
		return false
	}
	id, ok := p.inputID()
	if !ok {
		return false
	}
	a := &p.acc[id]
	p.cur = id
	if p.strict != nil {
		if a.lastRow == p.row {
			p.note(diag{kind: dStrictDuplicate, off: int64(p.itemStart), name: string(p.sp.aliases[id])})
		}
		a.lastRow = p.row
	}
	if p.sp.dense[id] {
		n := len(a.vals)
		if !p.dense(a, p.sp.dims[id]) {
			a.vals = a.vals[:n]
			p.fail()
			return false
		}
	} else {
		n := len(a.vals)
		if !p.sparse(a, p.sp.dims[id]) || p.repeated(a.idx[n:]) {
			a.vals, a.idx = a.vals[:n], a.idx[:n]
			p.fail()
			return false
		}
		a.sampleStart = append(a.sampleStart, int64(len(a.vals)))
	}
	a.n++
	a.seqN++
	return true
}

// nameStop marks the bytes that end an input name: white space, '|', control bytes and bytes
// outside ASCII.
var nameStop = func() (t [256]bool) {
	for c := range t {
		t[c] = c <= ' ' || c == '|' || c >= 0x80
	}
	return t
}()

// inputID reads an input name and looks it up, as CNTK's TryGetInputId.
func (p *parser[T]) inputID() (int, bool) {
	b := p.data[:p.end]
	start := p.pos
	pos := start
	for pos < len(b) && !nameStop[b[pos]] {
		if pos-start >= p.sp.maxAlias {
			p.pos = pos
			if p.sp.trace >= levelInfo || p.strict != nil {
				p.note(diag{kind: dNameTooLong, off: int64(pos), a: int64(p.sp.maxAlias), name: string(b[start:pos])})
			}
			return 0, false
		}
		pos++
	}
	p.pos = pos
	if pos == len(b) {
		p.note(diag{kind: dExhaustedName, off: int64(pos)})
		p.fail()
		return 0, false
	}
	if pos == start {
		p.note(diag{kind: dInvalidNameChar, off: int64(pos), c: b[pos]})
		p.fail()
		return 0, false
	}
	name := b[start:pos]
	for i, al := range p.sp.aliases {
		if string(al) == string(name) {
			return i, true
		}
	}
	if p.sp.trace >= levelInfo || p.strict != nil {
		p.note(diag{kind: dUnknownInput, off: int64(pos), name: string(name)})
	}
	return 0, false
}

// dense reads a dense sample of dim values, zero-padding a shorter one.
func (p *parser[T]) dense(a *acc[T], dim int) bool {
	b := p.data[:p.end]
	pos := p.pos
	vals := a.vals
	n := 0
	for pos < len(b) {
		c := b[pos]
		if c == ' ' || c == '\t' {
			pos++
			continue
		}
		if c < ' ' || c >= 0x80 || c == '|' {
			p.pos, a.vals = pos, vals
			return p.closeDense(a, n, dim)
		}
		// The common case: short numbers separated by single spaces.
		if q, more := p.denseRun(b, pos, vals); len(more) > len(vals) {
			n += len(more) - len(vals)
			pos, vals = q, more
			continue
		}
		// Then a number that ends before the sequence does.
		v, k, st, short := fastfloat.ScanShort(b[pos:])
		if st != fastfloat.OK || pos+k == len(b) {
			p.pos = pos
			var ok bool
			if v, ok = p.number(); !ok {
				a.vals = vals
				return false
			}
			pos = p.pos
		} else {
			if p.check && !short && (float64(T(v)) != v || v == 0) {
				p.checkValue(b[pos:pos+k], v, pos)
			}
			pos += k
		}
		vals = append(vals, T(v))
		n++
	}
	p.pos, a.vals = pos, vals
	p.note(diag{kind: dExhaustedDense, off: int64(p.pos)})
	return n > 0 && p.closeDense(a, n, dim)
}

// denseRun parses the numbers from b[pos] on while they have fastfloat.Token's short form and
// are separated by single spaces, finding their ends 64 bytes at a time: a number's end then
// does not wait for the number before it to be scanned. It returns where it stopped (a number
// it did not take, or what follows the last one it took, a space) and vals with the values
// appended.
func (p *parser[T]) denseRun(b []byte, pos int, vals []T) (int, []T) {
	for pos+80 <= len(b) {
		s := pos
		for m := fastfloat.Spaces(b[pos:]); m != 0; m &= m - 1 {
			e := pos + bits.TrailingZeros64(m)
			v, short, ok := fastfloat.Token(b, s, e)
			if !ok {
				return s, vals
			}
			if p.check && !short && (float64(T(v)) != v || v == 0) {
				p.checkValue(b[s:e], v, s)
			}
			vals = append(vals, T(v))
			s = e + 1
		}
		if s == pos {
			break
		}
		pos = s
	}
	return pos, vals
}

// sparseRun is denseRun for the index:value pairs of a sparse sample with indices below dim:
// it takes the pairs whose index has one to seven digits and whose value has
// fastfloat.Token's short form, and returns vals and idx with them appended.
func (p *parser[T]) sparseRun(b []byte, pos int, vals []T, idx []int32, dim int) (int, []T, []int32) {
	for pos+80 <= len(b) {
		s := pos
		for m := fastfloat.Spaces(b[pos:]); m != 0; m &= m - 1 {
			e := pos + bits.TrailingZeros64(m)
			ix, n := fastfloat.Digits8(b[s:])
			if n == 0 || n == 8 || b[s+n] != ':' || ix >= uint64(dim) {
				return s, vals, idx
			}
			v, short, ok := fastfloat.Token(b, s+n+1, e)
			if !ok {
				return s, vals, idx
			}
			if p.check && !short && (float64(T(v)) != v || v == 0) {
				p.checkValue(b[s+n+1:e], v, s+n+1)
			}
			vals = append(vals, T(v))
			idx = append(idx, int32(ix))
			s = e + 1
		}
		if s == pos {
			break
		}
		pos = s
	}
	return pos, vals, idx
}

func (p *parser[T]) closeDense(a *acc[T], n, dim int) bool {
	if n > dim {
		p.note(diag{kind: dDenseTooLong, off: int64(p.pos), a: int64(n), b: int64(dim), own: true, ownPos: int64(p.itemStart)})
		return false
	}
	if n < dim {
		p.note(diag{kind: dSparseSuffix, off: int64(p.pos), a: int64(n), b: int64(dim), own: true, ownPos: int64(p.itemStart)})
		for ; n < dim; n++ {
			a.vals = append(a.vals, 0)
		}
	}
	return true
}

// sparse reads a sparse sample of index:value pairs with indices below dim.
func (p *parser[T]) sparse(a *acc[T], dim int) bool {
	b := p.data[:p.end]
	pos, vals, idx := p.pos, a.vals, a.idx
	for pos < len(b) {
		c := b[pos]
		if c == ' ' || c == '\t' {
			pos++
			continue
		}
		if c < ' ' || c >= 0x80 || c == '|' {
			p.pos, a.vals, a.idx = pos, vals, idx
			return true
		}
		// The common case: pairs of short numbers separated by single spaces.
		if q, more, moreIdx := p.sparseRun(b, pos, vals, idx, dim); len(more) > len(vals) {
			pos, vals, idx = q, more, moreIdx
			continue
		}
		// Then up to seven digits, ':' and a number that ends before the sequence.
		if pos+8 <= len(b) {
			ix, n := fastfloat.Digits8(b[pos:])
			if n > 0 && n < 8 && b[pos+n] == ':' && ix < uint64(dim) {
				// A one-digit value, as one-hot and count data hold, needs no scan.
				if e := pos + n + 2; e < len(b) && b[e] <= ' ' && b[e-1]-'0' <= 9 {
					pos = e
					vals = append(vals, T(b[e-1]-'0'))
					idx = append(idx, int32(ix))
					continue
				}
				v, k, st, short := fastfloat.ScanShort(b[pos+n+1:])
				if st == fastfloat.OK && pos+n+1+k < len(b) {
					if p.check && !short && (float64(T(v)) != v || v == 0) {
						p.checkValue(b[pos+n+1:pos+n+1+k], v, pos+n+1)
					}
					pos += n + 1 + k
					vals = append(vals, T(v))
					idx = append(idx, int32(ix))
					continue
				}
			}
		}
		p.pos, a.vals, a.idx = pos, vals, idx
		ix, ok := p.index()
		if !ok {
			return false
		}
		if ix >= uint64(dim) {
			p.note(diag{kind: dSparseIndexRange, off: int64(p.pos), a: int64(ix), b: int64(dim) - 1})
			return false
		}
		if c := b[p.pos]; c != ':' {
			p.note(diag{kind: dIndexDelim, off: int64(p.pos), c: c, a: int64(ix)})
			return false
		}
		p.pos++
		v, ok := p.number()
		if !ok {
			return false
		}
		vals = append(a.vals, T(v))
		idx = append(a.idx, int32(ix))
		pos = p.pos
	}
	p.pos, a.vals, a.idx = pos, vals, idx
	p.note(diag{kind: dExhaustedSparse, off: int64(p.pos)})
	return len(a.vals) > a.seqVals
}

// repeated reports whether a sparse sample's indices, just read from the sample at
// p.itemStart, hold one twice, and notes where. CNTK keeps both values and, packed dense, the
// later wins: one is lost either way, so the sample is refused.
func (p *parser[T]) repeated(idx []int32) bool {
	if !hasRepeat(idx, &p.scratch) {
		return false
	}
	// Find the first index that repeats, and both places, in the sample's text.
	first := map[uint64]int{}
	b := p.data[:p.pos]
	pos := p.itemStart + 1
	for pos < len(b) && !nameStop[b[pos]] {
		pos++
	}
	for pos < len(b) {
		for pos < len(b) && (b[pos] == ' ' || b[pos] == '\t') {
			pos++
		}
		start := pos
		var ix uint64
		for pos < len(b) && isDigit(b[pos]) {
			ix = ix*10 + uint64(b[pos]-'0')
			pos++
		}
		if at, ok := first[ix]; ok && pos > start {
			_, col := p.lineCol(int64(at))
			p.note(diag{kind: dSparseRepeated, off: int64(start), a: int64(ix), b: int64(col)})
			return true
		}
		first[ix] = start
		for pos < len(b) && b[pos] != ' ' && b[pos] != '\t' {
			pos++
		}
	}
	return false // not reached: the indices came from this text
}

// hasRepeat reports whether idx holds a value twice: in one pass when it is increasing, else
// by comparing (short lists) or by sorting a copy in scratch.
func hasRepeat(idx []int32, scratch *[]int32) bool {
	k := 1
	for k < len(idx) && idx[k] > idx[k-1] {
		k++
	}
	if k >= len(idx) {
		return false
	}
	if len(idx) <= 32 {
		for j := range idx {
			if slices.Contains(idx[j+1:], idx[j]) {
				return true
			}
		}
		return false
	}
	*scratch = append((*scratch)[:0], idx...)
	slices.Sort(*scratch)
	for j := 1; j < len(*scratch); j++ {
		if (*scratch)[j] == (*scratch)[j-1] {
			return true
		}
	}
	return false
}

// index reads a sparse index, as CNTK's TryReadUint64.
func (p *parser[T]) index() (uint64, bool) {
	b := p.data
	var v uint64
	start := p.pos
	for p.pos < p.end {
		d := b[p.pos] - '0'
		if d > 9 {
			if p.pos == start {
				p.note(diag{kind: dNoUint, off: int64(p.pos), c: b[p.pos]})
				return 0, false
			}
			return v, true
		}
		if v > (1<<64-1-uint64(d))/10 {
			p.note(diag{kind: dUintOverflow, off: int64(p.pos)})
			return 0, false
		}
		v = v*10 + uint64(d)
		p.pos++
	}
	p.note(diag{kind: dExhaustedUint, off: int64(p.pos)})
	return 0, false
}

// number reads a real number, as CNTK's TryReadRealNumber (the value correctly rounded).
func (p *parser[T]) number() (float64, bool) {
	start := p.pos
	v, n, st, short := fastfloat.ScanShort(p.data[p.pos:p.end])
	p.pos += n
	if st == fastfloat.OK {
		if p.check && !short && (float64(T(v)) != v || v == 0) {
			p.checkValue(p.data[start:p.pos], v, start)
		}
		if p.pos == p.end {
			p.note(diag{kind: dExhaustedRow, off: int64(p.pos)})
		}
		return v, true
	}
	d := diag{off: int64(p.pos)}
	switch st {
	case fastfloat.BadStart:
		d.kind = dFloatStart
	case fastfloat.BadAfterSign:
		d.kind = dFloatSign
	case fastfloat.BadAfterE:
		d.kind = dFloatE
	case fastfloat.BadAfterExpSign:
		d.kind = dFloatExpSign
	default:
		p.note(diag{kind: dExhaustedRow, off: int64(p.pos)})
		d.kind = dFloatInvalidState
	}
	if d.kind != dFloatInvalidState {
		d.c = p.data[p.pos]
	}
	p.note(d)
	return 0, false
}

// chunk assembles the parsed data.
func (p *parser[T]) chunk(seqs int, ids []string) *mlfeed.Chunk {
	c := &mlfeed.Chunk{Sequences: seqs, IDs: ids, Streams: make([]mlfeed.StreamData, len(p.acc))}
	var et mlfeed.ElemType = mlfeed.Float32
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		et = mlfeed.Float64
	}
	for i := range p.acc {
		a := &p.acc[i]
		d := mlfeed.StreamData{SeqStart: a.seqStart, Values: valuesBuffer(a.vals, et)}
		if !p.sp.dense[i] {
			d.SampleStart = a.sampleStart
			d.Indices = a.idx
			if d.Indices == nil {
				d.Indices = []int32{}
			}
		}
		c.Streams[i] = d
	}
	return c
}

// valuesBuffer wraps typed values as a Buffer without copying, its capacity that of v.
func valuesBuffer[T float32 | float64](v []T, et mlfeed.ElemType) mlfeed.Buffer {
	if cap(v) == 0 {
		return mlfeed.Buffer{Type: et, Bytes: []byte{}}
	}
	sz := int(unsafe.Sizeof(v[0]))
	// The capacity goes along, for memOf to reuse it.
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v[:1][0])), cap(v)*sz)
	return mlfeed.Buffer{Type: et, Bytes: b[:len(v)*sz]}
}
