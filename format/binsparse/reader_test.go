package binsparse_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func corpus(t testing.TB, elem ...string) string {
	t.Helper()
	return testutil.Testdata(t, append([]string{"binsparse"}, elem...)...)
}

func readMTX(t testing.TB, elem ...string) [][]float64 {
	t.Helper()
	m, err := mtx.ReadFile(corpus(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return sparsetest.Dense(t, m)
}

func read(t testing.TB, name string) *binsparse.Matrix {
	t.Helper()
	m, err := binsparse.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFinch2024(t *testing.T) {
	b1 := readMTX(t, "finch-2024", "b1_ss.mtx")
	farm := readMTX(t, "finch-2024", "farm.mtx")
	// The dense file names are off by one: *_DMAT holds DMATR, *_DMATR holds DMATC.
	formats := map[string]binsparse.Format{"COO": binsparse.COOR, "COOC": binsparse.COOC, "CSR": binsparse.CSR,
		"CSC": binsparse.CSC, "DCSR": binsparse.DCSR, "DCSC": binsparse.DCSC, "DMAT": binsparse.DMATR, "DMATR": binsparse.DMATC}
	for suffix, f := range formats {
		for name, want := range map[string][][]float64{"b1_ss": b1, "farm": farm} {
			m := read(t, corpus(t, "finch-2024", name+"_"+suffix+".bsp.h5"))
			if m.Format() != f {
				t.Errorf("%s_%s: format %s, want %s", name, suffix, m.Format(), f)
			}
			if !m.Descriptor.Fill || m.Descriptor.Unwrapped {
				t.Errorf("%s_%s: fill %v unwrapped %v", name, suffix, m.Descriptor.Fill, m.Descriptor.Unwrapped)
			}
			if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, want) {
				t.Errorf("%s_%s: matrix differs from %s.mtx:\n%v\n%v", name, suffix, name, got, want)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("%s_%s: %v", name, suffix, err)
			}
		}
	}
	for _, c := range []struct {
		file string
		f    binsparse.Format
		want []float64
	}{
		{"foo_DVEC.bsp.h5", binsparse.DVEC, []float64{11, 12, 13, 14}},
		{"foo_VEC.bsp.h5", binsparse.CVEC, []float64{11, 12, 13, 14}},
		{"bar_DVEC.bsp.h5", binsparse.DVEC, []float64{0, 0, 13, 0, 0, 16, 0, 0, 19}},
		{"bar_VEC.bsp.h5", binsparse.CVEC, []float64{0, 0, 13, 0, 0, 16, 0, 0, 19}},
	} {
		m := read(t, corpus(t, "finch-2024", c.file))
		if m.Format() != c.f {
			t.Errorf("%s: format %s", c.file, m.Format())
		}
		if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, [][]float64{c.want}) {
			t.Errorf("%s: %v, want %v", c.file, got, c.want)
		}
	}
}

func TestReferenceC(t *testing.T) {
	b1 := readMTX(t, "finch-2024", "b1_ss.mtx")
	farm := readMTX(t, "finch-2024", "farm.mtx")
	for _, c := range []struct {
		file  string
		f     binsparse.Format
		want  [][]float64
		itype mlfeed.ElemType
		vtype string
	}{
		{"b1_ss.coo.bsp.h5", binsparse.COOR, b1, mlfeed.Uint8, "float64"},
		{"b1_ss.csr.bsp.h5", binsparse.CSR, b1, mlfeed.Uint8, "float64"},
		{"farm.csc.level0.bsp.h5", binsparse.CSC, farm, mlfeed.Uint8, "uint8"},
		{"multi_groups.bsp.h5", binsparse.CSR, b1, mlfeed.Uint8, "float64"},
		{"multi_groups.bsp.h5:/farm", binsparse.CSC, farm, mlfeed.Uint8, "uint8"},
		{"sympat.csr.bsp.h5", binsparse.CSR, readMTX(t, "reference-c", "sympat.mtx"), mlfeed.Uint8, "iso[bint8]"},
		{"herm.coo.bsp.h5", binsparse.COOR, readMTX(t, "reference-c", "herm.mtx"), mlfeed.Uint8, "complex[float32]"},
	} {
		m := read(t, corpus(t, "reference-c")+"/"+c.file)
		if m.Format() != c.f || m.Arrays["indices_1"].Type != c.itype || m.Descriptor.ValueType().String() != c.vtype {
			t.Errorf("%s: format %s, indices %s, values %s", c.file, m.Format(), m.Arrays["indices_1"].Type, m.Descriptor.ValueType())
		}
		if _, ok := m.Descriptor.User["comment"]; !ok {
			t.Errorf("%s: user key comment lost", c.file)
		}
		if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: matrix differs:\n%v\n%v", c.file, got, c.want)
		}
	}
	if m := read(t, corpus(t, "reference-c", "sympat.csr.bsp.h5")); m.Descriptor.Structure != binsparse.SymmetricLower {
		t.Errorf("sympat structure %q", m.Descriptor.Structure)
	}
	if m := read(t, corpus(t, "reference-c", "herm.coo.bsp.h5")); m.Descriptor.Structure != binsparse.HermitianLower {
		t.Errorf("herm structure %q", m.Descriptor.Structure)
	}
	for _, file := range []string{"tensor3d.custom.bsp.h5", "tensor3d.custom.input.bsp.h5"} {
		m := read(t, corpus(t, "reference-c", file))
		if m.Format() != binsparse.Custom || !reflect.DeepEqual(m.Shape(), []int64{2, 3, 4}) {
			t.Fatalf("%s: format %s shape %v", file, m.Format(), m.Shape())
		}
		r, c, v, err := m.Entries(false)
		if err != nil {
			t.Fatal(err)
		}
		// (0,0,1)=1, (0,2,3)=2, (1,1,0)=3, (1,1,2)=4, (1,2,2)=5; columns flatten (j, k) as j*4+k.
		if !reflect.DeepEqual(r, []int64{0, 0, 1, 1, 1}) || !reflect.DeepEqual(c, []int64{1, 11, 4, 6, 10}) ||
			!reflect.DeepEqual(v.Float64s(), []float64{1, 2, 3, 4, 5}) {
			t.Errorf("%s: entries %v %v %v", file, r, c, v.Float64s())
		}
	}
}

var small3x3 = [][]float64{{1, 0, 2}, {0, 0, 3}, {4, 5, 0}}

func TestPythonImplementations(t *testing.T) {
	groups := corpus(t, "reference-python-2026", "ref2026_groups.bsp.h5")
	m := read(t, groups)
	if !m.Descriptor.Unwrapped || m.Format() != binsparse.CSR || m.Arrays["indices_1"].Type != mlfeed.Int32 {
		t.Errorf("root: unwrapped %v format %s", m.Descriptor.Unwrapped, m.Format())
	}
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, small3x3) {
		t.Errorf("root: %v", got)
	}
	// custom_coo: a custom sparse(2) level (an alias of COOR) stored in column order, which
	// reading accepts and Validate reports.
	m = read(t, groups+":/custom_coo")
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, small3x3) {
		t.Errorf("custom_coo: %v", got)
	}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("custom_coo: Validate = %v, want an ordering error", err)
	}
	m = read(t, groups+":/iso_fill")
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, [][]float64{{-1, 7, -1}, {-1, -1, 7}}) || !m.Descriptor.ValueType().Iso {
		t.Errorf("iso_fill: %v", got)
	}
	m = read(t, groups+":/complex")
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, [][]float64{{0, 0, 1, 2}, {3, -4, 0, 0}}) || m.Values().Type != mlfeed.Complex128 {
		t.Errorf("complex: %v", got)
	}
	m = read(t, corpus(t, "reference-python-2026", "ref2026_csr.bsp.npz"))
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, small3x3) {
		t.Errorf("npz: %v", got)
	}
	iv := corpus(t, "binsparse-python-2023", "ivirshup_groups.bsp.h5")
	for _, g := range []string{":/X", ":/Y"} {
		m := read(t, iv+g)
		if m.Descriptor.Version != "" || m.NNZ() != 5 {
			t.Errorf("%s: version %q nnz %d", g, m.Descriptor.Version, m.NNZ())
		}
		if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, small3x3) {
			t.Errorf("%s: %v", g, got)
		}
	}
	if _, err := binsparse.ReadFile(iv); err == nil || !strings.Contains(err.Error(), "/X") {
		t.Errorf("a file of two group matrices read without naming one: %v", err)
	}
}

func TestNetCDF4(t *testing.T) {
	m := read(t, corpus(t, "netcdf4", "csr_nc4.nc"))
	want := [][]float64{{1.5, 0, 0, 0, -2}, {0, 0, 3.25, 0, 0}, {0, 0, 0, 0, 0}, {0, 4, 0, 5, 6.125}}
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, want) {
		t.Errorf("%v", got)
	}
}

func TestLayouts(t *testing.T) {
	dir := corpus(t, "layouts")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Matrix struct {
			Shape                   []int64
			NNZ                     int64
			PointersSum, IndicesSum int64
			ValuesSum               float64 `json:"values_sum"`
			First                   float64 `json:"values_first"`
			Last                    float64 `json:"values_last"`
		}
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	var rawSums map[string]map[string]any
	json.Unmarshal(raw, &rawSums)
	psum, isum := int64(rawSums["matrix"]["pointers_to_1_sum"].(float64)), int64(rawSums["matrix"]["indices_1_sum"].(float64))
	files, _ := filepath.Glob(filepath.Join(dir, "*.bsp.h5"))
	n := 0
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "broken_") {
			continue
		}
		n++
		m := read(t, f)
		if !reflect.DeepEqual(m.Shape(), exp.Matrix.Shape) || m.NNZ() != exp.Matrix.NNZ {
			t.Errorf("%s: shape %v nnz %d", base, m.Shape(), m.NNZ())
			continue
		}
		var ps, is int64
		for i := 0; i < m.Arrays["pointers_to_1"].Len(); i++ {
			ps += m.Arrays["pointers_to_1"].Int64At(i)
		}
		for i := 0; i < m.Arrays["indices_1"].Len(); i++ {
			is += m.Arrays["indices_1"].Int64At(i)
		}
		vs := m.Values().Float64s()
		var sum float64
		for _, v := range vs {
			sum += v
		}
		if ps != psum || is != isum || math.Abs(sum-exp.Matrix.ValuesSum) > 1e-9 || vs[0] != exp.Matrix.First || vs[len(vs)-1] != exp.Matrix.Last {
			t.Errorf("%s: sums %d %d %v, first %v last %v", base, ps, is, sum, vs[0], vs[len(vs)-1])
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
	if n != 12 {
		t.Errorf("read %d layout files, want 12", n)
	}
}

func TestBrokenFiles(t *testing.T) {
	for _, f := range []string{"broken_truncated.bsp.h5", "broken_bitflips.bsp.h5"} {
		_, err := binsparse.ReadFile(corpus(t, "layouts", f))
		if err == nil || !errors.Is(err, mlfeed.ErrFormat) && !errors.Is(err, mlfeed.ErrTruncated) {
			t.Errorf("%s: err = %v, want a format error", f, err)
		}
		t.Logf("%s: %v", f, err)
	}
}

// TestSourceEveryCorpusFile opens every corpus matrix through the registry and reads every
// chunk: the path `mlfeed cat`, `convert` and `batches` take.
func TestSourceEveryCorpusFile(t *testing.T) {
	dir := corpus(t)
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".h5") || strings.HasSuffix(p, ".npz") || strings.HasSuffix(p, ".nc")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 40 {
		t.Fatalf("found %d corpus files", len(files))
	}
	for _, f := range files {
		src, err := dataset.OpenFiles([]string{f}, "", &format.Options{})
		broken := strings.Contains(f, "broken_")
		if err != nil {
			if !broken {
				t.Errorf("%s: %v", f, err)
			}
			continue
		}
		sc := src.Schema()
		var rows int64
		for i := range src.Chunks() {
			c, err := src.ReadChunk(context.Background(), i)
			if err != nil {
				if !broken {
					t.Errorf("%s: chunk %d: %v", f, i, err)
				}
				break
			}
			if err := c.Validate(&sc); err != nil {
				t.Errorf("%s: chunk %d: %v", f, i, err)
			}
			rows += int64(c.Sequences)
		}
		if broken && rows > 0 {
			t.Errorf("%s: read %d rows from a broken file", f, rows)
		}
		src.Close()
	}
}

func TestSourceRows(t *testing.T) {
	src, err := binsparse.Open(corpus(t, "reference-c", "sympat.csr.bsp.h5"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st := src.Schema().Streams[0]
	if st.Storage != mlfeed.Sparse || st.Type != mlfeed.Bool || st.Dim != 5 {
		t.Fatalf("stream %v", st)
	}
	c, err := src.ReadChunk(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// sympat.mtx expanded: row 1 (0-based) holds columns 0 and 2.
	d := c.Streams[0]
	if c.Sequences != 5 || !reflect.DeepEqual(d.Indices[d.SampleStart[1]:d.SampleStart[2]], []int32{0, 2}) {
		t.Errorf("rows %d, row 1 %v", c.Sequences, d.Indices[d.SampleStart[1]:d.SampleStart[2]])
	}
	kept, err := binsparse.Open(corpus(t, "reference-c", "sympat.csr.bsp.h5"), &binsparse.SourceOptions{KeepStructure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if md := kept.Schema().Streams[0].Metadata; len(md) != 1 || md[0].Name != binsparse.StructureAnnotation {
		t.Errorf("kept structure annotation %v", md)
	}
	c, _ = kept.ReadChunk(context.Background(), 0)
	if n := c.Streams[0].Values.Len(); n != 6 {
		t.Errorf("kept triangle has %d values, want 6", n)
	}
}
