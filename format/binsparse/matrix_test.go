package binsparse

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// u8 and friends build index and value buffers for tests.
func u8(v ...int64) mlfeed.Buffer  { return fromInt64s(v, mlfeed.Uint8) }
func u64(v ...int64) mlfeed.Buffer { return fromInt64s(v, mlfeed.Uint64) }
func f64(v ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float64, len(v))
	copy(b.Float64s(), v)
	return b
}

// randomCOO returns a random rows×cols COOR matrix with about density*rows*cols float64
// entries.
func randomCOO(t testing.TB, r *rand.Rand, rows, cols int64, density float64) *Matrix {
	var ri, ci []int64
	var vs []float64
	for i := int64(0); i < rows; i++ {
		for j := int64(0); j < cols; j++ {
			if r.Float64() < density {
				ri, ci = append(ri, i), append(ci, j)
				vs = append(vs, float64(r.Intn(2000)-1000)/8)
			}
		}
	}
	it := MinIndexType(max(rows, cols))
	m, err := New(COOR, []int64{rows, cols}, map[string]mlfeed.Buffer{
		"indices_0": fromInt64s(ri, it), "indices_1": fromInt64s(ci, it), "values": f64(vs...)}, false)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// dense returns the logical matrix as rows of float64 (complex: real parts and imaginary parts
// interleaved), expanding structures.
func dense(t testing.TB, m *Matrix) [][]float64 {
	t.Helper()
	rows, cols := m.Descriptor.Rows(), m.Descriptor.Shape[len(m.Descriptor.Shape)-1]
	per := 1
	if _, p := storage(m.Values().Type); p == 2 {
		per = 2
	}
	out := make([][]float64, rows)
	for i := range out {
		out[i] = make([]float64, int(cols)*per)
	}
	fill := m.fillBytes()
	fb := mlfeed.Buffer{Type: m.Values().Type, Bytes: fill}
	if v := fb.Float64At(0); v != 0 && per == 1 {
		for i := range out {
			for j := range out[i] {
				out[i][j] = v
			}
		}
	}
	r, c, v, err := m.Entries(true)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := storage(v.Type)
	fv := mlfeed.Buffer{Type: st, Bytes: v.Bytes}
	for k := range r {
		for p := 0; p < per; p++ {
			out[r[k]][int(c[k])*per+p] = fv.Float64At(k*per + p)
		}
	}
	return out
}

func TestConvertAllFormats(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	formats := []Format{CSR, CSC, DCSR, DCSC, COOR, COOC, DMATR, DMATC}
	for _, shape := range [][2]int64{{7, 5}, {1, 1}, {0, 3}, {4, 0}, {30, 300}, {300, 2}} {
		for _, density := range []float64{0, 0.1, 0.6, 1} {
			m := randomCOO(t, r, shape[0], shape[1], density)
			want := dense(t, m)
			for _, f := range formats {
				c, err := m.Convert(f, nil)
				if err != nil {
					t.Fatalf("%v to %s: %v", shape, f, err)
				}
				if err := c.Validate(); err != nil {
					t.Fatalf("%v %s: invalid result: %v", shape, f, err)
				}
				if c.Format() != f {
					t.Fatalf("format %s, want %s", c.Format(), f)
				}
				if got := dense(t, c); !reflect.DeepEqual(got, want) {
					t.Fatalf("%v density %v: %s differs", shape, density, f)
				}
				for _, g := range formats {
					back, err := c.Convert(g, nil)
					if err != nil {
						t.Fatal(err)
					}
					if got := dense(t, back); !reflect.DeepEqual(got, want) {
						t.Fatalf("%v: %s -> %s differs", shape, f, g)
					}
				}
			}
		}
	}
}

func TestConvertVectors(t *testing.T) {
	m, err := New(CVEC, []int64{9}, map[string]mlfeed.Buffer{"indices_0": u8(2, 5, 8), "values": f64(13, 16, 19)}, false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Convert(DVEC, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Values().Float64s(); !reflect.DeepEqual(got, []float64{0, 0, 13, 0, 0, 16, 0, 0, 19}) {
		t.Errorf("DVEC values %v", got)
	}
	back, err := d.Convert(CVEC, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Arrays["indices_0"], m.Arrays["indices_0"]) || !reflect.DeepEqual(back.Values(), m.Values()) {
		t.Errorf("CVEC round trip: %v", back.Arrays)
	}
	if _, err := m.Convert(CSR, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("vector to CSR: %v", err)
	}
}

func TestExpandStructures(t *testing.T) {
	// 3x3 lower triangle: (0,0)=1 (1,0)=2 (2,1)=3.
	for _, c := range []struct {
		st   Structure
		want [][]float64
	}{
		{SymmetricLower, [][]float64{{1, 2, 0}, {2, 0, 3}, {0, 3, 0}}},
	} {
		m, err := New(COOR, []int64{3, 3}, map[string]mlfeed.Buffer{"indices_0": u8(0, 1, 2), "indices_1": u8(0, 0, 1), "values": f64(1, 2, 3)}, false)
		if err != nil {
			t.Fatal(err)
		}
		m.Descriptor.Structure = c.st
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := dense(t, m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.st, got, c.want)
		}
		e, err := m.Convert(CSR, &ConvertOptions{Expand: true})
		if err != nil {
			t.Fatal(err)
		}
		if e.Descriptor.Structure != General || e.NNZ() != 5 {
			t.Errorf("expanded: structure %q nnz %d", e.Descriptor.Structure, e.NNZ())
		}
		kept, _ := m.Convert(CSC, nil)
		if kept.Descriptor.Structure != c.st || kept.NNZ() != 3 {
			t.Errorf("kept: structure %q nnz %d", kept.Descriptor.Structure, kept.NNZ())
		}
	}
	// skew-symmetric: the mirror is negated; hermitian: conjugated.
	sk, _ := New(COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": u8(1), "indices_1": u8(0), "values": f64(4)}, false)
	sk.Descriptor.Structure = SkewSymmetricLower
	if got := dense(t, sk); !reflect.DeepEqual(got, [][]float64{{0, -4}, {4, 0}}) {
		t.Errorf("skew: %v", got)
	}
	cv := mlfeed.NewBuffer(mlfeed.Complex128, 2)
	copy(mlfeed.Buffer{Type: mlfeed.Float64, Bytes: cv.Bytes}.Float64s(), []float64{2, 0, 1.5, 0.5})
	h, err := New(COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": u8(0, 1), "indices_1": u8(0, 0), "values": cv}, false)
	if err != nil {
		t.Fatal(err)
	}
	h.Descriptor.Structure = HermitianLower
	if got := dense(t, h); !reflect.DeepEqual(got, [][]float64{{2, 0, 1.5, -0.5}, {1.5, 0.5, 0, 0}}) {
		t.Errorf("hermitian: %v", got)
	}
	// iso values stay iso under symmetric expansion.
	iso, _ := New(CSR, []int64{2, 2}, map[string]mlfeed.Buffer{"pointers_to_1": u8(0, 0, 1), "indices_1": u8(0), "values": {Type: mlfeed.Bool, Bytes: []byte{1}}}, true)
	iso.Descriptor.Structure = SymmetricLower
	e, err := iso.Convert(COOR, &ConvertOptions{Expand: true})
	if err != nil || !e.Descriptor.ValueType().Iso || e.NNZ() != 2 {
		t.Errorf("iso expansion: %v %+v", err, e)
	}
}

func TestValidateErrors(t *testing.T) {
	csr := func(ptr, idx mlfeed.Buffer, vals mlfeed.Buffer) *Matrix {
		return &Matrix{Descriptor: Descriptor{Format: CSR, Shape: []int64{3, 4}, NumberOfStoredValues: -1,
			DataTypes: map[string]DataType{"pointers_to_1": {Type: ptr.Type}, "indices_1": {Type: idx.Type}, "values": {Type: vals.Type}}},
			Arrays: map[string]mlfeed.Buffer{"pointers_to_1": ptr, "indices_1": idx, "values": vals}}
	}
	for _, c := range []struct {
		name  string
		m     *Matrix
		array string
		index int64
		is    error
	}{
		{"pointer count", csr(u8(0, 1, 2), u8(0, 1), f64(1, 2)), "pointers_to_1", -1, nil},
		{"first pointer", csr(u8(1, 1, 2, 2), u8(0, 1), f64(1, 2)), "pointers_to_1", 0, nil},
		{"decreasing", csr(u8(0, 2, 1, 2), u8(0, 1), f64(1, 2)), "pointers_to_1", 2, nil},
		{"last pointer", csr(u8(0, 1, 1, 3), u8(0, 1), f64(1, 2)), "pointers_to_1", 3, nil},
		{"out of bounds", csr(u8(0, 1, 1, 2), u8(0, 4), f64(1, 2)), "indices_1", 1, nil},
		{"unsorted", csr(u8(0, 2, 2, 2), u8(3, 1), f64(1, 2)), "indices_1", 1, errUnsorted},
		{"duplicate", csr(u8(0, 2, 2, 2), u8(1, 1), f64(1, 2)), "indices_1", 1, errDuplicate},
		{"values length", csr(u8(0, 1, 1, 2), u8(0, 1), f64(1)), "values", -1, nil},
		{"missing array", &Matrix{Descriptor: Descriptor{Format: CSR, Shape: []int64{1, 1}, NumberOfStoredValues: -1,
			DataTypes: map[string]DataType{"pointers_to_1": {Type: mlfeed.Uint8}, "indices_1": {Type: mlfeed.Uint8}, "values": {Type: mlfeed.Float64}}},
			Arrays: map[string]mlfeed.Buffer{"values": f64()}}, "pointers_to_1", -1, nil},
		{"negative index", csr(u8(0, 1, 1, 1), mlfeed.Buffer{Type: mlfeed.Int8, Bytes: []byte{0xff}}, f64(1)), "indices_1", 0, nil},
		{"bint8 value", csr(u8(0, 1, 1, 1), u8(0), mlfeed.Buffer{Type: mlfeed.Bool, Bytes: []byte{2}}), "values", 0, nil},
	} {
		err := c.m.Validate()
		var ae *ArrayError
		if !errors.As(err, &ae) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want an ArrayError", c.name, err)
			continue
		}
		if ae.Array != c.array || ae.Index != c.index {
			t.Errorf("%s: error names %s[%d], want %s[%d]: %v", c.name, ae.Array, ae.Index, c.array, c.index, err)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.is)
		}
	}
	// Structure: an upper-triangle entry in a symmetric_lower matrix.
	m, _ := New(COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": u8(0), "indices_1": u8(1), "values": f64(1)}, false)
	m.Descriptor.Structure = SymmetricLower
	if err := m.Validate(); err == nil {
		t.Error("upper entry in symmetric_lower accepted")
	}
	// Skew-symmetric matrices have no diagonal.
	m, _ = New(COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": u8(1), "indices_1": u8(1), "values": f64(1)}, false)
	m.Descriptor.Structure = SkewSymmetricLower
	if err := m.Validate(); err == nil {
		t.Error("diagonal entry in skew_symmetric_lower accepted")
	}
	// iso arrays have one element; number_of_stored_values must match.
	m = &Matrix{Descriptor: Descriptor{Format: CVEC, Shape: []int64{4}, NumberOfStoredValues: 3,
		DataTypes: map[string]DataType{"indices_0": {Type: mlfeed.Uint8}, "values": {Type: mlfeed.Float64, Iso: true}}},
		Arrays: map[string]mlfeed.Buffer{"indices_0": u8(0, 1), "values": f64(1, 2)}}
	if err := m.Validate(); err == nil {
		t.Error("iso array of 2 elements accepted")
	}
	m.Arrays["values"] = f64(5)
	if err := m.Validate(); err == nil {
		t.Error("number_of_stored_values 3 for 2 indices accepted")
	}
	m.Descriptor.NumberOfStoredValues = 2
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

func TestValidateAllReportsOrdering(t *testing.T) {
	m := &Matrix{Descriptor: Descriptor{Format: COOR, Shape: []int64{3, 3}, NumberOfStoredValues: -1,
		DataTypes: map[string]DataType{"indices_0": {Type: mlfeed.Uint8}, "indices_1": {Type: mlfeed.Uint8}, "values": {Type: mlfeed.Float64}}},
		Arrays: map[string]mlfeed.Buffer{"indices_0": u8(2, 0), "indices_1": u8(0, 1), "values": f64(1, 2)}}
	var errs []error
	m.ValidateAll(func(err error) bool { errs = append(errs, err); return true })
	if len(errs) != 1 || !errors.Is(errs[0], errUnsorted) {
		t.Fatalf("errors %v", errs)
	}
	// Converting sorts.
	c, err := m.Convert(CSR, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := dense(t, c); !reflect.DeepEqual(got, [][]float64{{0, 2, 0}, {0, 0, 0}, {1, 0, 0}}) {
		t.Errorf("%v", got)
	}
}

func TestCustomTensor(t *testing.T) {
	// The C reference's tensor: dense(1) -> sparse(2), shape [2,3,4].
	d, err := ParseDescriptor([]byte(descriptorCases[4].js))
	if err != nil {
		t.Fatal(err)
	}
	m := &Matrix{Descriptor: *d, Arrays: map[string]mlfeed.Buffer{
		"pointers_to_1": u64(0, 2, 5), "indices_1": u8(0, 2, 1, 1, 2), "indices_2": u8(1, 3, 0, 2, 2), "values": f64(1, 2, 3, 4, 5)}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	r, c, v, err := m.Entries(false)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r, c, v.Float64s())
	if want := "[0 0 1 1 1] [1 11 4 6 10] [1 2 3 4 5]"; got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
	m.Arrays["indices_2"] = u8(1, 4, 0, 2, 2)
	if err := m.Validate(); err == nil {
		t.Error("index 4 in a dimension of 4 accepted")
	}
}

func TestConvertIndexType(t *testing.T) {
	m := randomCOO(t, rand.New(rand.NewSource(2)), 20, 20, 0.3)
	c, err := m.Convert(CSR, &ConvertOptions{IndexType: mlfeed.Int64})
	if err != nil {
		t.Fatal(err)
	}
	if c.Arrays["indices_1"].Type != mlfeed.Int64 || c.Descriptor.DataTypes["pointers_to_1"].Type != mlfeed.Int64 {
		t.Errorf("index types %v", c.Descriptor.DataTypes)
	}
	if _, err := randomCOO(t, rand.New(rand.NewSource(2)), 300, 3, 0.5).Convert(CSR, &ConvertOptions{IndexType: mlfeed.Int8}); !errors.Is(err, mlfeed.ErrRange) {
		t.Errorf("int8 indices for 300 rows: %v", err)
	}
}

// TestParallelCheck checks a large CSR matrix serially and in parallel parts: the same first
// ordering problem and the same first bad index.
func TestParallelCheck(t *testing.T) {
	const rows, per = 300000, 10
	ptr := mlfeed.NewBuffer(mlfeed.Uint64, rows+1)
	idx := mlfeed.NewBuffer(mlfeed.Uint32, rows*per)
	p, ix := ptr.Uint64s(), idx.Uint32s()
	for r := 0; r < rows; r++ {
		p[r+1] = uint64((r + 1) * per)
		for k := 0; k < per; k++ {
			ix[r*per+k] = uint32(3 * k)
		}
	}
	s := sched.New(4, 0)
	ctx := sched.WithContext(context.Background(), s)
	m := &Matrix{Descriptor: Descriptor{Version: Version, Format: CSR, Shape: []int64{rows, 40}, NumberOfStoredValues: -1,
		DataTypes: map[string]DataType{"pointers_to_1": {Type: mlfeed.Uint64}, "indices_1": {Type: mlfeed.Uint32}, "values": {Type: mlfeed.Float32}}},
		Arrays: map[string]mlfeed.Buffer{"pointers_to_1": ptr, "indices_1": idx, "values": mlfeed.NewBuffer(mlfeed.Float32, rows*per)}}
	check := func(want string) {
		t.Helper()
		var ord [2]error
		var errs [2]error
		for i, c := range []context.Context{context.Background(), ctx} {
			_, errs[i] = m.checkContext(c, func(err error) bool { ord[i] = err; return true })
		}
		if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) || fmt.Sprint(ord[0]) != fmt.Sprint(ord[1]) {
			t.Errorf("serial %v / %v, parallel %v / %v", errs[0], ord[0], errs[1], ord[1])
		}
		if got := fmt.Sprint(errs[0], ord[0]); !strings.Contains(got, want) {
			t.Errorf("got %q, want %q in it", got, want)
		}
	}
	check("<nil> <nil>")
	ix[250000*per+3] = ix[250000*per+2] // late ordering problem
	ix[200000*per+5] = ix[200000*per+4] // the first one
	check(fmt.Sprint(200000*per + 5))
	ix[280000*per+1] = 99 // a late bad index
	ix[260000*per+1] = 77 // the first one
	check("77")
	if s.PeakHelpers() == 0 {
		t.Error("no helper thread ran")
	}
}
