package mtx

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/internal/countsort"
	"github.com/mlfeed/mlfeed/internal/nantext"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/sniff"
)

// ReadFile reads the Matrix Market file name (gzip-compressed files are recognized by their
// magic bytes) on the calling goroutine.
func ReadFile(name string) (*binsparse.Matrix, error) {
	return ReadFileContext(context.Background(), name)
}

// ReadFileContext is ReadFile with the entries of a large coordinate file parsed in pieces,
// as tasks of the scheduler ctx carries (internal/sched: on its idle threads), and with
// cancellation through ctx.
func ReadFileContext(ctx context.Context, name string) (*binsparse.Matrix, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadContext(ctx, f, name)
}

// Read reads a Matrix Market file from r (plain or gzip-compressed) on the calling goroutine;
// name is used in error messages.
func Read(r io.Reader, name string) (*binsparse.Matrix, error) {
	return ReadContext(context.Background(), r, name)
}

// ReadContext is Read with the entries parsed as tasks of the scheduler ctx carries (see
// ReadFileContext).
func ReadContext(ctx context.Context, r io.Reader, name string) (*binsparse.Matrix, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, _, err := parse(ctx, data, name, false)
	return m, err
}

// ReadHeader reads the banner, comments and size line of the file name without its entries.
func ReadHeader(name string) (*Header, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, _, err := sniff.Gunzip(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrFormat, err)
	}
	defer r.Close()
	// The header is short; 1 MiB holds any real one (comments included).
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	_, h, err := parse(context.Background(), data, name, true)
	return h, err
}

func readAll(r io.Reader) ([]byte, error) {
	br := &peekReader{r: r}
	head, err := br.peek(2)
	if err != nil && len(head) == 0 {
		return nil, fmt.Errorf("%w: empty file", ErrFormat)
	}
	if sniff.IsGzip(head) {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		return io.ReadAll(z)
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil && st.Size() >= pos {
				// Read a regular file in one piece: the peeked bytes, then the rest.
				buf := make([]byte, int(st.Size()-pos)+len(br.head))
				n := copy(buf, br.head)
				m, err := io.ReadFull(f, buf[n:])
				return buf[:n+m], ignoreEOF(err)
			}
		}
	}
	return io.ReadAll(br)
}

func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// peekReader lets readAll look at the first bytes of a reader and then read all of it.
type peekReader struct {
	r    io.Reader
	head []byte
}

func (p *peekReader) peek(n int) ([]byte, error) {
	p.head = make([]byte, n)
	k, err := io.ReadFull(p.r, p.head)
	p.head = p.head[:k]
	return p.head, err
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// scanner walks the lines of the data.
type scanner struct {
	data []byte
	pos  int
	line int
	name string
}

// next returns the next line without its end of line; ok is false at the end.
func (s *scanner) next() (line []byte, ok bool) {
	if s.pos >= len(s.data) {
		return nil, false
	}
	s.line++
	rest := s.data[s.pos:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		line, s.pos = rest, len(s.data)
	} else {
		line, s.pos = rest[:i], s.pos+i+1
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, true
}

func (s *scanner) errorf(col int, sentinel error, format string, args ...any) error {
	return mlfeed.LineError(s.name, s.line, col, fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...))
}

// fields splits a line at blanks into at most len(out) fields; n is the number found, and
// more reports that the line holds further fields.
func fields(line []byte, out [][]byte, cols []int) (n int, more bool) {
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			return n, false
		}
		if n == len(out) {
			return n, true
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		out[n], cols[n] = line[i:j], i+1
		n++
		i = j
	}
}

func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// parseIndex parses a positive decimal integer.
func parseIndex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func parseInt(b []byte) (int64, bool) {
	if len(b) > 0 && len(b) < 19 {
		neg := b[0] == '-'
		d := b
		if neg || b[0] == '+' {
			d = b[1:]
		}
		if v, ok := parseIndex(d); ok {
			if neg {
				v = -v
			}
			return v, true
		}
	}
	v, err := strconv.ParseInt(str(b), 10, 64)
	return v, err == nil
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseFloat parses a decimal number. Plain decimals of at most 15 digits without an exponent
// take an exact fast path (the integer mantissa and the power of ten are both exact, so one
// correctly rounded division gives the correctly rounded result); everything else goes to
// strconv.ParseFloat.
// inRange reports whether x, read from tok, is the value tok states to float64's precision:
// not an infinity tok does not spell ("inf", "infinity", any case and sign), nor 0 from a
// nonzero mantissa.
func inRange(tok []byte, x float64) bool {
	switch {
	case math.IsInf(x, 0):
		t := strings.ToLower(strings.TrimLeft(str(tok), "+-"))
		return t == "inf" || t == "infinity"
	case x == 0:
		for _, c := range tok {
			if c == 'e' || c == 'E' {
				break
			}
			if c >= '1' && c <= '9' {
				return false
			}
		}
	}
	return true
}

func parseFloat(b []byte) (float64, bool) {
	if len(b) > 0 && len(b) <= 17 {
		d := b
		neg := d[0] == '-'
		if neg || d[0] == '+' {
			d = d[1:]
		}
		var mant uint64
		digits, frac, dot := 0, 0, false
		ok := len(d) > 0
		for _, c := range d {
			switch {
			case c >= '0' && c <= '9':
				mant = mant*10 + uint64(c-'0')
				digits++
				if dot {
					frac++
				}
			case c == '.' && !dot:
				dot = true
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && digits > 0 && digits <= 15 {
			v := float64(mant) / pow10[frac]
			if neg {
				v = -v
			}
			return v, true
		}
	}
	if v, ok := nantext.Parse(b); ok {
		return v, true // strconv's NaN has other bits than nan's
	}
	v, err := strconv.ParseFloat(str(b), 64)
	if err != nil {
		// Out-of-range values saturate to ±Inf, as C's strtod does; inRange then refuses them.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// parse reads the header and, unless headerOnly, the entries.
func parse(ctx context.Context, data []byte, name string, headerOnly bool) (*binsparse.Matrix, *Header, error) {
	s := &scanner{data: data, name: name}
	line, ok := s.next()
	if !ok {
		return nil, nil, s.errorf(0, ErrFormat, "empty file")
	}
	ban := strings.Fields(strings.ToLower(string(line)))
	if len(ban) == 0 || ban[0] != strings.ToLower(banner) {
		return nil, nil, s.errorf(1, ErrFormat, "no %s banner", banner)
	}
	if len(ban) != 5 {
		return nil, nil, s.errorf(1, ErrFormat, "banner needs: %s matrix coordinate|array real|integer|complex|pattern general|symmetric|skew-symmetric|hermitian", banner)
	}
	h := &Header{Format: ban[2], Field: ban[3], Symmetry: ban[4]}
	if ban[1] != "matrix" {
		return nil, nil, s.errorf(1, ErrUnsupported, "object %q (only matrix is supported)", ban[1])
	}
	switch {
	case h.Format != "coordinate" && h.Format != "array":
		return nil, nil, s.errorf(1, ErrFormat, "format %q is not coordinate or array", h.Format)
	case h.Field != "real" && h.Field != "integer" && h.Field != "complex" && h.Field != "pattern" && h.Field != "double":
		return nil, nil, s.errorf(1, ErrFormat, "field %q is not real, integer, complex or pattern", h.Field)
	case h.Symmetry != "general" && h.Symmetry != "symmetric" && h.Symmetry != "skew-symmetric" && h.Symmetry != "hermitian":
		return nil, nil, s.errorf(1, ErrFormat, "symmetry %q is not general, symmetric, skew-symmetric or hermitian", h.Symmetry)
	case h.Field == "pattern" && h.Format == "array":
		return nil, nil, s.errorf(1, ErrFormat, "an array file cannot be pattern")
	case h.Symmetry == "hermitian" && h.Field != "complex":
		return nil, nil, s.errorf(1, ErrFormat, "a hermitian matrix must be complex")
	}
	if h.Field == "double" {
		h.Field = "real"
	}
	var size []byte
	for {
		line, ok = s.next()
		if !ok {
			return nil, nil, s.errorf(0, ErrTruncated, "no size line")
		}
		if len(line) > 0 && line[0] == '%' {
			h.Comments = append(h.Comments, string(line))
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			size = line
			break
		}
	}
	var f [3][]byte
	var c [3]int
	n, more := fields(size, f[:], c[:])
	want := 3
	if h.Format == "array" {
		want = 2
	}
	if h.Format == "coordinate" && n == 2 && !more {
		// One dimension: a vector ("length entries"), as Finch writes them.
		if h.Symmetry != "general" {
			return nil, nil, s.errorf(1, ErrFormat, "a vector (a size line of length and entries) must be general, not %s", h.Symmetry)
		}
		h.Vector, want = true, 2
	}
	if n != want || more {
		return nil, nil, s.errorf(1, ErrFormat, "size line needs %d integers", want)
	}
	dims := make([]int64, n)
	for i := 0; i < n; i++ {
		v, ok := parseIndex(f[i])
		if !ok {
			return nil, nil, s.errorf(c[i], ErrFormat, "size %q is not a non-negative integer", f[i])
		}
		dims[i] = v
	}
	h.Rows, h.Cols = dims[0], dims[1]
	if h.Vector {
		h.Cols, h.Entries = 1, dims[1]
	}
	if h.Symmetry != "general" && h.Rows != h.Cols {
		return nil, nil, s.errorf(1, ErrFormat, "a %s matrix must be square, not %dx%d", h.Symmetry, h.Rows, h.Cols)
	}
	switch {
	case h.Vector:
	case h.Format == "coordinate":
		h.Entries = dims[2]
	default:
		switch h.Symmetry {
		case "general":
			if h.Cols != 0 && h.Rows > math.MaxInt64/h.Cols {
				return nil, nil, s.errorf(1, ErrTooLarge, "%dx%d values", h.Rows, h.Cols)
			}
			h.Entries = h.Rows * h.Cols
		case "skew-symmetric":
			h.Entries = h.Rows * (h.Rows - 1) / 2
		default:
			h.Entries = h.Rows * (h.Rows + 1) / 2
		}
	}
	if headerOnly {
		return nil, h, nil
	}
	// Every entry takes at least two bytes ("1\n"); refuse claims the data cannot hold.
	if rest := int64(len(data) - s.pos); h.Entries > rest/2+1 {
		return nil, nil, s.errorf(1, ErrTooLarge, "the size line claims %d entries, the remaining %d bytes cannot hold them", h.Entries, rest)
	}
	var m *binsparse.Matrix
	var err error
	switch {
	case h.Vector:
		m, err = readVector(s, h)
	case h.Format == "coordinate":
		m, err = readCoordinate(ctx, s, h)
	default:
		m, err = readArray(s, h)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(h.Comments) > 0 {
		js, _ := json.Marshal(strings.Join(h.Comments, "\n"))
		m.Descriptor.User = map[string]json.RawMessage{"comment": js}
	}
	return m, h, nil
}

// values gathers values of the header's field.
type values struct {
	field string
	f     []float64 // real; complex as (re, im) pairs
	i     []int64   // integer
}

func (v *values) parse(s *scanner, f [][]byte, c []int) error {
	switch v.field {
	case "real":
		x, ok := parseFloat(f[0])
		if !ok {
			return s.errorf(c[0], ErrFormat, "value %q is not a real number", f[0])
		}
		if !inRange(f[0], x) {
			return s.errorf(c[0], ErrRange, "value %q is outside float64's range", f[0])
		}
		v.f = append(v.f, x)
	case "integer":
		x, ok := parseInt(f[0])
		if !ok {
			return s.errorf(c[0], ErrFormat, "value %q is not an integer", f[0])
		}
		v.i = append(v.i, x)
	case "complex":
		re, ok := parseFloat(f[0])
		if !ok {
			return s.errorf(c[0], ErrFormat, "real part %q is not a number", f[0])
		}
		im, ok := parseFloat(f[1])
		if !ok {
			return s.errorf(c[1], ErrFormat, "imaginary part %q is not a number", f[1])
		}
		if !inRange(f[0], re) {
			return s.errorf(c[0], ErrRange, "real part %q is outside float64's range", f[0])
		}
		if !inRange(f[1], im) {
			return s.errorf(c[1], ErrRange, "imaginary part %q is outside float64's range", f[1])
		}
		v.f = append(v.f, re, im)
	}
	return nil
}

func (v *values) count() int {
	return map[string]int{"real": 1, "integer": 1, "complex": 2, "pattern": 0}[v.field]
}

// mirror turns the value at i into the value of the transposed position (negated for
// skew-symmetric, conjugated for hermitian).
func (v *values) mirror(i int, symmetry string) {
	switch {
	case symmetry == "skew-symmetric" && v.field == "integer":
		v.i[i] = -v.i[i]
	case symmetry == "skew-symmetric" && v.field == "real":
		v.f[i] = -v.f[i]
	case symmetry == "skew-symmetric" && v.field == "complex":
		v.f[2*i], v.f[2*i+1] = -v.f[2*i], -v.f[2*i+1]
	case symmetry == "hermitian":
		v.f[2*i+1] = -v.f[2*i+1]
	}
}

// buffer returns the values in order perm (nil: as read) as a buffer of the Binsparse type.
func (v *values) buffer(perm []int64) (mlfeed.Buffer, bool) {
	switch v.field {
	case "pattern":
		b := mlfeed.NewBuffer(mlfeed.Bool, 1)
		b.Bytes[0] = 1
		return b, true
	case "integer":
		b := mlfeed.NewBuffer(mlfeed.Int64, len(v.i))
		o := b.Int64s()
		if perm == nil {
			copy(o, v.i)
		} else {
			for k, p := range perm {
				o[k] = v.i[p]
			}
		}
		return b, false
	case "complex":
		b := mlfeed.NewBuffer(mlfeed.Complex128, len(v.f)/2)
		o := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: b.Bytes}.Float64s()
		if perm == nil {
			copy(o, v.f)
		} else {
			for k, p := range perm {
				o[2*k], o[2*k+1] = v.f[2*p], v.f[2*p+1]
			}
		}
		return b, false
	}
	b := mlfeed.NewBuffer(mlfeed.Float64, len(v.f))
	o := b.Float64s()
	if perm == nil {
		copy(o, v.f)
	} else {
		for k, p := range perm {
			o[k] = v.f[p]
		}
	}
	return b, false
}

func structureOf(symmetry string) binsparse.Structure {
	switch symmetry {
	case "symmetric":
		return binsparse.SymmetricLower
	case "skew-symmetric":
		return binsparse.SkewSymmetricLower
	case "hermitian":
		return binsparse.HermitianLower
	}
	return binsparse.General
}

// part holds the coordinate entries parsed from (part of) the data.
type part struct {
	rows, cols []int64
	v          values
}

// parseEntries parses coordinate entries from s: exactly limit of them (reporting a file that
// ends early), or, when limit < 0, every line up to the end of the data.
func parseEntries(s *scanner, h *Header, limit, capacity int) (*part, error) {
	p := &part{rows: make([]int64, 0, capacity), cols: make([]int64, 0, capacity), v: values{field: h.Field}}
	v := &p.v
	switch h.Field {
	case "real":
		v.f = make([]float64, 0, capacity)
	case "complex":
		v.f = make([]float64, 0, 2*capacity)
	case "integer":
		v.i = make([]int64, 0, capacity)
	}
	want := 2 + v.count()
	var f [4][]byte
	var c [4]int
	for limit < 0 || len(p.rows) < limit {
		line, ok := s.next()
		if !ok {
			if limit < 0 {
				break
			}
			return nil, s.errorf(0, ErrTruncated, "file ends after %d of %d entries", len(p.rows), limit)
		}
		// The fast path takes "i j [value]" lines of plain numbers; anything else (comments,
		// complex values, malformed lines) goes through the general path and its errors.
		if h.Symmetry == "general" {
			if i, j, x, n, ok := fastEntry(line, v.field); ok && i >= 1 && i <= h.Rows && j >= 1 && j <= h.Cols {
				p.rows, p.cols = append(p.rows, i-1), append(p.cols, j-1)
				switch v.field {
				case "real":
					v.f = append(v.f, x)
				case "integer":
					v.i = append(v.i, n)
				}
				continue
			}
		}
		k, more := fields(line, f[:want], c[:want])
		if k == 0 || line[0] == '%' {
			continue
		}
		if k != want || more {
			return nil, s.errorf(1, ErrFormat, "an entry of a %s %s file has %d fields", h.Field, h.Format, want)
		}
		i, ok1 := parseIndex(f[0])
		j, ok2 := parseIndex(f[1])
		if !ok1 || i < 1 || i > h.Rows {
			return nil, s.errorf(c[0], ErrFormat, "row %q is outside 1..%d", f[0], h.Rows)
		}
		if !ok2 || j < 1 || j > h.Cols {
			return nil, s.errorf(c[1], ErrFormat, "column %q is outside 1..%d", f[1], h.Cols)
		}
		if err := v.parse(s, f[2:want], c[2:want]); err != nil {
			return nil, err
		}
		if h.Symmetry != "general" {
			if i == j && h.Symmetry == "skew-symmetric" {
				return nil, s.errorf(c[0], ErrFormat, "a skew-symmetric matrix has no diagonal entries")
			}
			if i < j { // upper triangle: store the mirrored lower entry
				i, j = j, i
				v.mirror(len(p.rows), h.Symmetry)
			}
		}
		p.rows, p.cols = append(p.rows, i-1), append(p.cols, j-1)
	}
	return p, nil
}

// fastEntry parses a line "i j", "i j real" or "i j integer" (blank-separated plain numbers)
// of the given field into the indices and the value (x for real, n for integer); ok is false
// for any other line.
func fastEntry(line []byte, field string) (i, j int64, x float64, n int64, ok bool) {
	k := 0
	num := func() (int64, bool) {
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
		st := k
		var x int64
		for k < len(line) && line[k]-'0' < 10 {
			x = x*10 + int64(line[k]-'0')
			k++
		}
		return x, k > st && k-st <= 18 && (k == len(line) || line[k] == ' ' || line[k] == '\t')
	}
	if i, ok = num(); !ok {
		return 0, 0, 0, 0, false
	}
	if j, ok = num(); !ok {
		return 0, 0, 0, 0, false
	}
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		k++
	}
	st := k
	for k < len(line) && line[k] != ' ' && line[k] != '\t' {
		k++
	}
	tok := line[st:k]
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		k++
	}
	if k != len(line) {
		return 0, 0, 0, 0, false
	}
	switch field {
	case "pattern":
		ok = len(tok) == 0
	case "real":
		x, ok = parseFloat(tok)
		ok = ok && inRange(tok, x) // else the careful path reports it
	case "integer":
		n, ok = parseInt(tok)
	default:
		ok = false
	}
	return i, j, x, n, ok && (field == "pattern" || len(tok) > 0)
}

// parallelMin is the number of entries from which the entries are parsed in parallel.
const parallelMin = 1 << 16

// parseParallel parses the entries in pieces cut at line ends, as tasks of the scheduler in
// ctx. It returns nil when any piece fails or the count is not exactly the header's, so that
// the sequential parser reports the error with its exact line.
func parseParallel(ctx context.Context, s *scanner, h *Header, procs int) []*part {
	data := s.data[s.pos:]
	n := int(h.Entries)
	var pieces [][]byte
	for k := 0; k < procs && len(data) > 0; k++ {
		cut := len(data)
		if k < procs-1 {
			cut = len(data) / (procs - k)
			if i := bytes.IndexByte(data[cut:], '\n'); i >= 0 {
				cut += i + 1
			} else {
				cut = len(data)
			}
		}
		pieces, data = append(pieces, data[:cut]), data[cut:]
	}
	parts := make([]*part, len(pieces))
	err := sched.Parallel(ctx, len(pieces), func(_ context.Context, k int) error {
		sub := &scanner{data: pieces[k], name: s.name}
		p, err := parseEntries(sub, h, -1, n/len(pieces)+1024)
		if err == nil {
			parts[k] = p
		}
		return nil
	})
	if err != nil {
		return nil
	}
	total := 0
	for _, p := range parts {
		if p == nil {
			return nil
		}
		total += len(p.rows)
	}
	if total != n {
		return nil
	}
	return parts
}

// sortedParts reports whether the entries of parts, in order, are sorted by row, then column,
// without repeats.
func sortedParts(parts []*part) bool {
	pr, pc := int64(-1), int64(-1)
	for _, p := range parts {
		for k, r := range p.rows {
			c := p.cols[k]
			if r < pr || r == pr && c <= pc {
				return false
			}
			pr, pc = r, c
		}
	}
	return true
}

// concat joins parts into one.
func concat(parts []*part, field string) *part {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &part{v: values{field: field}}
	for _, p := range parts {
		out.rows = append(out.rows, p.rows...)
		out.cols = append(out.cols, p.cols...)
		out.v.f = append(out.v.f, p.v.f...)
		out.v.i = append(out.v.i, p.v.i...)
	}
	return out
}

func readCoordinate(ctx context.Context, s *scanner, h *Header) (*binsparse.Matrix, error) {
	n := int(h.Entries)
	start := *s
	var parts []*part
	if sc := sched.FromContext(ctx); sc != nil && sc.Threads() > 1 && n >= parallelMin {
		parts = parseParallel(ctx, s, h, sc.Threads())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if parts == nil {
		p, err := parseEntries(s, h, n, n)
		if err != nil {
			return nil, err
		}
		if err := trailing(s); err != nil {
			return nil, err
		}
		parts = []*part{p}
	}
	it := binsparse.MinIndexType(max(h.Rows, h.Cols))
	if sortedParts(parts) {
		// Already in order (as mlfeed and most tools write): build the arrays piece by piece.
		ri, ci := mlfeed.NewBuffer(it, n), mlfeed.NewBuffer(it, n)
		var vals mlfeed.Buffer
		iso := false
		at := 0
		for k, p := range parts {
			fillIndex(ri, at, p.rows)
			fillIndex(ci, at, p.cols)
			b, isIso := p.v.buffer(nil)
			if k == 0 {
				vals, iso = b, isIso
				if !iso && len(parts) > 1 {
					vals = mlfeed.NewBuffer(b.Type, n)
					copy(vals.Bytes, b.Bytes)
				}
			} else if !iso {
				copy(vals.Bytes[at*b.Type.Size():], b.Bytes)
			}
			at += len(p.rows)
		}
		return matrix(binsparse.COOR, h, map[string]mlfeed.Buffer{"indices_0": ri, "indices_1": ci, "values": vals}, iso, int64(n)), nil
	}
	p := concat(parts, h.Field)
	perm, err := rowMajor(p.rows, p.cols, h.Rows, h.Cols)
	if err != nil {
		return nil, placeDup(start, err, false)
	}
	vals, iso := p.v.buffer(perm)
	return matrix(binsparse.COOR, h, map[string]mlfeed.Buffer{
		"indices_0": indexBuffer(p.rows, perm, it),
		"indices_1": indexBuffer(p.cols, perm, it),
		"values":    vals,
	}, iso, int64(n)), nil
}

// fillIndex stores v at elements [at, at+len(v)) of the unsigned index buffer b.
func fillIndex(b mlfeed.Buffer, at int, v []int64) {
	switch b.Type {
	case mlfeed.Uint8:
		for k, x := range v {
			b.Bytes[at+k] = byte(x)
		}
	case mlfeed.Uint16:
		for k, x := range v {
			binary.LittleEndian.PutUint16(b.Bytes[2*(at+k):], uint16(x))
		}
	case mlfeed.Uint32:
		o := b.Uint32s()[at:]
		for k, x := range v {
			o[k] = uint32(x)
		}
	default:
		o := b.Uint64s()[at:]
		for k, x := range v {
			o[k] = uint64(x)
		}
	}
}

// trailing rejects data after the last entry (blank and comment lines are allowed).
func trailing(s *scanner) error {
	for {
		line, ok := s.next()
		if !ok {
			return nil
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '%' {
			return s.errorf(1, ErrFormat, "data after the last entry")
		}
	}
}

func readArray(s *scanner, h *Header) (*binsparse.Matrix, error) {
	n := int(h.Entries)
	v := &values{field: h.Field}
	want := v.count()
	var f [2][]byte
	var c [2]int
	for got := 0; got < n; got++ {
		line, ok := s.next()
		if !ok {
			return nil, s.errorf(0, ErrTruncated, "file ends after %d of %d values", got, n)
		}
		k, more := fields(line, f[:want], c[:want])
		if k == 0 || line[0] == '%' {
			got--
			continue
		}
		if k != want || more {
			return nil, s.errorf(1, ErrFormat, "a value of a %s array file has %d fields", h.Field, want)
		}
		if err := v.parse(s, f[:want], c[:want]); err != nil {
			return nil, err
		}
	}
	if err := trailing(s); err != nil {
		return nil, err
	}
	vals, _ := v.buffer(nil)
	if h.Symmetry != "general" {
		// Stored: the lower triangle column by column (strictly lower for skew-symmetric).
		nr := h.Rows
		full := mlfeed.NewBuffer(vals.Type, int(nr*nr))
		sz := vals.Type.Size()
		k := 0
		for j := int64(0); j < nr; j++ {
			i0 := j
			if h.Symmetry == "skew-symmetric" {
				i0 = j + 1
			}
			for i := i0; i < nr; i++ {
				at := int(j*nr + i)
				copy(full.Bytes[at*sz:(at+1)*sz], vals.Bytes[k*sz:(k+1)*sz])
				k++
			}
		}
		vals = full
	}
	return matrix(binsparse.DMATC, h, map[string]mlfeed.Buffer{"values": vals}, false, int64(vals.Len())), nil
}

func matrix(f binsparse.Format, h *Header, arrays map[string]mlfeed.Buffer, iso bool, nnz int64) *binsparse.Matrix {
	m := &binsparse.Matrix{Descriptor: binsparse.Descriptor{
		Version: binsparse.Version, Format: f, Shape: []int64{h.Rows, h.Cols},
		NumberOfStoredValues: nnz, Structure: structureOf(h.Symmetry), DataTypes: map[string]binsparse.DataType{},
	}, Arrays: arrays}
	for name, b := range arrays {
		m.Descriptor.DataTypes[name] = binsparse.DataType{Type: b.Type, Iso: iso && name == "values"}
	}
	return m
}

// rowMajor returns the permutation that sorts the entries by row, then column (nil when they
// are sorted already), and reports a repeated entry.
func rowMajor(rows, cols []int64, nrows, ncols int64) ([]int64, error) {
	n := len(rows)
	sorted := true
	for k := 1; k < n; k++ {
		if rows[k] < rows[k-1] || rows[k] == rows[k-1] && cols[k] <= cols[k-1] {
			sorted = false
			break
		}
	}
	if sorted {
		return nil, nil
	}
	var perm []int64
	if nrows <= int64(4*n)+1<<20 && ncols <= int64(4*n)+1<<20 {
		// Two stable counting sorts: by column, then by row.
		tmp := countsort.Order(nil, cols, ncols)
		perm = countsort.Order(tmp, rows, nrows)
	} else {
		perm = make([]int64, n)
		for k := range perm {
			perm[k] = int64(k)
		}
		sort.Slice(perm, func(a, b int) bool {
			pa, pb := perm[a], perm[b]
			if rows[pa] != rows[pb] {
				return rows[pa] < rows[pb]
			}
			return cols[pa] < cols[pb]
		})
	}
	for k := 1; k < n; k++ {
		a, b := perm[k-1], perm[k]
		if rows[a] == rows[b] && cols[a] == cols[b] {
			return nil, &dupError{first: min(a, b), second: max(a, b), row: rows[b] + 1, col: cols[b] + 1}
		}
	}
	return perm, nil
}

// dupError is an entry given twice: the entry numbers (from 0, in file order) and its
// coordinates (from 1).
type dupError struct{ first, second, row, col int64 }

func (e *dupError) Error() string { return fmt.Sprintf("entry (%d, %d) appears twice", e.row, e.col) }

// placeDup turns a dupError into an error at the line and column of the second entry, naming
// the line of the first; start is the scanner as it stood before the first entry. Other errors
// come back as they are.
func placeDup(start scanner, err error, vector bool) error {
	d, ok := err.(*dupError)
	if !ok {
		return err
	}
	var f [1][]byte
	var c [1]int
	lines := [2]int{}
	cols := [2]int{}
	for k := int64(0); k <= d.second; {
		line, ok := start.next()
		if !ok {
			break
		}
		if n, _ := fields(line, f[:], c[:]); n == 0 || line[0] == '%' {
			continue
		}
		for w, e := range [2]int64{d.first, d.second} {
			if k == e {
				lines[w], cols[w] = start.line, c[0]
			}
		}
		k++
	}
	what := fmt.Sprintf("entry (%d, %d)", d.row, d.col)
	if vector {
		what = fmt.Sprintf("index %d", d.row)
	}
	return mlfeed.LineError(start.name, lines[1], cols[1], fmt.Errorf("%w: %s appears twice, first at line %d; Matrix Market gives each entry once", ErrFormat, what, lines[0]))
}

// indexBuffer stores v in order perm (nil: as is) as type t.
func indexBuffer(v []int64, perm []int64, t mlfeed.ElemType) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, len(v))
	at := func(k int) int64 {
		if perm == nil {
			return v[k]
		}
		return v[perm[k]]
	}
	switch t {
	case mlfeed.Uint8:
		for k := range b.Bytes {
			b.Bytes[k] = byte(at(k))
		}
	case mlfeed.Uint16:
		for k := range v {
			binary.LittleEndian.PutUint16(b.Bytes[2*k:], uint16(at(k)))
		}
	case mlfeed.Uint32:
		o := b.Uint32s()
		for k := range o {
			o[k] = uint32(at(k))
		}
	default:
		o := b.Uint64s()
		for k := range o {
			o[k] = uint64(at(k))
		}
	}
	return b
}

// readVector reads the entries of a one-dimensional coordinate file ("index [value]" lines)
// into a sparse vector, sorted by index.
func readVector(s *scanner, h *Header) (*binsparse.Matrix, error) {
	n := int(h.Entries)
	start := *s
	idx := make([]int64, 0, n)
	v := values{field: h.Field}
	want := 1 + v.count()
	var f [3][]byte
	var c [3]int
	for len(idx) < n {
		line, ok := s.next()
		if !ok {
			return nil, s.errorf(0, ErrTruncated, "file ends after %d of %d entries", len(idx), n)
		}
		k, more := fields(line, f[:want], c[:want])
		if k == 0 || line[0] == '%' {
			continue
		}
		if k != want || more {
			return nil, s.errorf(1, ErrFormat, "an entry of a %s vector has %d fields", h.Field, want)
		}
		i, ok := parseIndex(f[0])
		if !ok || i < 1 || i > h.Rows {
			return nil, s.errorf(c[0], ErrFormat, "index %q is outside 1..%d", f[0], h.Rows)
		}
		if err := v.parse(s, f[1:want], c[1:want]); err != nil {
			return nil, err
		}
		idx = append(idx, i-1)
	}
	if err := trailing(s); err != nil {
		return nil, err
	}
	perm, err := rowMajor(idx, make([]int64, n), h.Rows, 1)
	if err != nil {
		return nil, placeDup(start, err, true)
	}
	vals, iso := v.buffer(perm)
	m := matrix(binsparse.CVEC, h, map[string]mlfeed.Buffer{
		"indices_0": indexBuffer(idx, perm, binsparse.MinIndexType(h.Rows)),
		"values":    vals,
	}, iso, int64(n))
	m.Descriptor.Shape = []int64{h.Rows}
	return m, nil
}
