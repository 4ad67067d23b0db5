package binsparse

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// New returns a matrix of format f (a predefined format) and shape holding arrays, with a
// descriptor derived from the arrays' element types, and validates it. Mark an iso values
// array by setting iso.
func New(f Format, shape []int64, arrays map[string]mlfeed.Buffer, iso bool) (*Matrix, error) {
	f = f.canonical()
	lv := predefined(f)
	if lv == nil {
		return nil, fmt.Errorf("%w: New needs a predefined format, not %q", ErrUnsupported, f)
	}
	m := &Matrix{Descriptor: Descriptor{Version: Version, Format: f, Shape: shape, NumberOfStoredValues: -1, DataTypes: map[string]DataType{}}, Arrays: arrays}
	if len(shape) != lv.Rank() {
		return nil, fmt.Errorf("%w: format %s needs %d dimensions, shape is %v", ErrFormat, f, lv.Rank(), shape)
	}
	for name, b := range arrays {
		m.Descriptor.DataTypes[name] = DataType{Type: b.Type, Iso: iso && name == "values"}
	}
	if v, ok := arrays["values"]; !ok || !validValueType(v.Type) {
		return nil, fmt.Errorf("%w: values missing or of a type Binsparse cannot hold", ErrFormat)
	}
	if _, ok := arrays["fill_value"]; ok {
		m.Descriptor.Fill = true
	}
	if err := m.Descriptor.check(); err != nil {
		return nil, err
	}
	n, err := m.check(nil)
	if err != nil {
		return nil, err
	}
	m.Descriptor.NumberOfStoredValues = n
	return m, nil
}

// ConvertOptions control Matrix.Convert. The zero value keeps the structure as stored and
// picks the smallest unsigned index types that fit, as the C reference's mtx2bsp does.
type ConvertOptions struct {
	// Expand stores both triangles of a symmetric, hermitian or skew-symmetric matrix and
	// makes the result general.
	Expand bool
	// IndexType, if set, is the integer type of every index and pointer array of the result.
	IndexType mlfeed.ElemType
}

// Convert returns the matrix in format f. Sparse results are sorted without duplicates;
// converting a dense matrix to a sparse format leaves out the entries equal to the fill value
// (zero without one). Vectors convert between DVEC and CVEC, matrices between the matrix
// formats; custom formats convert to predefined ones of the same rank. The result shares no
// arrays with m unless it is m itself (same format, nothing to expand).
func (m *Matrix) Convert(f Format, opts *ConvertOptions) (*Matrix, error) {
	if opts == nil {
		opts = &ConvertOptions{}
	}
	f = f.canonical()
	d := &m.Descriptor
	expand := opts.Expand && d.Structure != General
	if f == d.Format && !expand && opts.IndexType == mlfeed.Invalid {
		return m, nil
	}
	lv := predefined(f)
	if lv == nil {
		return nil, fmt.Errorf("%w: cannot convert to format %q", ErrUnsupported, f)
	}
	if lv.Rank() != len(d.Shape) {
		return nil, fmt.Errorf("%w: cannot convert a %d-dimensional array to %s", ErrUnsupported, len(d.Shape), f)
	}
	if opts.IndexType != mlfeed.Invalid && !opts.IndexType.IsInteger() {
		return nil, fmt.Errorf("%w: index type %s is not an integer type", ErrUnsupported, opts.IndexType)
	}
	e, err := m.entries(!isDenseFormat(f), expand)
	if err != nil {
		return nil, err
	}
	byCol := f == CSC || f == DCSC || f == COOC || f == DMATC
	if err := e.sortBy(byCol); err != nil {
		return nil, err
	}
	out := &Matrix{Descriptor: Descriptor{
		Version: Version, Format: f, Shape: append([]int64(nil), d.Shape...),
		Fill: d.Fill, Structure: d.Structure, Attributes: d.Attributes, User: d.User,
		DataTypes: map[string]DataType{},
	}, Arrays: map[string]mlfeed.Buffer{}}
	if expand {
		out.Descriptor.Structure = General
	}
	if fv, ok := m.Arrays["fill_value"]; ok {
		out.Arrays["fill_value"] = fv
		out.Descriptor.DataTypes["fill_value"] = d.DataTypes["fill_value"]
	}
	if err := out.build(e, m.fillBytes(), opts.IndexType); err != nil {
		return nil, err
	}
	for name, b := range out.Arrays {
		if name != "fill_value" {
			out.Descriptor.DataTypes[name] = DataType{Type: b.Type, Iso: name == "values" && e.iso}
		}
	}
	out.Descriptor.NumberOfStoredValues = int64(len(e.rows))
	if isDenseFormat(f) {
		out.Descriptor.NumberOfStoredValues = int64(out.Values().Len())
	}
	return out, nil
}

func isDenseFormat(f Format) bool { return f == DVEC || f == DMATR || f == DMATC }

// build fills the arrays of format m.Descriptor.Format from sorted entries.
func (m *Matrix) build(e *entries, fill []byte, it mlfeed.ElemType) error {
	f := m.Descriptor.Format
	n := int64(len(e.rows))
	idxType := func(max int64) mlfeed.ElemType {
		if it != mlfeed.Invalid {
			return it
		}
		return MinIndexType(max)
	}
	maxDim := e.nrows
	if e.ncols > maxDim {
		maxDim = e.ncols
	}
	if it != mlfeed.Invalid {
		lim := int64(1)<<(8*it.Size()-1) - 1
		if !it.IsSigned() && it.Size() < 8 {
			lim = int64(1)<<(8*it.Size()) - 1
		}
		if maxDim > lim || n > lim {
			return fmt.Errorf("%w: index type %s cannot hold %d", mlfeed.ErrRange, it, max(maxDim, n))
		}
	}
	it2 := idxType(maxDim)
	switch f {
	case DVEC, DMATR, DMATC:
		total := e.nrows * e.ncols
		if total > maxElements {
			return fmt.Errorf("%w: a dense %dx%d array", ErrTooLarge, e.nrows, e.ncols)
		}
		vals := mlfeed.NewBuffer(e.vals.Type, int(total))
		sz := e.vals.Type.Size()
		if string(fill) != string(make([]byte, len(fill))) {
			for i := 0; i < int(total); i++ {
				copy(vals.Bytes[i*sz:], fill)
			}
		}
		for p := range e.rows {
			at := e.rows[p]*e.ncols + e.cols[p]
			if f == DMATC {
				at = e.cols[p]*e.nrows + e.rows[p]
			}
			src := int(e.pos[p])
			copy(vals.Bytes[int(at)*sz:int(at+1)*sz], e.vals.Bytes[src*sz:(src+1)*sz])
		}
		e.iso = false
		m.Arrays["values"] = vals
		return nil
	case CVEC:
		m.Arrays["indices_0"] = fromInt64s(e.cols, it2)
	case COOR:
		m.Arrays["indices_0"] = fromInt64s(e.rows, it2)
		m.Arrays["indices_1"] = fromInt64s(e.cols, it2)
	case COOC:
		m.Arrays["indices_0"] = fromInt64s(e.cols, it2)
		m.Arrays["indices_1"] = fromInt64s(e.rows, it2)
	case CSR, CSC, DCSR, DCSC:
		major, minor, nmajor := e.rows, e.cols, e.nrows
		if f == CSC || f == DCSC {
			major, minor, nmajor = e.cols, e.rows, e.ncols
		}
		var ptr, outer []int64
		if f == CSR || f == CSC {
			ptr = make([]int64, nmajor+1)
			for _, r := range major {
				ptr[r+1]++
			}
			for i := int64(1); i <= nmajor; i++ {
				ptr[i] += ptr[i-1]
			}
		} else {
			ptr = []int64{0}
			for i, r := range major {
				if i == 0 || r != major[i-1] {
					outer = append(outer, r)
					ptr = append(ptr, int64(i))
				}
				ptr[len(ptr)-1] = int64(i + 1)
			}
			m.Arrays["indices_0"] = fromInt64s(outer, it2)
		}
		m.Arrays["pointers_to_1"] = fromInt64s(ptr, idxType(n))
		m.Arrays["indices_1"] = fromInt64s(minor, it2)
	}
	m.Arrays["values"] = e.values()
	return nil
}

// Entries returns the matrix's entries sorted by row, then column: their coordinates and
// values (an iso value repeated for every entry). Vectors have row 0; tensors of rank > 2
// have their trailing dimensions flattened into the column. Dense formats leave out entries
// equal to the fill value (zero without one). With expand, the other triangle of a symmetric,
// hermitian or skew-symmetric matrix is added. The matrix should be valid (Validate).
func (m *Matrix) Entries(expand bool) (rows, cols []int64, vals mlfeed.Buffer, err error) {
	e, err := m.entries(true, expand && m.Descriptor.Structure != General)
	if err != nil {
		return nil, nil, mlfeed.Buffer{}, err
	}
	if err := e.sortBy(false); err != nil {
		return nil, nil, mlfeed.Buffer{}, err
	}
	if e.iso {
		e.pos = make([]int64, len(e.rows))
		e.iso = false
	}
	return e.rows, e.cols, e.values(), nil
}
