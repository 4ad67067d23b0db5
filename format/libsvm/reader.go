package libsvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/fastfloat"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/nantext"
)

// DefaultChunkSize is the default number of text bytes per chunk.
const DefaultChunkSize = 4 << 20

// maxChunkRecords caps the records of one chunk.
const maxChunkRecords = 1 << 20

// maxIndex is the largest feature index or label a file may use (indices are int32).
const maxIndex = math.MaxInt32 - 1

// ReaderOptions control reading. The zero value is the documented default for every field.
type ReaderOptions struct {
	// FileName names the input in error messages. Open sets it.
	FileName string
	// Base says how the file numbers its features; BaseAuto (the zero value) detects it.
	Base Base
	// Labels says whether labels are single values or lists; LabelsAuto detects it.
	Labels Labels
	// Dim is the features stream's dimension. Zero means the largest index + 1. A file with
	// a larger index is an error.
	Dim int
	// ChunkSize is the target text size of a chunk in bytes; a chunk holds whole lines, at
	// least one record. Zero means DefaultChunkSize.
	ChunkSize int
	// NoMmap reads the file into memory instead of mapping it (Open only).
	NoMmap bool
}

// part is a chunk's place in the text and what the scan counted in it.
type part struct {
	start, end int  // byte range: whole lines
	line       int  // line number of start
	records    int  // non-empty lines
	nnz        int  // feature entries
	labels     int  // labels, in a multi-label file
	comments   bool // whether a line has a comment
}

// Reader reads a LIBSVM file. It implements mlfeed.Source; its methods are safe for
// concurrent use.
type Reader struct {
	name      string
	data      []byte
	parts     []part
	chunks    []mlfeed.ChunkInfo
	schema    mlfeed.Schema
	shift     int // 1 for one-based files
	base      Base
	dim       int
	multi     bool
	hasLabels bool
	hasQID    bool
	labelDim  int
	identity  []int64
	mapped    bool
	closers   closer.Stack
}

// Open opens the named file, mapping it into memory unless opts.NoMmap is set, and scans it.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := ReaderOptions{}
	if opts != nil {
		o = *opts
	}
	o.FileName = name
	rd, mf, err := mmap.Open(name, mmap.Unless(o.NoMmap), func(mf *mmap.File) (*Reader, error) {
		if mf.Region != nil {
			return NewReaderBytes(mf.Bytes(), &o)
		}
		return NewReader(mf, mf.Size, &o)
	})
	if err != nil {
		return nil, err
	}
	if mf.Region == nil { // read into memory
		return rd, mf.Close()
	}
	rd.mapped = true
	rd.closers = append(rd.closers, mf.Close)
	return rd, nil
}

// NewReader reads the size bytes of r into memory and scans them.
func NewReader(r io.ReaderAt, size int64, opts *ReaderOptions) (*Reader, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	data := make([]byte, size)
	if n, err := r.ReadAt(data, 0); n < len(data) {
		return nil, fmt.Errorf("libsvm: reading: %v", err)
	}
	return NewReaderBytes(data, opts)
}

// NewReaderBytes scans the LIBSVM text in data, which the reader keeps (and reads chunks
// from) until Close; data must not change meanwhile.
func NewReaderBytes(data []byte, opts *ReaderOptions) (*Reader, error) {
	if opts == nil {
		opts = &ReaderOptions{}
	}
	rd := &Reader{name: opts.FileName, data: data}
	if opts.Dim < 0 || opts.Dim > maxIndex+1 {
		return nil, fmt.Errorf("%w: dimension %d", ErrTooLarge, opts.Dim)
	}
	if err := rd.scan(opts); err != nil {
		return nil, err
	}
	return rd, nil
}

// isSpace marks the bytes Python's bytes.split() splits on, except the newline, which ends
// lines.
var isSpace = [256]bool{' ': true, '\t': true, '\r': true, '\v': true, '\f': true}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

func tokenEnd(b []byte, i int) int {
	for i < len(b) && !isSpace[b[i]] {
		i++
	}
	return i
}

// scanStats are what the scan finds over the whole file.
type scanStats struct {
	minIdx, maxIdx int
	nnz            int
	labelLines     int
	noLabel        pos // first line without a label
	comma          pos // first label list
	notClass       pos // first label that is not a non-negative integer
	maxLabel       int
	qidLines       int
	noQID, withQID pos
	zeroIdx        pos // first index 0
	records        int
}

// pos is a line and column; line 0 means none.
type pos struct{ line, col int }

func (p *pos) set(line, col int) {
	if p.line == 0 {
		p.line, p.col = line, col
	}
}

func (rd *Reader) errAt(line, col int, err error) error {
	return mlfeed.LineError(rd.name, line, col, err)
}

// lines calls fn for each line of data with its line number, its offset in data, and, when
// comments is set, the comment removed (cut reports whether there was one). The next '#' is
// searched for once ahead rather than in every line, so a file without comments costs one
// search.
func lines(data []byte, line int, comments bool, fn func(text []byte, line, at int, cut bool) error) error {
	hash := len(data) // the next '#' at or after p, or len(data)
	if comments {
		if h := bytes.IndexByte(data, '#'); h >= 0 {
			hash = h
		}
	}
	for p := 0; p < len(data); line++ {
		e := bytes.IndexByte(data[p:], '\n')
		next := p + e + 1
		if e < 0 {
			e, next = len(data)-p, len(data)
		}
		text := data[p : p+e]
		cut := false
		if hash < p+e {
			text, cut = data[p:hash], true
			hash = len(data)
			if h := bytes.IndexByte(data[next:], '#'); h >= 0 {
				hash = next + h
			}
		}
		if err := fn(text, line, p, cut); err != nil {
			return err
		}
		p = next
	}
	return nil
}

// scan finds the records, chunks, indices and label kinds of the whole file.
func (rd *Reader) scan(opts *ReaderOptions) error {
	chunkSize := opts.ChunkSize
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	s := scanStats{minIdx: math.MaxInt}
	cur := part{line: 1}
	err := lines(rd.data, 1, true, func(text []byte, line, at int, cut bool) error {
		cur.comments = cur.comments || cut
		i := skipSpace(text, 0)
		if i < len(text) {
			if err := rd.scanRecord(text, i, line, &s, &cur); err != nil {
				return err
			}
		}
		if end := at + len(text); cur.records > 0 && (end-cur.start >= chunkSize || cur.records >= maxChunkRecords) {
			nl := bytes.IndexByte(rd.data[end:], '\n')
			cur.end = len(rd.data)
			if nl >= 0 {
				cur.end = end + nl + 1
			}
			rd.parts = append(rd.parts, cur)
			cur = part{start: cur.end, end: cur.end, line: line + 1}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cur.records > 0 {
		cur.end = len(rd.data)
		rd.parts = append(rd.parts, cur)
	}
	return rd.resolve(opts, &s)
}

// scanRecord checks one record's syntax, parsing indices and labels but not values.
func (rd *Reader) scanRecord(text []byte, i, line int, s *scanStats, cur *part) error {
	s.records++
	cur.records++
	j := tokenEnd(text, i)
	tok := text[i:j]
	if bytes.IndexByte(tok, ':') < 0 {
		s.labelLines++
		n := 1
		for k := 0; k < len(tok); k++ {
			if tok[k] == ',' {
				s.comma.set(line, i+k+1)
				n++
			}
		}
		cur.labels += n
		for k := 0; k < len(tok); {
			e := k
			for e < len(tok) && tok[e] != ',' {
				e++
			}
			v, ok := parseFloat(tok[k:e])
			if !ok {
				return rd.errAt(line, i+k+1, fmt.Errorf("%w: label %q is not a number", ErrFormat, tok[k:e]))
			}
			if v < 0 || v > maxIndex || v != math.Trunc(v) {
				s.notClass.set(line, i+k+1)
			} else {
				s.maxLabel = max(s.maxLabel, int(v))
			}
			k = e + 1
			if e == len(tok)-1 {
				return rd.errAt(line, i+e+2, fmt.Errorf("%w: label list ends in ','", ErrFormat))
			}
		}
		i = skipSpace(text, j)
	} else {
		s.noLabel.set(line, i+1)
	}
	if bytes.HasPrefix(text[i:], qidPrefix) {
		j = tokenEnd(text, i)
		if _, err := strconv.ParseInt(string(text[i+4:j]), 10, 64); err != nil {
			return rd.errAt(line, i+5, fmt.Errorf("%w: qid %q is not a 64-bit integer", ErrFormat, text[i+4:j]))
		}
		s.qidLines++
		s.withQID.set(line, i+1)
		i = skipSpace(text, j)
	} else {
		s.noQID.set(line, i+1)
	}
	if n, last, ok := lastIndex(text, i); ok {
		// Indices increase within a line (decode checks it): the first is the smallest, the
		// last the largest, and the entries are counted by their colons.
		first, k, err := rd.index(text, i, line, -1)
		if err != nil {
			return err
		}
		if k == len(text) || isSpace[text[k]] {
			return rd.errAt(line, k+1, fmt.Errorf("%w: index %d has no value", ErrFormat, first))
		}
		if first == 0 {
			s.zeroIdx.set(line, i+1)
		}
		s.minIdx = min(s.minIdx, first)
		s.maxIdx = max(s.maxIdx, first, last)
		cur.nnz += n
		s.nnz += n
		return nil
	}
	prev := -1
	for i < len(text) {
		idx, k, err := rd.index(text, i, line, prev)
		if err != nil {
			return err
		}
		if idx == 0 {
			s.zeroIdx.set(line, i+1)
		}
		s.minIdx = min(s.minIdx, idx)
		s.maxIdx = max(s.maxIdx, idx)
		prev = idx
		if k == len(text) || isSpace[text[k]] {
			return rd.errAt(line, k+1, fmt.Errorf("%w: index %d has no value", ErrFormat, idx))
		}
		cur.nnz++
		s.nnz++
		i = nextIndex(text, k)
	}
	return nil
}

// lastIndex finds the last index of the entries text[i:], and counts the entries by their
// colons, with vectorized searches. ok is false when the last entry does not look like
// "<digits>:": then the caller walks the entries one by one.
func lastIndex(text []byte, i int) (n, last int, ok bool) {
	c := bytes.LastIndexByte(text, ':')
	if c <= i {
		return 0, 0, false
	}
	s := c
	for s > i && text[s-1]-'0' <= 9 {
		s--
	}
	if s == c || c-s > 10 || s > i && !isSpace[text[s-1]] {
		return 0, 0, false
	}
	for _, d := range text[s:c] {
		last = last*10 + int(d-'0')
	}
	if last > maxIndex {
		return 0, 0, false
	}
	return bytes.Count(text[i:], colon), last, true
}

var colon = []byte{':'}

// nextIndex returns where the token after the value at text[k:] starts, or len(text). It
// jumps to the next ':' (a vectorized search) and steps back over the next index's digits;
// when the bytes do not have that shape it walks the value byte by byte, so that what follows
// is checked by the caller as usual. The scan is lenient with values: decode checks them.
func nextIndex(text []byte, k int) int {
	c := bytes.IndexByte(text[k:], ':')
	if c < 0 {
		return skipSpace(text, tokenEnd(text, k))
	}
	s := k + c
	for s > k && text[s-1]-'0' <= 9 {
		s--
	}
	if s-1 > k && isSpace[text[s-1]] && s < k+c {
		// The value is text[k : s-1] up to its trailing spaces. That it is one number is
		// checked when the chunk is parsed.
		return s
	}
	return skipSpace(text, tokenEnd(text, k))
}

var qidPrefix = []byte("qid:")

// index parses "<digits>:" at text[i:], checking that it exceeds prev, and returns the index
// and the offset of the value.
func (rd *Reader) index(text []byte, i, line, prev int) (idx, k int, err error) {
	k = i
	for k < len(text) && text[k]-'0' <= 9 {
		if idx > maxIndex {
			return 0, 0, rd.errAt(line, i+1, fmt.Errorf("%w: index larger than %d", ErrRange, maxIndex))
		}
		idx = idx*10 + int(text[k]-'0')
		k++
	}
	if k == i || k == len(text) || text[k] != ':' {
		e := tokenEnd(text, i)
		if k == i && text[i] == '-' {
			return 0, 0, rd.errAt(line, i+1, fmt.Errorf("%w: negative index in %q", ErrFormat, text[i:e]))
		}
		return 0, 0, rd.errAt(line, k+1, fmt.Errorf("%w: want index:value, found %q", ErrFormat, text[i:e]))
	}
	if idx > maxIndex {
		return 0, 0, rd.errAt(line, i+1, fmt.Errorf("%w: index larger than %d", ErrRange, maxIndex))
	}
	if idx <= prev {
		return 0, 0, rd.errAt(line, i+1, fmt.Errorf("%w: index %d after %d; indices must increase within a line", ErrFormat, idx, prev))
	}
	return idx, k + 1, nil
}

// parseFloat parses a whole token as a float64: the fast path, else a NaN in package
// nantext's forms (nan, -nan, nan(0xM), bit for bit), else strconv (which also takes inf, as
// Python's float() does).
func parseFloat(tok []byte) (float64, bool) {
	if v, ok := fastfloat.Parse(tok); ok {
		return v, true
	}
	if v, ok := nantext.Parse(tok); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// resolve settles the base, the dimension and the streams from what the scan found.
func (rd *Reader) resolve(opts *ReaderOptions, s *scanStats) error {
	rd.base = opts.Base
	switch opts.Base {
	case BaseAuto:
		if s.nnz > 0 && s.minIdx > 0 {
			rd.shift = 1
		}
	case BaseOne:
		if s.zeroIdx.line > 0 {
			return rd.errAt(s.zeroIdx.line, s.zeroIdx.col, fmt.Errorf("%w: index 0 in a one-based file", ErrFormat))
		}
		rd.shift = 1
	}
	if rd.base == BaseAuto {
		rd.base = BaseZero
		if rd.shift == 1 {
			rd.base = BaseOne
		}
	}
	rd.dim = 1 // as scikit-learn: the largest index + 1, or 1 without any
	if s.nnz > 0 {
		rd.dim = s.maxIdx - rd.shift + 1
	}
	if opts.Dim > 0 {
		if opts.Dim < rd.dim {
			return fmt.Errorf("%s: %w: dimension %d is set, but the file has index %d (%s-based)", rd.name, ErrRange, opts.Dim, s.maxIdx, rd.base)
		}
		rd.dim = opts.Dim
	}
	switch opts.Labels {
	case LabelsAuto:
		rd.multi = s.comma.line > 0 || s.noLabel.line > 0 && s.labelLines > 0
		rd.hasLabels = s.labelLines > 0
	case LabelsSingle:
		if s.noLabel.line > 0 {
			return rd.errAt(s.noLabel.line, s.noLabel.col, fmt.Errorf("%w: line has no label", ErrFormat))
		}
		if s.comma.line > 0 {
			return rd.errAt(s.comma.line, s.comma.col, fmt.Errorf("%w: a label list in a single-label file", ErrFormat))
		}
		rd.hasLabels = true
	case LabelsMulti:
		rd.multi, rd.hasLabels = true, true
	}
	if rd.multi && s.notClass.line > 0 {
		return rd.errAt(s.notClass.line, s.notClass.col, fmt.Errorf("%w: multi-label labels must be non-negative integers (the multi-hot stream's indices)", ErrFormat))
	}
	if rd.multi && s.labelLines > 0 {
		rd.labelDim = s.maxLabel + 1
	}
	if s.qidLines > 0 && s.qidLines < s.records {
		return rd.errAt(s.noQID.line, s.noQID.col, fmt.Errorf("%w: line has no qid, but line %d has one; qid must be on every line or none", ErrFormat, s.withQID.line))
	}
	rd.hasQID = s.qidLines > 0
	if rd.hasLabels {
		st := mlfeed.Stream{Name: LabelsName, Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 1}
		if rd.multi {
			st.Storage, st.Dim = mlfeed.Sparse, rd.labelDim
		}
		rd.schema.Streams = append(rd.schema.Streams, st)
	}
	rd.schema.Streams = append(rd.schema.Streams, mlfeed.Stream{Name: FeaturesName, Storage: mlfeed.Sparse, Type: mlfeed.Float64, Dim: rd.dim})
	if rd.hasQID {
		rd.schema.Streams = append(rd.schema.Streams, mlfeed.Stream{Name: QIDName, Storage: mlfeed.Dense, Type: mlfeed.Int64, Dim: 1})
	}
	most := 0
	for _, p := range rd.parts {
		rd.chunks = append(rd.chunks, mlfeed.ChunkInfo{Sequences: p.records, Samples: int64(p.records)})
		most = max(most, p.records)
	}
	rd.identity = make([]int64, most+1)
	for k := range rd.identity {
		rd.identity[k] = int64(k)
	}
	return nil
}

// Schema returns the streams: labels (when the file has any), features, and qid (when used).
func (rd *Reader) Schema() mlfeed.Schema { return rd.schema }

// Chunks returns the chunk table: whole lines, about ReaderOptions.ChunkSize bytes each.
func (rd *Reader) Chunks() []mlfeed.ChunkInfo { return rd.chunks }

// Base returns the base the file was read with: BaseZero or BaseOne.
func (rd *Reader) Base() Base { return rd.base }

// Details reports the detected base and label kind.
func (rd *Reader) Details() map[string]any {
	labels := "none"
	switch {
	case rd.multi:
		labels = "multi-label"
	case rd.hasLabels:
		labels = "single"
	}
	return map[string]any{"index_base": rd.base.String(), "labels": labels, "qid": rd.hasQID, "mmap": rd.mapped}
}

// ReadChunk parses chunk i.
func (rd *Reader) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	return rd.ReadChunkReuse(ctx, i, nil)
}

// ReadChunkReuse parses chunk i into the memory of prev when it is large enough; prev is a
// chunk an earlier call returned that the caller no longer uses, or nil.
func (rd *Reader) ReadChunkReuse(ctx context.Context, i int, prev *mlfeed.Chunk) (_ *mlfeed.Chunk, err error) {
	if rd.mapped {
		defer mmap.Recover(mmap.Catch(), &err) // the mapped file may shrink meanwhile
	}
	if i < 0 || i >= len(rd.parts) {
		return nil, fmt.Errorf("libsvm: chunk %d outside [0, %d)", i, len(rd.parts))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &rd.parts[i]
	ns := len(rd.schema.Streams)
	c := prev
	if c == nil || len(c.Streams) != ns {
		c = &mlfeed.Chunk{Streams: make([]mlfeed.StreamData, ns)}
	}
	c.Sequences, c.IDs = p.records, nil
	seq := rd.identity[: p.records+1 : p.records+1]
	k := 0
	var lab, feat, qid *mlfeed.StreamData
	if rd.hasLabels {
		lab = &c.Streams[k]
		k++
		if rd.multi {
			reuseSparse(lab, p.records, p.labels)
		} else {
			*lab = mlfeed.StreamData{Values: reuseBuffer(lab.Values, mlfeed.Float64, p.records)}
		}
		lab.SeqStart = seq
	}
	feat = &c.Streams[k]
	k++
	reuseSparse(feat, p.records, p.nnz)
	feat.SeqStart = seq
	if rd.hasQID {
		qid = &c.Streams[k]
		*qid = mlfeed.StreamData{SeqStart: seq, Values: reuseBuffer(qid.Values, mlfeed.Int64, p.records)}
	}
	if err = rd.decode(p, lab, feat, qid); err != nil {
		return nil, err
	}
	return c, nil
}

func reuseBuffer(b mlfeed.Buffer, t mlfeed.ElemType, n int) mlfeed.Buffer {
	if b.Type == t && cap(b.Bytes) >= n*t.Size() {
		return mlfeed.Buffer{Type: t, Bytes: b.Bytes[:n*t.Size()]}
	}
	return mlfeed.NewBuffer(t, n)
}

func reuseSparse(d *mlfeed.StreamData, samples, nnz int) {
	ss := d.SampleStart
	if cap(ss) < samples+1 {
		ss = make([]int64, samples+1)
	}
	ix := d.Indices
	if cap(ix) < nnz {
		ix = make([]int32, nnz)
	}
	*d = mlfeed.StreamData{SampleStart: ss[:samples+1], Indices: ix[:nnz], Values: reuseBuffer(d.Values, mlfeed.Float64, nnz)}
}

// decode parses the records of p into the streams, which have room for what the scan counted.
func (rd *Reader) decode(p *part, lab, feat, qid *mlfeed.StreamData) error {
	changed := fmt.Errorf("libsvm: %s changed since it was opened", rd.name)
	fv := feat.Values.Float64s()
	fi := feat.Indices
	fs := feat.SampleStart
	var lv []float64
	var qi []int64
	var li []int32
	if lab != nil {
		lv = lab.Values.Float64s()
		li = lab.Indices
	}
	if qid != nil {
		qi = qid.Values.Int64s()
	}
	rec, nz, nl := 0, 0, 0
	shift := rd.shift
	dim := rd.dim
	err := lines(rd.data[p.start:p.end], p.line, p.comments, func(text []byte, line, _ int, _ bool) error {
		i := skipSpace(text, 0)
		if i == len(text) {
			return nil
		}
		if rec >= p.records {
			return changed
		}
		j := tokenEnd(text, i)
		hasLabel := bytes.IndexByte(text[i:j], ':') < 0
		if lab != nil {
			if rd.multi {
				lab.SampleStart[rec] = int64(nl)
				if hasLabel {
					first := nl
					for k := i; k < j; {
						e := k
						for e < j && text[e] != ',' {
							e++
						}
						v, ok := parseFloat(text[k:e])
						if !ok || v < 0 || v > maxIndex || v != math.Trunc(v) {
							return rd.errAt(line, k+1, fmt.Errorf("%w: label %q is not a class index", ErrFormat, text[k:e]))
						}
						if nl >= len(li) {
							return changed
						}
						li[nl] = int32(v)
						lv[nl] = 1
						nl++
						k = e + 1
					}
					slices.Sort(li[first:nl])
					w := first
					for r := first; r < nl; r++ {
						if r == first || li[r] != li[w-1] {
							li[w] = li[r]
							w++
						}
					}
					nl = w
				}
			} else {
				if !hasLabel {
					return rd.errAt(line, i+1, fmt.Errorf("%w: line has no label", ErrFormat))
				}
				v, ok := parseFloat(text[i:j])
				if !ok {
					return rd.errAt(line, i+1, fmt.Errorf("%w: label %q is not a number", ErrFormat, text[i:j]))
				}
				lv[rec] = v
			}
		}
		if hasLabel {
			i = skipSpace(text, j)
		}
		if bytes.HasPrefix(text[i:], qidPrefix) {
			j = tokenEnd(text, i)
			v, err := strconv.ParseInt(string(text[i+4:j]), 10, 64)
			if err != nil || qi == nil {
				return changed
			}
			qi[rec] = v
			i = skipSpace(text, j)
		} else if qi != nil {
			return changed
		}
		fs[rec] = int64(nz)
		prev := -1
		for i < len(text) {
			idx, k := 0, i
			for k < len(text) && text[k]-'0' <= 9 && k-i < 10 {
				idx = idx*10 + int(text[k]-'0')
				k++
			}
			if k == i || k == len(text) || text[k] != ':' || idx > maxIndex || idx <= prev {
				// Not the common short form: the careful parser says what is wrong, if anything.
				var err error
				if idx, k, err = rd.index(text, i, line, prev); err != nil {
					return err
				}
			} else {
				k++
			}
			if idx-shift < 0 || idx-shift >= dim || nz >= len(fi) {
				// More or larger indices than the scan found: the scan reads only a line's
				// first and last index, so the line's indices do not increase further on.
				return rd.lineError(text, i, line, prev, changed)
			}
			prev = idx
			idx -= shift
			v, n, st := scanValue(text[k:])
			e := k + n
			if st != fastfloat.OK || e < len(text) && !isSpace[text[e]] {
				e = tokenEnd(text, k)
				var ok bool
				if v, ok = parseFloat(text[k:e]); !ok {
					return rd.errAt(line, k+1, fmt.Errorf("%w: value %q is not a number", ErrFormat, text[k:e]))
				}
			}
			fi[nz] = int32(idx)
			fv[nz] = v
			nz++
			i = skipSpace(text, e)
		}
		rec++
		return nil
	})
	if err != nil {
		return err
	}
	if rec != p.records || nz != p.nnz {
		return changed
	}
	fs[rec] = int64(nz)
	if lab != nil && rd.multi {
		lab.SampleStart[rec] = int64(nl)
		lab.Indices = li[:nl]
		lab.Values = lab.Values.Slice(0, nl)
	}
	return nil
}

// lineError returns the error of the first entry from text[i:] that is not a valid index
// above prev, or err when they all are.
func (rd *Reader) lineError(text []byte, i, line, prev int, err error) error {
	for i < len(text) {
		idx, k, e := rd.index(text, i, line, prev)
		if e != nil {
			return e
		}
		prev = idx
		i = skipSpace(text, tokenEnd(text, k))
	}
	return err
}

// SequenceLengths returns the length of each sequence of chunk i: all ones.
func (rd *Reader) SequenceLengths(i int) ([]int64, error) {
	if i < 0 || i >= len(rd.parts) {
		return nil, fmt.Errorf("libsvm: chunk %d outside [0, %d)", i, len(rd.parts))
	}
	return mlfeed.Ones(rd.parts[i].records), nil
}

// Close releases the mapping and the file.
func (rd *Reader) Close() error {
	return rd.closers.Close()
}
