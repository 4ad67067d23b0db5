// Package sparsetest holds what tests of sparse matrices share: a Binsparse matrix's entries
// and its dense form as float64s, to compare matrices whatever their storage.
package sparsetest

import (
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
)

// Entries returns m's entries (structures expanded), each value as float64s: one, or two for
// a complex value (real, imaginary).
func Entries(t testing.TB, m *binsparse.Matrix) (rows, cols []int64, vals [][]float64) {
	t.Helper()
	r, c, v, err := m.Entries(true)
	if err != nil {
		t.Fatal(err)
	}
	per, ft := 1, v.Type
	switch v.Type {
	case mlfeed.Complex64:
		per, ft = 2, mlfeed.Float32
	case mlfeed.Complex128:
		per, ft = 2, mlfeed.Float64
	}
	fv := mlfeed.Buffer{Type: ft, Bytes: v.Bytes}
	vals = make([][]float64, len(r))
	for k := range r {
		vals[k] = make([]float64, per)
		for p := range per {
			vals[k][p] = fv.Float64At(k*per + p)
		}
		rows, cols = append(rows, int64(r[k])), append(cols, int64(c[k]))
	}
	return rows, cols, vals
}

// Dense returns the logical matrix (structures expanded, a real fill value applied) as rows of
// float64; complex entries take two columns (real, imaginary). A vector is one row.
func Dense(t testing.TB, m *binsparse.Matrix) [][]float64 {
	t.Helper()
	sh := m.Descriptor.Shape
	nrows, ncols := int64(1), sh[0]
	if len(sh) == 2 {
		nrows, ncols = sh[0], sh[1]
	}
	per := 1
	if vt := m.Descriptor.ValueType().Type; vt == mlfeed.Complex64 || vt == mlfeed.Complex128 {
		per = 2
	}
	fill := 0.0
	if fb, ok := m.Arrays["fill_value"]; ok && m.Descriptor.Fill && per == 1 {
		fill = fb.Float64At(0)
	}
	out := make([][]float64, nrows)
	for i := range out {
		out[i] = make([]float64, int(ncols)*per)
		for j := range out[i] {
			out[i][j] = fill
		}
	}
	r, c, vals := Entries(t, m)
	for k := range r {
		copy(out[r[k]][int(c[k])*per:], vals[k])
	}
	return out
}
