package mtx

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/internal/nantext"
)

// WriterOptions control Write. The zero value writes sparse formats as coordinate files and
// dense formats as array files, with the matrix's "comment" user key as comment lines.
type WriterOptions struct {
	// Format forces "coordinate" or "array"; empty chooses by the matrix's format.
	Format string
	// Comment, if set, replaces the comment lines (each line gets a leading '%' if it has
	// none).
	Comment string
}

// WriteOptions is the former name of WriterOptions.
//
// Deprecated: use WriterOptions.
type WriteOptions = WriterOptions

// Write writes m as Matrix Market. Real values are written in the shortest form that reads
// back exactly, integers as integers, complex values as two reals; bint8 values are written as
// a pattern file (unless an explicit 0 is stored, which makes an integer file). A symmetric,
// skew-symmetric or hermitian structure is written as that symmetry with the lower triangle.
func Write(w io.Writer, m *binsparse.Matrix, opts *WriterOptions) error {
	if opts == nil {
		opts = &WriterOptions{}
	}
	if err := m.Validate(); err != nil {
		return err
	}
	d := &m.Descriptor
	if len(d.Shape) > 2 {
		return fmt.Errorf("%w: a %d-dimensional tensor is not a matrix", ErrUnsupported, len(d.Shape))
	}
	rows, cols := int64(1), d.Shape[0]
	if len(d.Shape) == 2 {
		rows, cols = d.Shape[0], d.Shape[1]
	}
	format := opts.Format
	if format == "" {
		format = "coordinate"
		if d.IsDense() {
			format = "array"
		}
	}
	if format != "coordinate" && format != "array" {
		return fmt.Errorf("%w: Matrix Market format %q", ErrUnsupported, format)
	}
	symmetry := "general"
	switch d.Structure {
	case binsparse.SymmetricLower, binsparse.SymmetricUpper:
		symmetry = "symmetric"
	case binsparse.SkewSymmetricLower, binsparse.SkewSymmetricUpper:
		symmetry = "skew-symmetric"
	case binsparse.HermitianLower, binsparse.HermitianUpper:
		symmetry = "hermitian"
	}
	var r, c []int64
	var vals mlfeed.Buffer
	var err error
	if format == "array" {
		dm, err := m.Convert(binsparse.DMATC, nil)
		if err != nil {
			return err
		}
		vals = dm.Values()
		if !d.Structure.Lower() && d.Structure != binsparse.General {
			vals = lowerFromUpper(vals, rows, d.Structure)
		}
	} else {
		if r, c, vals, err = m.Entries(false); err != nil {
			return err
		}
		if !d.Structure.Lower() && d.Structure != binsparse.General {
			r, c = c, r
			vals = mlfeed.Buffer{Type: vals.Type, Bytes: append([]byte(nil), vals.Bytes...)}
			for k := range r {
				mirrorValue(vals, k, d.Structure)
			}
		}
	}
	field := fieldOf(vals.Type)
	if vals.Type == mlfeed.Bool && (format == "array" || hasZero(vals)) {
		field = "integer"
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%s matrix %s %s %s\n", banner, format, field, symmetry)
	for _, l := range comments(d, opts) {
		bw.WriteString(l + "\n")
	}
	buf := make([]byte, 0, 128)
	if format == "array" {
		fmt.Fprintf(bw, "%d %d\n", rows, cols)
		for j := int64(0); j < cols; j++ {
			i0 := int64(0)
			switch symmetry {
			case "skew-symmetric":
				i0 = j + 1
			case "symmetric", "hermitian":
				i0 = j
			}
			for i := i0; i < rows; i++ {
				buf = appendValue(buf[:0], vals, int(j*rows+i))
				buf = append(buf, '\n')
				bw.Write(buf)
			}
		}
		return bw.Flush()
	}
	fmt.Fprintf(bw, "%d %d %d\n", rows, cols, len(r))
	for k := range r {
		buf = strconv.AppendInt(buf[:0], r[k]+1, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, c[k]+1, 10)
		if field != "pattern" {
			buf = append(buf, ' ')
			buf = appendValue(buf, vals, k)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

func fieldOf(t mlfeed.ElemType) string {
	switch {
	case t == mlfeed.Bool:
		return "pattern"
	case t.IsInteger():
		return "integer"
	case t == mlfeed.Complex64 || t == mlfeed.Complex128:
		return "complex"
	}
	return "real"
}

func hasZero(b mlfeed.Buffer) bool {
	for _, c := range b.Bytes {
		if c == 0 {
			return true
		}
	}
	return false
}

// comments returns the comment lines to write.
func comments(d *binsparse.Descriptor, opts *WriterOptions) []string {
	text := opts.Comment
	if text == "" {
		if raw, ok := d.User["comment"]; ok {
			json.Unmarshal(raw, &text) // a non-string comment key is not written
		}
	}
	if text == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "%") {
			l = "%" + l
		}
		out = append(out, l)
	}
	return out
}

// appendValue appends element i of b in Matrix Market text.
func appendValue(buf []byte, b mlfeed.Buffer, i int) []byte {
	switch b.Type {
	case mlfeed.Float64:
		return appendFloat(buf, b.Float64At(i), 64)
	case mlfeed.Float32:
		return appendFloat(buf, wide32(b, i), 32)
	case mlfeed.Complex128:
		f := mlfeed.Buffer{Type: mlfeed.Float64, Bytes: b.Bytes}
		buf = appendFloat(buf, f.Float64At(2*i), 64)
		return appendFloat(append(buf, ' '), f.Float64At(2*i+1), 64)
	case mlfeed.Complex64:
		f := mlfeed.Buffer{Type: mlfeed.Float32, Bytes: b.Bytes}
		buf = appendFloat(buf, wide32(f, 2*i), 32)
		return appendFloat(append(buf, ' '), wide32(f, 2*i+1), 32)
	case mlfeed.Uint64:
		return strconv.AppendUint(buf, uint64(b.Int64At(i)), 10)
	}
	return strconv.AppendInt(buf, b.Int64At(i), 10)
}

// wide32 returns float32 element i of b as a float64, a NaN with its payload and quiet bit
// as they are (package nantext).
func wide32(b mlfeed.Buffer, i int) float64 {
	f := b.Float32s()[i]
	if f != f {
		return nantext.Widen32(math.Float32bits(f))
	}
	return float64(f)
}

// appendFloat writes the shortest decimal that reads back exactly; infinities as "inf" and
// "-inf", NaN as "nan" (the quiet NaN numpy and strtod give; "-nan" with the sign bit) and
// other NaNs as "nan(0xMANTISSA)", which strtod reads to the same bits (package nantext).
func appendFloat(buf []byte, v float64, bits int) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(buf, "inf"...)
	case math.IsInf(v, -1):
		return append(buf, "-inf"...)
	case math.IsNaN(v):
		return nantext.Append(buf, v)
	}
	return strconv.AppendFloat(buf, v, 'g', -1, bits)
}

// mirrorValue turns element k into the value of the transposed position.
func mirrorValue(b mlfeed.Buffer, k int, st binsparse.Structure) {
	skew := st == binsparse.SkewSymmetricUpper
	herm := st == binsparse.HermitianUpper
	if !skew && !herm {
		return
	}
	switch b.Type {
	case mlfeed.Complex64, mlfeed.Complex128:
		ft := mlfeed.Float32
		if b.Type == mlfeed.Complex128 {
			ft = mlfeed.Float64
		}
		f := mlfeed.Buffer{Type: ft, Bytes: b.Bytes}
		if skew {
			f.SetFloat64(2*k, -f.Float64At(2*k))
		}
		f.SetFloat64(2*k+1, -f.Float64At(2*k+1))
	case mlfeed.Float32, mlfeed.Float64:
		b.SetFloat64(k, -b.Float64At(k))
	default:
		b.SetFloat64(k, -float64(b.Int64At(k)))
	}
}

// lowerFromUpper returns a column-major n×n array whose lower triangle is the transposed
// upper triangle of vals (mirrored as the structure says).
func lowerFromUpper(vals mlfeed.Buffer, n int64, st binsparse.Structure) mlfeed.Buffer {
	out := mlfeed.NewBuffer(vals.Type, vals.Len())
	sz := vals.Type.Size()
	for j := int64(0); j < n; j++ {
		for i := j; i < n; i++ {
			src, dst := int(i*n+j), int(j*n+i) // (j, i) in the upper triangle -> (i, j)
			copy(out.Bytes[dst*sz:(dst+1)*sz], vals.Bytes[src*sz:(src+1)*sz])
			if i != j {
				mirrorValue(out, dst, st)
			}
		}
	}
	return out
}
