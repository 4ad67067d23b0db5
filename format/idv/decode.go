package idv

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/mlfeed/mlfeed"
)

// naTicks is the legacy missing-value marker of the time types; it reads as 0.
const naTicks = math.MinInt64

// layout says how a column's rows are delivered as samples.
type layout uint8

const (
	layScalar layout = iota // one value per row
	layDense                // fixed-size vectors, every row dense (sparse rows expanded)
	laySparse               // fixed-size vectors, every row as (indices, values)
	layVar                  // variable-size vectors, dense rows delimited by starts
	layAuto                 // as stored (metadata values): sparse if any row is sparse
)

// frag is one decoded block of one column.
type frag struct {
	values  mlfeed.Buffer
	starts  []int64 // layVar and laySparse: first value of each row, len rows+1
	indices []int32 // laySparse: slot of each value
	sparse  bool    // the rows are delivered sparsely (layAuto resolves to this)
}

// blockError is an error at a byte offset inside a (decompressed) block.
type blockError struct {
	off int
	err error
}

func (e *blockError) Error() string { return fmt.Sprintf("at byte %d of the block: %v", e.off, e.err) }
func (e *blockError) Unwrap() error { return e.err }

func errAt(r *bytesReader, format string, args ...any) error {
	return &blockError{r.off, fmt.Errorf(format, args...)}
}

// decodeBlock decodes the n rows a block of codec c holds. expandLimit bounds the bytes that
// expanding sparse rows to dense ones may allocate.
func decodeBlock(c *codec, data []byte, n int, lay layout, expandLimit int64) (frag, error) {
	r := &bytesReader{b: data}
	if !c.vector {
		v, err := decodeItems(c, r, n)
		return frag{values: v}, err
	}
	return decodeVector(c, r, n, lay, expandLimit)
}

// decodeItems decodes n values of c's item encoding.
func decodeItems(c *codec, r *bytesReader, n int) (mlfeed.Buffer, error) {
	p := c.prim
	le := binary.LittleEndian
	t := primInfo[p].elem
	need := func(bytes int64) error {
		if bytes > int64(r.left()) {
			return errAt(r, "%w: %d values of %s need %d bytes, %d remain", ErrFormat, n, primInfo[p].name, bytes, r.left())
		}
		return nil
	}
	if w := primInfo[p].width; w > 0 {
		if err := need(int64(n) * int64(w)); err != nil {
			return mlfeed.Buffer{}, err
		}
		start := r.off
		b, _ := r.take(n * w)
		if p == pTS || p == pDT {
			for i := 0; i < n; i++ {
				v := int64(le.Uint64(b[8*i:]))
				if v == naTicks {
					le.PutUint64(b[8*i:], 0)
				} else if p == pDT && (v < 0 || v > mlfeed.MaxTicks) {
					return mlfeed.Buffer{}, &blockError{start + 8*i, fmt.Errorf("%w: DateTime ticks %d outside 0..%d", ErrFormat, v, int64(mlfeed.MaxTicks))}
				}
			}
		}
		if align := min(w, 8); len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%uintptr(align) != 0 {
			// Values that follow a vector block's header may be misaligned for typed views,
			// which would then copy on every call: copy once here.
			out := mlfeed.NewBuffer(t, n)
			copy(out.Bytes, b)
			return out, nil
		}
		return mlfeed.Buffer{Type: t, Bytes: b}, nil
	}
	switch p {
	case pDTO:
		if err := need(int64(n) * 10); err != nil {
			return mlfeed.Buffer{}, err
		}
		start := r.off
		offs, _ := r.take(2 * n)
		ticks, _ := r.take(8 * n)
		out := mlfeed.NewBuffer(t, n)
		for i := 0; i < n; i++ {
			o := int16(le.Uint16(offs[2*i:]))
			v := int64(le.Uint64(ticks[8*i:]))
			if o == math.MinInt16 {
				o = 0
			}
			if v == naTicks {
				v = 0
			}
			utc := v - int64(o)*600000000
			if o < -840 || o > 840 || v < 0 || v > mlfeed.MaxTicks || utc < 0 || utc > mlfeed.MaxTicks {
				return mlfeed.Buffer{}, &blockError{start + 2*n + 8*i, fmt.Errorf("%w: DateTimeOffset (ticks %d, offset %d minutes) out of range", ErrFormat, v, o)}
			}
			le.PutUint64(out.Bytes[16*i:], uint64(v))
			le.PutUint16(out.Bytes[16*i+8:], uint16(o))
		}
		return out, nil
	case pBool:
		if err := need((int64(n) + 7) / 8); err != nil {
			return mlfeed.Buffer{}, err
		}
		b, _ := r.take((n + 7) / 8)
		out := mlfeed.NewBuffer(t, n)
		for i := range out.Bytes {
			out.Bytes[i] = b[i>>3] >> (i & 7) & 1
		}
		return out, nil
	case pDvBool:
		words := (int64(n) + 15) / 16
		if err := need(4 * words); err != nil {
			return mlfeed.Buffer{}, err
		}
		start := r.off
		b, _ := r.take(int(4 * words))
		out := mlfeed.NewBuffer(t, n)
		for i := range out.Bytes {
			v := le.Uint32(b[4*(i/16):]) >> (2 * (i % 16)) & 3
			if v == 3 {
				return mlfeed.Buffer{}, &blockError{start + 4*(i/16), fmt.Errorf("%w: DvBool value %d has the invalid code 3", ErrFormat, i)}
			}
			out.Bytes[i] = byte(v & 1) // 2 = NA reads as false, as in ML.NET
		}
		return out, nil
	case pText:
		return decodeText(r, n)
	}
	return mlfeed.Buffer{}, errAt(r, "%w: codec %s has no block decoder", ErrUnsupported, c.name)
}

// decodeText decodes a TextSpan block of n strings.
func decodeText(r *bytesReader, n int) (mlfeed.Buffer, error) {
	cnt, err := r.i32()
	if err != nil {
		return mlfeed.Buffer{}, errAt(r, "%w: text count %v", ErrFormat, err)
	}
	if int(cnt) != n {
		return mlfeed.Buffer{}, &blockError{r.off - 4, fmt.Errorf("%w: text block holds %d strings, want %d", ErrFormat, cnt, n)}
	}
	if int64(n)*4 > int64(r.left()) {
		return mlfeed.Buffer{}, errAt(r, "%w: %d text boundaries need %d bytes, %d remain", ErrFormat, n, 4*int64(n), r.left())
	}
	bstart := r.off
	bounds, _ := r.take(4 * n)
	sstart := r.off
	l, err := r.strLen()
	if err != nil {
		return mlfeed.Buffer{}, errAt(r, "%w: text length: %v", ErrFormat, err)
	}
	raw, err := r.take(l)
	if err != nil {
		return mlfeed.Buffer{}, &blockError{sstart, fmt.Errorf("%w: text of %d bytes runs past the block (%d bytes remain)", ErrFormat, l, r.left())}
	}
	le := binary.LittleEndian
	prev := uint32(0)
	for i := 0; i < n; i++ {
		v := le.Uint32(bounds[4*i:])
		m := v & 0x7fffffff
		if m < prev || v&0x80000000 != 0 && m != prev {
			return mlfeed.Buffer{}, &blockError{bstart + 4*i, fmt.Errorf("%w: text boundary %#x of string %d does not follow the previous %d (a missing string repeats it)", ErrFormat, v, i, prev)}
		}
		prev = m
	}
	var s string
	ascii := isASCII(raw)
	if ascii {
		s = string(raw)
	} else {
		s = validUTF8(raw)
	}
	out := mlfeed.Buffer{Type: mlfeed.String, Strings: make([]string, n)}
	if ascii {
		if int(prev) != len(s) {
			return mlfeed.Buffer{}, &blockError{sstart, fmt.Errorf("%w: text has %d UTF-16 units, boundaries end at %d", ErrFormat, len(s), prev)}
		}
		from := uint32(0)
		for i := 0; i < n; i++ {
			v := le.Uint32(bounds[4*i:])
			m := v & 0x7fffffff
			if v&0x80000000 == 0 { // NA (legacy) reads as ""
				out.Strings[i] = s[from:m]
			}
			from = m
		}
		return out, nil
	}
	// Walk the runes, converting UTF-16 unit counts to byte offsets.
	pos, at := uint32(0), 0
	from := 0
	for i := 0; i < n; i++ {
		v := le.Uint32(bounds[4*i:])
		m := v & 0x7fffffff
		for pos < m && at < len(s) {
			rn, size := utf8.DecodeRuneInString(s[at:])
			at += size
			pos += uint32(utf16.RuneLen(rn))
		}
		if pos != m {
			return mlfeed.Buffer{}, &blockError{bstart + 4*i, fmt.Errorf("%w: text boundary %d of string %d does not fall between characters (text has %d UTF-16 units)", ErrFormat, m, i, pos)}
		}
		if v&0x80000000 == 0 {
			out.Strings[i] = s[from:at]
		}
		from = at
	}
	if at != len(s) {
		return mlfeed.Buffer{}, &blockError{sstart, fmt.Errorf("%w: text is longer than its boundaries say (%d UTF-16 units)", ErrFormat, prev)}
	}
	return out, nil
}

// isASCII reports whether s holds only ASCII, eight bytes at a time.
func isASCII[T string | []byte](s T) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeVector decodes a VBuffer block of n vectors.
func decodeVector(c *codec, r *bytesReader, n int, lay layout, expandLimit int64) (frag, error) {
	var f frag
	cnt, err := r.i32()
	if err != nil {
		return f, errAt(r, "%w: vector count %v", ErrFormat, err)
	}
	if int(cnt) != n {
		return f, &blockError{r.off - 4, fmt.Errorf("%w: vector block holds %d vectors, want %d", ErrFormat, cnt, n)}
	}
	size := c.size()
	sOff := r.off
	s, err := r.i32()
	if err != nil {
		return f, errAt(r, "%w: vector length %v", ErrFormat, err)
	}
	if s < 0 || size > 0 && int(s) != size {
		return f, &blockError{sOff, fmt.Errorf("%w: vector length %d, type has %d slots", ErrFormat, s, size)}
	}
	arrays := 1
	if s == 0 {
		arrays = 2
	}
	if int64(n)*4*int64(arrays)+4 > int64(r.left()) {
		return f, errAt(r, "%w: %d vectors need %d bytes of lengths and counts, %d remain", ErrFormat, n, int64(n)*4*int64(arrays)+4, r.left())
	}
	le := binary.LittleEndian
	lens := make([]int32, n)
	if s == 0 {
		p, _ := r.take(4 * n)
		for i := range lens {
			if lens[i] = int32(le.Uint32(p[4*i:])); lens[i] < 0 {
				return f, &blockError{r.off - 4*n + 4*i, fmt.Errorf("%w: vector %d has negative length %d", ErrFormat, i, lens[i])}
			}
		}
	} else {
		for i := range lens {
			lens[i] = s
		}
	}
	cOff := r.off
	cp, _ := r.take(4 * n)
	counts := make([]int32, n)
	var sumSparse, total int64
	anySparse := false
	for i := range counts {
		k := int32(le.Uint32(cp[4*i:]))
		counts[i] = k
		switch {
		case k == -1:
			total += int64(lens[i])
		case k >= 0 && k < lens[i]:
			anySparse = true
			sumSparse += int64(k)
			total += int64(k)
		default:
			return f, &blockError{cOff + 4*i, fmt.Errorf("%w: vector %d of length %d has entry count %d (want -1 or 0..length-1)", ErrFormat, i, lens[i], k)}
		}
	}
	iOff := r.off
	ni, err := r.i32()
	if err != nil {
		return f, errAt(r, "%w: index count %v", ErrFormat, err)
	}
	if int64(ni) != sumSparse {
		return f, &blockError{iOff, fmt.Errorf("%w: %d sparse indices declared, the counts sum to %d", ErrFormat, ni, sumSparse)}
	}
	if int64(ni)*4 > int64(r.left()) {
		return f, errAt(r, "%w: %d indices need %d bytes, %d remain", ErrFormat, ni, 4*int64(ni), r.left())
	}
	ixOff := r.off
	ip, _ := r.take(4 * int(ni))
	// Validate indices: strictly increasing within each sparse vector, below its length.
	k := 0
	for i := range counts {
		prev := int32(-1)
		for j := int32(0); j < counts[i]; j++ {
			ix := int32(le.Uint32(ip[4*k:]))
			if ix <= prev || ix >= lens[i] {
				return f, &blockError{ixOff + 4*k, fmt.Errorf("%w: vector %d: index %d after %d is out of order or outside [0, %d)", ErrFormat, i, ix, prev, lens[i])}
			}
			prev = ix
			k++
		}
	}
	if total > math.MaxInt32*8 {
		return f, errAt(r, "%w: vectors hold %d values", ErrTooLarge, total)
	}
	items, err := decodeItems(c, r, int(total))
	if err != nil {
		return f, err
	}
	if lay == layAuto {
		switch {
		case size > 0 && anySparse:
			lay = laySparse
		case size > 0:
			lay = layDense
		default:
			lay = layVar
		}
	}
	if !anySparse && lay != laySparse {
		f.values = items
		if lay == layVar {
			f.starts = prefix(lens)
		}
		return f, nil
	}
	t := items.Type
	esz := t.Size()
	if t == mlfeed.String {
		esz = 16
	}
	if lay == laySparse {
		f.sparse = true
		f.starts = make([]int64, n+1)
		f.indices = make([]int32, total)
		k, v := 0, 0
		for i := range counts {
			if counts[i] < 0 {
				for j := int32(0); j < lens[i]; j++ {
					f.indices[v] = j
					v++
				}
			} else {
				for j := int32(0); j < counts[i]; j++ {
					f.indices[v] = int32(le.Uint32(ip[4*k:]))
					k++
					v++
				}
			}
			f.starts[i+1] = int64(v)
		}
		f.values = items
		return f, nil
	}
	// Expand sparse rows to dense ones.
	var full int64
	for _, l := range lens {
		full += int64(l)
	}
	if full*int64(esz) > expandLimit {
		return f, errAt(r, "%w: expanding sparse vectors to dense ones would take %d bytes (limit %d); read with Vectors: Sparse", ErrTooLarge, full*int64(esz), expandLimit)
	}
	out := mlfeed.NewBuffer(t, int(full))
	var src, dst, ki int
	for i := range counts {
		if counts[i] < 0 {
			copyItems(out, dst, items, src, int(lens[i]))
			src += int(lens[i])
		} else {
			for j := int32(0); j < counts[i]; j++ {
				copyItems(out, dst+int(le.Uint32(ip[4*ki:])), items, src, 1)
				ki++
				src++
			}
		}
		dst += int(lens[i])
	}
	f.values = out
	if lay == layVar {
		f.starts = prefix(lens)
	}
	return f, nil
}

func copyItems(dst mlfeed.Buffer, at int, src mlfeed.Buffer, from, n int) {
	if dst.Type == mlfeed.String {
		copy(dst.Strings[at:at+n], src.Strings[from:from+n])
		return
	}
	sz := dst.Type.Size()
	copy(dst.Bytes[at*sz:(at+n)*sz], src.Bytes[from*sz:(from+n)*sz])
}

func prefix(lens []int32) []int64 {
	out := make([]int64, len(lens)+1)
	for i, l := range lens {
		out[i+1] = out[i] + int64(l)
	}
	return out
}
