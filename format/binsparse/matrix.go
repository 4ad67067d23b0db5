package binsparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/countsort"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Matrix is a Binsparse array in memory: its descriptor and its named arrays. Values holds
// elements of the descriptor's value type (mlfeed.Bool for bint8, mlfeed.Complex64 or
// Complex128 for complex values); an iso values array holds one element. Index and pointer
// arrays hold the integer types the descriptor names.
type Matrix struct {
	// Descriptor says what the arrays mean.
	Descriptor Descriptor
	// Arrays maps array names ("values", "indices_0", "pointers_to_1", "fill_value") to
	// their elements.
	Arrays map[string]mlfeed.Buffer
}

// maxElements bounds the dense arrays conversions may allocate (2^34 values).
const maxElements = 1 << 34

// errUnsorted marks ordering violations (unsorted or duplicate indices), which readers
// tolerate for unsorted input but Validate reports.
var errUnsorted = errors.New("indices are not sorted")

// errDuplicate marks a repeated coordinate, which no reader can interpret.
var errDuplicate = errors.New("duplicate coordinate")

// Shape returns the logical shape.
func (m *Matrix) Shape() []int64 { return m.Descriptor.Shape }

// Format returns the matrix's format (Custom for custom levels).
func (m *Matrix) Format() Format { return m.Descriptor.Format }

// Values returns the values array.
func (m *Matrix) Values() mlfeed.Buffer { return m.Arrays["values"] }

// NNZ returns the number of stored values (stored index tuples for iso values).
func (m *Matrix) NNZ() int64 {
	n, _ := m.check(nil)
	return n
}

// Validate checks the arrays against the descriptor: every array present with its declared
// type, lengths, pointers that start at 0, never decrease and end at the number of indices,
// indices within bounds and sorted without duplicates within each fiber as the format
// requires, the stored triangle for symmetric, hermitian and skew-symmetric structures,
// iso and fill_value arrays of one element, bint8 values of 0 or 1, and
// number_of_stored_values. It returns the first violation, an *ArrayError.
func (m *Matrix) Validate() error {
	_, err := m.validate(context.Background())
	return err
}

// validate checks the matrix strictly (ordering too) and returns the number of stored
// positions.
func (m *Matrix) validate(ctx context.Context) (int64, error) {
	var first error
	n, err := m.checkContext(ctx, func(err error) bool { first = err; return false })
	if err != nil {
		return 0, err
	}
	return n, first
}

// ValidateAll reports every violation Validate would find to report (at most one per array
// and check), stopping when report returns false.
func (m *Matrix) ValidateAll(report func(error) bool) {
	if _, err := m.check(report); err != nil {
		report(err)
	}
}

// check validates the arrays; ordering problems go to report (when not nil) and do not stop
// the check. It returns the number of stored positions, or the first fatal error.
func (m *Matrix) check(report func(error) bool) (int64, error) {
	return m.checkContext(context.Background(), report)
}

// checkContext is check with the index arrays checked in parallel on the threads of the
// scheduler ctx carries.
func (m *Matrix) checkContext(ctx context.Context, report func(error) bool) (int64, error) {
	d := &m.Descriptor
	lv := d.LevelsOf()
	if lv == nil {
		return 0, fmt.Errorf("%w: matrix has no format", ErrFormat)
	}
	for _, name := range d.Arrays() {
		b, ok := m.Arrays[name]
		if !ok {
			return 0, arrayErr(name, -1, "array is missing")
		}
		if want := d.DataTypes[name].Type; b.Type != want && !(name != "values" && name != "fill_value" && b.Type.IsInteger()) {
			return 0, arrayErr(name, -1, "holds %s, descriptor says %s", b.Type, d.DataTypes[name])
		}
	}
	sdims := storageDims(d.Shape, lv)
	npos := int64(1)
	dim := 0
	var ordering error
	for li, l := range lv.Levels {
		switch l.Kind {
		case LevelDense:
			for k := 0; k < l.Rank; k++ {
				s := sdims[dim+k]
				if s != 0 && npos > maxElements/s {
					return 0, fmt.Errorf("%w: dense level %d of shape %v holds more than %d elements", ErrTooLarge, li, d.Shape, int64(maxElements))
				}
				npos *= s
			}
		case LevelSparse:
			if l.Rank == 1 {
				// one index array: checked in its stored type, without an int64 copy
				name := fmt.Sprintf("indices_%d", dim)
				ib := m.Arrays[name]
				nidx := int64(ib.Len())
				ptr, err := m.levelPointers(li, dim, npos, nidx)
				if err != nil {
					return 0, err
				}
				ord, err := checkIndices(ctx, name, ib, sdims[dim], ptr)
				if err != nil {
					return 0, err
				}
				if ordering == nil {
					ordering = ord
				}
				npos = nidx
				break
			}
			idx := make([][]int64, l.Rank)
			for k := range idx {
				name := fmt.Sprintf("indices_%d", dim+k)
				v, err := toInt64s(name, m.Arrays[name])
				if err != nil {
					return 0, err
				}
				if k > 0 && len(v) != len(idx[0]) {
					return 0, arrayErr(name, -1, "has %d elements, indices_%d has %d", len(v), dim, len(idx[0]))
				}
				for i, x := range v {
					if x >= sdims[dim+k] {
						return 0, arrayErr(name, int64(i), "index %d is outside [0, %d)", x, sdims[dim+k])
					}
				}
				idx[k] = v
			}
			nidx := int64(len(idx[0]))
			ptr, err := m.levelPointers(li, dim, npos, nidx)
			if err != nil {
				return 0, err
			}
			if ordering == nil {
				ordering = checkOrder(idx, ptr, dim)
			}
			npos = nidx
		}
		dim += l.Rank
	}
	vt := d.ValueType()
	vals := m.Arrays["values"]
	if vt.Iso {
		if vals.Len() != 1 {
			return 0, arrayErr("values", -1, "iso values array has %d elements, not 1", vals.Len())
		}
	} else if int64(vals.Len()) != npos {
		return 0, arrayErr("values", -1, "has %d elements, the format's indices give %d", vals.Len(), npos)
	}
	if vals.Type == mlfeed.Bool {
		for i, c := range vals.Bytes {
			if c > 1 {
				return 0, arrayErr("values", int64(i), "bint8 value %d is not 0 or 1", int8(c))
			}
		}
	}
	if f, ok := m.Arrays["fill_value"]; ok && f.Len() != 1 {
		return 0, arrayErr("fill_value", -1, "has %d elements, not 1", f.Len())
	}
	if d.NumberOfStoredValues >= 0 && d.NumberOfStoredValues != npos {
		return 0, fmt.Errorf("%w: number_of_stored_values is %d, the arrays hold %d", ErrFormat, d.NumberOfStoredValues, npos)
	}
	if ordering != nil {
		if errors.Is(ordering, errDuplicate) {
			return 0, ordering
		}
		if report != nil && !report(ordering) {
			return npos, nil
		}
	}
	if d.Structure != General {
		if err := m.checkTriangle(); err != nil {
			return 0, err
		}
	}
	return npos, nil
}

// levelPointers returns and checks the pointers into sparse level li (at dimension dim) from
// the npos positions above it; the root level has the one fiber [0, nidx).
func (m *Matrix) levelPointers(li, dim int, npos, nidx int64) ([]int64, error) {
	if li == 0 {
		if npos != 1 {
			return nil, fmt.Errorf("%w: sparse root level below another level", ErrFormat)
		}
		return []int64{0, nidx}, nil
	}
	name := fmt.Sprintf("pointers_to_%d", dim)
	ptr, err := toInt64s(name, m.Arrays[name])
	if err != nil {
		return nil, err
	}
	if int64(len(ptr)) != npos+1 {
		return nil, arrayErr(name, -1, "has %d elements, want %d (one more than the %d positions above)", len(ptr), npos+1, npos)
	}
	if ptr[0] != 0 {
		return nil, arrayErr(name, 0, "first pointer is %d, not 0", ptr[0])
	}
	for i := 1; i < len(ptr); i++ {
		if ptr[i] < ptr[i-1] {
			return nil, arrayErr(name, int64(i), "pointer %d is below the previous %d", ptr[i], ptr[i-1])
		}
	}
	if ptr[len(ptr)-1] != nidx {
		return nil, arrayErr(name, int64(len(ptr)-1), "last pointer is %d, indices_%d has %d elements", ptr[len(ptr)-1], dim, nidx)
	}
	return ptr, nil
}

// checkIndices checks a single index array in its stored type: every index in [0, bound), and
// (the returned ordering error, not fatal) strictly increasing within each fiber of ptr.
// Large arrays are checked in parts (whole fibers each) in parallel on the threads of the
// scheduler ctx carries; the errors are those of a serial check.
func checkIndices(ctx context.Context, name string, b mlfeed.Buffer, bound int64, ptr []int64) (ordering, err error) {
	if !b.Type.IsInteger() {
		return nil, arrayErr(name, -1, "holds %s, not integers", b.Type)
	}
	// parts of about checkPart indices, cut at fiber boundaries
	cuts := []int{0}
	if s := sched.FromContext(ctx); s != nil && s.Threads() > 1 && len(ptr) > 2 {
		for p, next := 0, ptr[0]+checkPart; p < len(ptr)-1; p++ {
			if ptr[p] >= next {
				cuts = append(cuts, p)
				next = ptr[p] + checkPart
			}
		}
	}
	cuts = append(cuts, len(ptr)-1)
	parts := len(cuts) - 1
	if parts <= 1 {
		return checkIndexType(name, b, bound, ptr)
	}
	ords := make([]error, parts)
	errs := make([]error, parts)
	_ = sched.Parallel(ctx, parts, func(_ context.Context, i int) error {
		ords[i], errs[i] = checkIndexType(name, b, bound, ptr[cuts[i]:cuts[i+1]+1])
		return nil
	})
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if ordering == nil {
			ordering = ords[i]
		}
	}
	return ordering, ctx.Err()
}

// checkPart is the number of indices one parallel part of checkIndices checks, at least.
const checkPart = 1 << 20

func checkIndexType(name string, b mlfeed.Buffer, bound int64, ptr []int64) (ordering, err error) {
	switch b.Type {
	case mlfeed.Uint8:
		return checkIndexSlice(name, b.Uint8s(), bound, ptr)
	case mlfeed.Uint16:
		return checkIndexSlice(name, b.Uint16s(), bound, ptr)
	case mlfeed.Uint32:
		return checkIndexSlice(name, b.Uint32s(), bound, ptr)
	case mlfeed.Uint64:
		return checkIndexSlice(name, b.Uint64s(), bound, ptr)
	case mlfeed.Int8:
		return checkIndexSlice(name, b.Int8s(), bound, ptr)
	case mlfeed.Int16:
		return checkIndexSlice(name, b.Int16s(), bound, ptr)
	case mlfeed.Int32:
		return checkIndexSlice(name, b.Int32s(), bound, ptr)
	case mlfeed.Int64:
		return checkIndexSlice(name, b.Int64s(), bound, ptr)
	}
	return nil, arrayErr(name, -1, "holds %s, not integers", b.Type)
}

// index is the element type of an index array.
type index interface {
	uint8 | uint16 | uint32 | uint64 | int8 | int16 | int32 | int64
}

func checkIndexSlice[T index](name string, v []T, bound int64, ptr []int64) (ordering, err error) {
	// one pass per fiber: range and strict order
	for p := 0; p+1 < len(ptr); p++ {
		lo, hi := ptr[p], ptr[p+1]
		if fiberSorted(v[lo:hi], bound) {
			continue
		}
		var prev T
		for q := lo; q < hi; q++ {
			x := v[q]
			if x < 0 || uint64(x) >= uint64(bound) {
				return nil, indexErr(name, q, int64(x), uint64(x), x < 0, bound)
			}
			if q > lo && x <= prev && ordering == nil {
				ordering = orderErr(name, q, x == prev)
			}
			prev = x
		}
	}
	return ordering, nil
}

// fiberSorted reports whether f is strictly increasing with every value in [0, bound): then
// only its ends need a range check. A false answer sends the fiber to the element-by-element
// check, which finds the first error.
func fiberSorted[T index](f []T, bound int64) bool {
	if len(f) == 0 {
		return true
	}
	first, last := f[0], f[len(f)-1]
	if first < 0 || last < 0 || uint64(last) >= uint64(bound) {
		return false
	}
	for j := 1; j < len(f); j++ {
		if f[j] <= f[j-1] {
			return false
		}
	}
	return true
}

// indexErr describes a bad index at position q.
func indexErr(name string, q, signed int64, unsigned uint64, negative bool, bound int64) error {
	switch {
	case negative:
		return arrayErr(name, q, "negative value %d", signed)
	case unsigned > math.MaxInt64:
		return arrayErr(name, q, "value %d does not fit int64", unsigned)
	}
	return arrayErr(name, q, "index %d is outside [0, %d)", unsigned, bound)
}

// orderErr is the ordering error at position q of a fiber: a repeated or a decreasing index.
func orderErr(name string, q int64, same bool) error {
	if same {
		return &ArrayError{Array: name, Index: q, Err: fmt.Errorf("%w: %w: the same coordinate as element %d", ErrFormat, errDuplicate, q-1)}
	}
	return &ArrayError{Array: name, Index: q, Err: fmt.Errorf("%w: %w: element %d precedes element %d in its fiber", ErrFormat, errUnsorted, q, q-1)}
}

// storageDims returns the sizes of the stored dimensions in level order.
func storageDims(shape []int64, lv *Levels) []int64 {
	p := lv.perm(len(shape))
	out := make([]int64, len(shape))
	for k := range out {
		out[k] = shape[p[k]]
	}
	return out
}

// checkOrder verifies that the index tuples in each fiber [ptr[p], ptr[p+1]) increase
// strictly.
func checkOrder(idx [][]int64, ptr []int64, dim int) error {
	for p := 0; p+1 < len(ptr); p++ {
		for q := ptr[p] + 1; q < ptr[p+1]; q++ {
			c := 0
			for k := range idx {
				if a, b := idx[k][q-1], idx[k][q]; a != b {
					if a < b {
						c = -1
					} else {
						c = 1
					}
					break
				}
			}
			if c == 0 {
				return &ArrayError{Array: fmt.Sprintf("indices_%d", dim), Index: q,
					Err: fmt.Errorf("%w: %w: the same coordinate as element %d", ErrFormat, errDuplicate, q-1)}
			}
			if c > 0 {
				return &ArrayError{Array: fmt.Sprintf("indices_%d", dim), Index: q,
					Err: fmt.Errorf("%w: %w: element %d precedes element %d in its fiber", ErrFormat, errUnsorted, q, q-1)}
			}
		}
	}
	return nil
}

// checkTriangle verifies that every stored entry lies in the structure's triangle
// (strictly for skew-symmetric, whose diagonal is zero). Dense formats may hold the fill value
// (zero) outside the triangle.
func (m *Matrix) checkTriangle() error {
	e, err := m.entries(true, false)
	if err != nil {
		return err
	}
	st := m.Descriptor.Structure
	skew := st == SkewSymmetricLower || st == SkewSymmetricUpper
	for p := range e.rows {
		r, c := e.rows[p], e.cols[p]
		ok := r >= c
		if !st.Lower() {
			ok = r <= c
		}
		if skew && r == c {
			ok = false
		}
		if !ok {
			return arrayErr("values", int64(e.pos[p]), "entry (%d, %d) lies outside the %s triangle", r, c, st)
		}
	}
	return nil
}

// entries is a matrix as a list of (row, column, value position) triples. Vectors have row
// 0; tensors of rank > 2 have the flattened trailing dimensions as columns.
type entries struct {
	rows, cols []int64
	pos        []int64       // position of each entry's value in vals
	vals       mlfeed.Buffer // the values (one element when iso)
	iso        bool
	nrows      int64
	ncols      int64
}

// coords walks the levels and returns, for each stored position, its logical coordinates.
func (m *Matrix) coords() ([][]int64, error) {
	d := &m.Descriptor
	lv := d.LevelsOf()
	sdims := storageDims(d.Shape, lv)
	var sc [][]int64
	npos := int64(1)
	dim := 0
	for li, l := range lv.Levels {
		switch l.Kind {
		case LevelDense:
			prod := int64(1)
			for k := 0; k < l.Rank; k++ {
				prod *= sdims[dim+k]
			}
			if npos*prod > maxElements {
				return nil, fmt.Errorf("%w: %d positions", ErrTooLarge, npos*prod)
			}
			n := npos * prod
			next := make([][]int64, len(sc)+l.Rank)
			for k := range next {
				next[k] = make([]int64, n)
			}
			for p := int64(0); p < npos; p++ {
				for lin := int64(0); lin < prod; lin++ {
					q := p*prod + lin
					for k := range sc {
						next[k][q] = sc[k][p]
					}
					rem := lin
					for k := l.Rank - 1; k >= 0; k-- {
						s := sdims[dim+k]
						next[len(sc)+k][q] = rem % s
						rem /= s
					}
				}
			}
			sc, npos = next, n
		case LevelSparse:
			first, err := toInt64s(fmt.Sprintf("indices_%d", dim), m.Arrays[fmt.Sprintf("indices_%d", dim)])
			if err != nil {
				return nil, err
			}
			n := int64(len(first))
			ptr := []int64{0, n}
			if li > 0 {
				if ptr, err = toInt64s(fmt.Sprintf("pointers_to_%d", dim), m.Arrays[fmt.Sprintf("pointers_to_%d", dim)]); err != nil {
					return nil, err
				}
			}
			next := make([][]int64, len(sc), len(sc)+l.Rank)
			for k := range sc {
				next[k] = make([]int64, n)
				for p := 0; p+1 < len(ptr); p++ {
					for q := ptr[p]; q < ptr[p+1]; q++ {
						next[k][q] = sc[k][p]
					}
				}
			}
			next = append(next, first)
			for k := 1; k < l.Rank; k++ {
				v, err := toInt64s(fmt.Sprintf("indices_%d", dim+k), m.Arrays[fmt.Sprintf("indices_%d", dim+k)])
				if err != nil {
					return nil, err
				}
				next = append(next, v)
			}
			sc, npos = next, n
		}
		dim += l.Rank
	}
	perm := lv.perm(len(d.Shape))
	logical := make([][]int64, len(sc))
	for k := range sc {
		logical[perm[k]] = sc[k]
	}
	return logical, nil
}

// entries lists the matrix's entries. With dropFill, entries of dense formats whose value is
// the fill value (zero without one) are left out. With expand, the other triangle of a
// symmetric, hermitian or skew-symmetric matrix is added.
func (m *Matrix) entries(dropFill, expand bool) (*entries, error) {
	lc, err := m.coords()
	if err != nil {
		return nil, err
	}
	d := &m.Descriptor
	e := &entries{vals: m.Values(), iso: d.ValueType().Iso}
	switch len(lc) {
	case 1:
		e.nrows, e.ncols = 1, d.Shape[0]
		e.rows, e.cols = make([]int64, len(lc[0])), lc[0]
	case 2:
		e.nrows, e.ncols = d.Shape[0], d.Shape[1]
		e.rows, e.cols = lc[0], lc[1]
	default:
		e.nrows, e.ncols = d.Shape[0], 1
		for _, s := range d.Shape[1:] {
			if s != 0 && e.ncols > math.MaxInt64/s {
				return nil, fmt.Errorf("%w: tensor shape %v", ErrTooLarge, d.Shape)
			}
			e.ncols *= s
		}
		e.rows = lc[0]
		e.cols = make([]int64, len(lc[0]))
		for p := range e.cols {
			var c int64
			for k := 1; k < len(lc); k++ {
				c = c*d.Shape[k] + lc[k][p]
			}
			e.cols[p] = c
		}
	}
	e.pos = make([]int64, len(e.rows))
	for p := range e.pos {
		if !e.iso {
			e.pos[p] = int64(p)
		}
	}
	expand = expand && d.Structure != General
	if (dropFill || expand) && d.IsDense() && !e.iso {
		e.dropFill(m.fillBytes())
	}
	if expand {
		e.expand(d.Structure)
	}
	return e, nil
}

// fillBytes returns the fill value as bytes of the value type (zero when there is none).
func (m *Matrix) fillBytes() []byte {
	vt := m.Values().Type
	zero := make([]byte, vt.Size())
	f, ok := m.Arrays["fill_value"]
	if !m.Descriptor.Fill || !ok || f.Len() != 1 {
		return zero
	}
	if f.Type == vt {
		return f.Bytes
	}
	c, err := mlfeed.ConvertBuffer(f, vt)
	if err != nil {
		return zero
	}
	return c.Bytes
}

func (e *entries) dropFill(fill []byte) {
	sz := len(fill)
	k := 0
	for p := range e.rows {
		v := e.vals.Bytes[int(e.pos[p])*sz : int(e.pos[p]+1)*sz]
		if string(v) == string(fill) {
			continue
		}
		e.rows[k], e.cols[k], e.pos[k] = e.rows[p], e.cols[p], e.pos[p]
		k++
	}
	e.rows, e.cols, e.pos = e.rows[:k], e.cols[:k], e.pos[:k]
}

// expand adds the mirrored entry of every off-diagonal entry, negated (skew-symmetric) or
// conjugated (hermitian) as the structure says.
func (e *entries) expand(st Structure) {
	n := len(e.rows)
	var extra []int64
	for p := 0; p < n; p++ {
		if e.rows[p] != e.cols[p] {
			extra = append(extra, int64(p))
		}
	}
	skew := st == SkewSymmetricLower || st == SkewSymmetricUpper
	herm := st == HermitianLower || st == HermitianUpper
	if (skew || herm) && e.iso {
		e.pos = make([]int64, n)
		e.vals = gather(e.vals, e.pos)
		e.iso = false
		for p := range e.pos {
			e.pos[p] = int64(p)
		}
	}
	vals := e.vals
	if skew || herm {
		vals = mlfeed.NewBuffer(e.vals.Type, e.vals.Len()+len(extra))
		copy(vals.Bytes, e.vals.Bytes)
	}
	base := e.vals.Len()
	for i, p := range extra {
		e.rows = append(e.rows, e.cols[p])
		e.cols = append(e.cols, e.rows[p])
		switch {
		case skew || herm:
			q := base + i
			copyElem(vals, q, e.vals, int(e.pos[p]))
			if skew {
				negate(vals, q)
			} else {
				conjugate(vals, q)
			}
			e.pos = append(e.pos, int64(q))
		default:
			e.pos = append(e.pos, e.pos[p])
		}
	}
	e.vals = vals
}

func copyElem(dst mlfeed.Buffer, i int, src mlfeed.Buffer, j int) {
	sz := dst.Type.Size()
	copy(dst.Bytes[i*sz:(i+1)*sz], src.Bytes[j*sz:(j+1)*sz])
}

// negate negates element i in place (integers in two's complement, so unsigned values wrap).
func negate(b mlfeed.Buffer, i int) {
	switch b.Type {
	case mlfeed.Complex64:
		f := mlfeed.Buffer{Type: mlfeed.Float32, Bytes: b.Bytes[8*i : 8*i+8]}
		f.SetFloat64(0, -f.Float64At(0))
		f.SetFloat64(1, -f.Float64At(1))
	case mlfeed.Complex128:
		f := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: b.Bytes[16*i : 16*i+16]}
		f.SetFloat64(0, -f.Float64At(0))
		f.SetFloat64(1, -f.Float64At(1))
	case mlfeed.Float32, mlfeed.Float64:
		b.SetFloat64(i, -b.Float64At(i))
	default:
		sz := b.Type.Size()
		v := uint64(-b.Int64At(i))
		for k := 0; k < sz; k++ {
			b.Bytes[i*sz+k] = byte(v >> (8 * k))
		}
	}
}

// conjugate negates the imaginary part of complex element i.
func conjugate(b mlfeed.Buffer, i int) {
	switch b.Type {
	case mlfeed.Complex64:
		f := mlfeed.Buffer{Type: mlfeed.Float32, Bytes: b.Bytes[8*i : 8*i+8]}
		f.SetFloat64(1, -f.Float64At(1))
	case mlfeed.Complex128:
		f := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: b.Bytes[16*i : 16*i+16]}
		f.SetFloat64(1, -f.Float64At(1))
	}
}

// sortBy sorts the entries row-major (byCol false) or column-major, and reports a duplicate.
func (e *entries) sortBy(byCol bool) error {
	major, minor := e.rows, e.cols
	if byCol {
		major, minor = e.cols, e.rows
	}
	less := func(i, j int) bool {
		if major[i] != major[j] {
			return major[i] < major[j]
		}
		return minor[i] < minor[j]
	}
	n := len(major)
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = less(i-1, i)
	}
	if !sorted {
		nmajor, nminor := e.nrows, e.ncols
		if byCol {
			nmajor, nminor = e.ncols, e.nrows
		}
		var perm []int64
		if lim := int64(4*n) + 1<<20; nmajor <= lim && nminor <= lim {
			// Two stable counting sorts, by the minor then the major coordinate: linear time.
			perm = countsort.Order(countsort.Order(nil, minor, nminor), major, nmajor)
		} else {
			perm = make([]int64, n)
			for i := range perm {
				perm[i] = int64(i)
			}
			sort.Slice(perm, func(a, b int) bool { return less(int(perm[a]), int(perm[b])) })
		}
		r, c, p := make([]int64, n), make([]int64, n), make([]int64, n)
		for i, j := range perm {
			r[i], c[i], p[i] = e.rows[j], e.cols[j], e.pos[j]
		}
		e.rows, e.cols, e.pos = r, c, p
		major, minor = e.rows, e.cols
		if byCol {
			major, minor = e.cols, e.rows
		}
	}
	for i := 1; i < n; i++ {
		if major[i] == major[i-1] && minor[i] == minor[i-1] {
			return fmt.Errorf("%w: %w: entry (%d, %d) is stored twice", ErrFormat, errDuplicate, e.rows[i], e.cols[i])
		}
	}
	return nil
}

// values returns the entries' values in entry order (one element when iso).
func (e *entries) values() mlfeed.Buffer {
	if e.iso {
		return e.vals
	}
	identity := len(e.pos) == e.vals.Len()
	for i, p := range e.pos {
		if !identity {
			break
		}
		identity = p == int64(i)
	}
	if identity {
		return e.vals
	}
	return gather(e.vals, e.pos)
}
