package mtx_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// python returns /usr/bin/python3 when it has the checkers this file uses, or skips.
func python(t *testing.T) string {
	t.Helper()
	return testutil.Python(t, "numpy", "scipy.io")
}

// mmread reads each file with scipy.io.mmread and returns the dense matrices (complex as
// (re, im) pairs) and scipy's view of the header (format, field, symmetry).
const pyMMRead = `
import sys, json, numpy as np, scipy.io, scipy.sparse as sp
out = {}
for p in sys.argv[1:]:
    a = scipy.io.mmread(p)
    info = scipy.io.mminfo(p)
    d = a.toarray() if sp.issparse(a) else np.asarray(a)
    if np.iscomplexobj(d):
        pairs = np.empty((d.shape[0], d.shape[1] * 2))
        pairs[:, 0::2], pairs[:, 1::2] = d.real, d.imag
        d = pairs
    out[p] = {'dense': d.astype(np.float64).tolist(), 'info': [info[3], info[4], info[5]]}
print(json.dumps(out))
`

type scipyResult struct {
	Dense [][]float64
	Info  []string
}

func mmread(t *testing.T, paths ...string) map[string]scipyResult {
	py := python(t)
	cmd := exec.Command(py, append([]string{"-c", pyMMRead}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scipy: %v\n%s", err, stderr.String())
	}
	var res map[string]scipyResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func corpusMTX(t *testing.T) []string {
	var out []string
	for _, p := range [][]string{{"finch-2024", "b1_ss.mtx"}, {"finch-2024", "farm.mtx"}, {"reference-c", "sympat.mtx"}, {"reference-c", "herm.mtx"}} {
		out = append(out, testutil.Testdata(t, append([]string{"binsparse"}, p...)...))
	}
	return out
}

func TestCorpusAgainstScipy(t *testing.T) {
	files := corpusMTX(t)
	res := mmread(t, files...)
	for _, f := range files {
		m, err := mtx.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, res[f].Dense) {
			t.Errorf("%s: differs from scipy.io.mmread:\n%v\n%v", filepath.Base(f), got, res[f].Dense)
		}
	}
}

func TestCorpusTypes(t *testing.T) {
	files := corpusMTX(t)
	for i, want := range []struct {
		vt        string
		structure binsparse.Structure
		nnz       int64
	}{
		{"float64", binsparse.General, 15},
		{"int64", binsparse.General, 41},
		{"iso[bint8]", binsparse.SymmetricLower, 6},
		{"complex[float64]", binsparse.HermitianLower, 4},
	} {
		m, err := mtx.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		d := m.Descriptor
		if d.Format != binsparse.COOR || d.ValueType().String() != want.vt || d.Structure != want.structure || m.NNZ() != want.nnz {
			t.Errorf("%s: %s %s %q nnz %d", filepath.Base(files[i]), d.Format, d.ValueType(), d.Structure, m.NNZ())
		}
		if m.Arrays["indices_0"].Type != mlfeed.Uint8 {
			t.Errorf("%s: index type %s, want uint8 as mtx2bsp chooses", files[i], m.Arrays["indices_0"].Type)
		}
	}
	m, _ := mtx.ReadFile(files[2])
	if c := string(m.Descriptor.User["comment"]); c != `"% small symmetric pattern test"` {
		t.Errorf("comment %s", c)
	}
}

// pyMMWrite writes matrices of every field and symmetry with scipy.io.mmwrite.
const pyMMWrite = `
import sys, os, numpy as np, scipy.io, scipy.sparse as sp
d = sys.argv[1]
rng = np.random.default_rng(5)
def rand_sparse(n, m, density):
    a = sp.random(n, m, density=density, random_state=7, format='coo')
    a.data = np.round(a.data * 100 - 50, 2)
    return a
g = rand_sparse(9, 13, 0.3)
scipy.io.mmwrite(os.path.join(d, 'real_general.mtx'), g)
scipy.io.mmwrite(os.path.join(d, 'int_general.mtx'), sp.coo_matrix(np.round(g.toarray()).astype(np.int64)))
cg = sp.coo_matrix(g.toarray() + 1j * np.round(g.toarray() / 3))
scipy.io.mmwrite(os.path.join(d, 'complex_general.mtx'), cg)
scipy.io.mmwrite(os.path.join(d, 'pattern_general.mtx'), g, field='pattern')
s = rand_sparse(8, 8, 0.4).toarray(); s = s + s.T
scipy.io.mmwrite(os.path.join(d, 'real_symmetric.mtx'), sp.coo_matrix(s), symmetry='symmetric')
sk = np.tril(rand_sparse(8, 8, 0.4).toarray(), -1); sk = sk - sk.T
scipy.io.mmwrite(os.path.join(d, 'real_skew.mtx'), sp.coo_matrix(sk), symmetry='skew-symmetric')
h = np.tril(rand_sparse(6, 6, 0.5).toarray(), -1) * (1 + 2j); h = h + np.conj(h.T) + np.diag(np.arange(6))
scipy.io.mmwrite(os.path.join(d, 'complex_hermitian.mtx'), sp.coo_matrix(h), symmetry='hermitian')
scipy.io.mmwrite(os.path.join(d, 'array_general.mtx'), np.round(rng.standard_normal((4, 3)), 3))
scipy.io.mmwrite(os.path.join(d, 'array_int.mtx'), rng.integers(-9, 9, (3, 5)))
a = np.round(rng.standard_normal((5, 5)), 3); a = a + a.T
scipy.io.mmwrite(os.path.join(d, 'array_symmetric.mtx'), a, symmetry='symmetric')
a = np.round(rng.standard_normal((4, 4)), 3); a = a - a.T
scipy.io.mmwrite(os.path.join(d, 'array_skew.mtx'), a, symmetry='skew-symmetric')
c = np.round(rng.standard_normal((3, 2)), 3) + 1j * np.round(rng.standard_normal((3, 2)), 3)
scipy.io.mmwrite(os.path.join(d, 'array_complex.mtx'), c)
scipy.io.mmwrite(os.path.join(d, 'empty.mtx'), sp.coo_matrix((3, 4)))
`

func TestScipyWrittenFiles(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	if out, err := exec.Command(py, "-c", pyMMWrite, dir).CombinedOutput(); err != nil {
		t.Fatalf("scipy mmwrite: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.mtx"))
	if len(files) != 13 {
		t.Fatalf("scipy wrote %d files", len(files))
	}
	res := mmread(t, files...)
	var ours []string
	for _, f := range files {
		m, err := mtx.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, res[f].Dense) {
			t.Errorf("%s: differs from scipy.io.mmread:\n%v\n%v", filepath.Base(f), got, res[f].Dense)
		}
		// And our writer reproduces the matrix for scipy.
		var buf bytes.Buffer
		if err := mtx.Write(&buf, m, nil); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "ours_"+filepath.Base(f))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		ours = append(ours, p)
	}
	back := mmread(t, ours...)
	for _, p := range ours {
		orig := res[filepath.Join(dir, strings.TrimPrefix(filepath.Base(p), "ours_"))]
		if !reflect.DeepEqual(back[p].Dense, orig.Dense) {
			t.Errorf("%s: scipy reads our copy as\n%v\nwant\n%v", filepath.Base(p), back[p].Dense, orig.Dense)
		}
		if !reflect.DeepEqual(back[p].Info, orig.Info) {
			t.Errorf("%s: our header %v, scipy's %v", filepath.Base(p), back[p].Info, orig.Info)
		}
	}
}

func TestGzip(t *testing.T) {
	f := corpusMTX(t)[0]
	raw, _ := os.ReadFile(f)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw)
	w.Close()
	a, err := mtx.Read(bytes.NewReader(raw), "plain")
	if err != nil {
		t.Fatal(err)
	}
	b, err := mtx.Read(&z, "gz")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sparsetest.Dense(t, a), sparsetest.Dense(t, b)) {
		t.Error("gzip copy differs")
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     error
		line     int
	}{
		{"no banner", "1 1 1\n", mtx.ErrFormat, 1},
		{"short banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", mtx.ErrFormat, 1},
		{"vector object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", mtx.ErrUnsupported, 1},
		{"bad field", "%%MatrixMarket matrix coordinate float general\n1 1 0\n", mtx.ErrFormat, 1},
		{"pattern array", "%%MatrixMarket matrix array pattern general\n1 1\n", mtx.ErrFormat, 1},
		{"real hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", mtx.ErrFormat, 1},
		{"no size", "%%MatrixMarket matrix coordinate real general\n% c\n", mtx.ErrTruncated, 2},
		{"bad size", "%%MatrixMarket matrix coordinate real general\n2 x 1\n1 1 1\n", mtx.ErrFormat, 2},
		{"nonsquare symmetric", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", mtx.ErrFormat, 2},
		{"row range", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", mtx.ErrFormat, 3},
		{"column zero", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1\n", mtx.ErrFormat, 3},
		{"bad value", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", mtx.ErrFormat, 3},
		{"float integer", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", mtx.ErrFormat, 3},
		{"missing value", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", mtx.ErrFormat, 3},
		{"extra field", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", mtx.ErrFormat, 3},
		{"truncated", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 2\n", mtx.ErrTruncated, 4},
		{"trailing data", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", mtx.ErrFormat, 4},
		{"duplicate", "%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1\n2 1 2\n", mtx.ErrFormat, 4},
		{"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", mtx.ErrFormat, 3},
		{"huge claim", "%%MatrixMarket matrix coordinate real general\n100000 100000 999999999999\n1 1 1\n", mtx.ErrTooLarge, 2},
		{"huge array", "%%MatrixMarket matrix array real general\n3037000500 3037000500\n1\n", mtx.ErrTooLarge, 2},
		{"symmetric vector", "%%MatrixMarket matrix coordinate real symmetric\n3 1\n1 1\n", mtx.ErrFormat, 2},
		{"vector index", "%%MatrixMarket matrix coordinate real general\n3 1\n4 1\n", mtx.ErrFormat, 3},
		{"vector fields", "%%MatrixMarket matrix coordinate real general\n3 1\n1 1 1\n", mtx.ErrFormat, 3},
		{"vector duplicate", "%%MatrixMarket matrix coordinate integer general\n3 2\n2 1\n2 5\n", mtx.ErrFormat, 4},
		{"vector truncated", "%%MatrixMarket matrix coordinate pattern general\n3 2\n2\n", mtx.ErrTruncated, 3},
	} {
		_, err := mtx.Read(strings.NewReader(c.in), "x.mtx")
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			continue
		}
		var pe *mlfeed.PosError
		if !errors.As(err, &pe) || pe.File != "x.mtx" || pe.Line != c.line {
			t.Errorf("%s: %v: want a position at line %d", c.name, err, c.line)
		}
	}
}

func TestUpperTriangleEntries(t *testing.T) {
	// Entries in the upper triangle of a symmetric file are stored mirrored (skew: negated).
	in := "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 2 5\n3 1 -2\n"
	m, err := mtx.Read(strings.NewReader(in), "u.mtx")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 5, 2}, {-5, 0, 0}, {-2, 0, 0}}
	if got := sparsetest.Dense(t, m); !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadHeader(t *testing.T) {
	h, err := mtx.ReadHeader(corpusMTX(t)[2])
	if err != nil {
		t.Fatal(err)
	}
	if h.Format != "coordinate" || h.Field != "pattern" || h.Symmetry != "symmetric" || h.Rows != 5 || h.Entries != 6 || len(h.Comments) != 1 {
		t.Errorf("%+v", h)
	}
}

// TestRange: a real value beyond float64's range, or a nonzero one below it, is an error at
// its place (it would read as ±Inf or 0); infinities spelled out and zeros are values.
func TestRange(t *testing.T) {
	head := "%%MatrixMarket matrix coordinate real general\n2 2 1\n"
	for _, entry := range []string{"1 1 1e400", "1 1 -1e400", "1 1 1e-400", "2 2 -2.5e-999"} {
		_, err := mtx.Read(strings.NewReader(head+entry+"\n"), "r.mtx")
		var pe *mlfeed.PosError
		if !errors.Is(err, mtx.ErrRange) || !errors.As(err, &pe) || pe.Line != 3 {
			t.Errorf("%q: err = %v, want ErrRange at line 3", entry, err)
		}
	}
	for _, entry := range []string{"1 1 inf", "1 1 -Infinity", "1 1 0e-999", "1 1 -0.000", "1 1 1e-300"} {
		if _, err := mtx.Read(strings.NewReader(head+entry+"\n"), "r.mtx"); err != nil {
			t.Errorf("%q: %v", entry, err)
		}
	}
	c := "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 1e-400\n"
	if _, err := mtx.Read(strings.NewReader(c), "c.mtx"); !errors.Is(err, mtx.ErrRange) {
		t.Errorf("complex: err = %v, want ErrRange", err)
	}
}

// TestVector reads one-dimensional coordinate files, as Finch writes them ("length entries",
// "index value"), as sparse vectors: in index order, of every field.
func TestVector(t *testing.T) {
	for _, c := range []struct {
		in     string
		idx    []int64
		values []float64
	}{
		{"%%MatrixMarket matrix coordinate real general\n% a vector\n5 2\n4 1.5\n2 2.5\n", []int64{1, 3}, []float64{2.5, 1.5}},
		{"%%MatrixMarket matrix coordinate integer general\n9 3\n3 13\n6 16\n9 19\n", []int64{2, 5, 8}, []float64{13, 16, 19}},
		{"%%MatrixMarket matrix coordinate pattern general\n4 1\n\n3\n", []int64{2}, []float64{1}},
		{"%%MatrixMarket matrix coordinate real general\n7 0\n", nil, nil},
	} {
		m, err := mtx.Read(strings.NewReader(c.in), "v.mtx")
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if m.Descriptor.Format != binsparse.CVEC || len(m.Descriptor.Shape) != 1 {
			t.Fatalf("%q: %s of shape %v, want a CVEC", c.in, m.Descriptor.Format, m.Descriptor.Shape)
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		d := sparsetest.Dense(t, m)
		want := make([]float64, m.Descriptor.Shape[0])
		for k, i := range c.idx {
			want[i] = c.values[k]
		}
		if len(d) != 1 || !reflect.DeepEqual(d[0], want) {
			t.Errorf("%q: %v, want %v", c.in, d, want)
		}
	}
	// Finch's files read as the Binsparse files Finch wrote from them.
	dir := testutil.Testdata(t, "binsparse", "finch-2024")
	for _, name := range []string{"bar", "foo"} {
		m, err := mtx.ReadFile(filepath.Join(dir, name+".mtx"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := binsparse.OpenFile(filepath.Join(dir, name+"_VEC.bsp.h5"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.ReadMatrix("/")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sparsetest.Dense(t, m), sparsetest.Dense(t, want)) {
			t.Errorf("%s.mtx reads as %v, Finch wrote %v", name, sparsetest.Dense(t, m), sparsetest.Dense(t, want))
		}
	}
}

// TestDuplicatePosition: an entry given twice is refused at the line and column of its second
// occurrence, naming the first's line and the file (it had no position before), in coordinate
// matrices (also when the duplicate is a symmetric matrix's mirrored entry, and when the entries
// are parsed in parallel) and in vectors.
func TestDuplicatePosition(t *testing.T) {
	big := &strings.Builder{}
	big.WriteString("%%MatrixMarket matrix coordinate pattern general\n70000 1 70001\n")
	for i := 1; i <= 70000; i++ {
		fmt.Fprintf(big, "%d 1\n", i)
	}
	big.WriteString("  69999 1\n")
	for _, c := range []struct{ name, text, want string }{
		{"general", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n% between\n\n2 2 1\n  1 1 2\n", "d.mtx:7:3: mtx: invalid data: entry (1, 1) appears twice, first at line 3"},
		{"symmetric", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n", "d.mtx:4:1: mtx: invalid data: entry (2, 1) appears twice, first at line 3"},
		{"vector", "%%MatrixMarket matrix coordinate real general\n5 3\n4 1\n2 1\n4 2\n", "d.mtx:5:1: mtx: invalid data: index 4 appears twice, first at line 3"},
		{"parallel", big.String(), "d.mtx:70003:3: mtx: invalid data: entry (69999, 1) appears twice, first at line 70001"},
	} {
		_, err := mtx.ReadContext(sched.WithContext(context.Background(), sched.New(4, 0)), strings.NewReader(c.text), "d.mtx")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, mlfeed.ErrFormat) {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}
