package binsparse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// sample builds a test matrix of rows×cols with about density stored entries of type vt.
func sample(t testing.TB, seed int64, rows, cols int64, density float64, vt mlfeed.ElemType, iso bool) *binsparse.Matrix {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	var ri, ci []int64
	for i := int64(0); i < rows; i++ {
		for j := int64(0); j < cols; j++ {
			if r.Float64() < density {
				ri, ci = append(ri, i), append(ci, j)
			}
		}
	}
	n := len(ri)
	if iso {
		n = 1
	}
	vals := mlfeed.NewBuffer(vt, n)
	st, per := vt, 1
	switch vt {
	case mlfeed.Complex64:
		st, per = mlfeed.Float32, 2
	case mlfeed.Complex128:
		st, per = mlfeed.Float64, 2
	}
	fv := mlfeed.Buffer{Type: st, Bytes: vals.Bytes}
	for k := 0; k < n*per; k++ {
		v := float64(r.Intn(200) - 100)
		switch {
		case vt == mlfeed.Bool:
			v = 1
		case !st.IsSigned() && !st.IsFloat():
			v = float64(r.Intn(200) + 1)
		case st.IsFloat():
			v /= 4
		}
		fv.SetFloat64(k, v)
	}
	it := binsparse.MinIndexType(max(rows, cols))
	toBuf := func(v []int64) mlfeed.Buffer {
		b := mlfeed.NewBuffer(mlfeed.Uint64, len(v))
		for i, x := range v {
			b.SetFloat64(i, float64(x))
		}
		c, err := mlfeed.ConvertBuffer(b, it)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	m, err := binsparse.New(binsparse.COOR, []int64{rows, cols}, map[string]mlfeed.Buffer{
		"indices_0": toBuf(ri), "indices_1": toBuf(ci), "values": vals}, iso)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var allFormats = []binsparse.Format{binsparse.CSR, binsparse.CSC, binsparse.DCSR, binsparse.DCSC,
	binsparse.COOR, binsparse.COOC, binsparse.DMATR, binsparse.DMATC}

// testMatrices returns named matrices covering every format, several value types, iso values,
// structures and user keys.
func testMatrices(t testing.TB) map[string]*binsparse.Matrix {
	out := map[string]*binsparse.Matrix{}
	base := sample(t, 1, 9, 13, 0.3, mlfeed.Float64, false)
	for _, f := range allFormats {
		m, err := base.Convert(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		out["f64_"+string(f)] = m
	}
	for name, vt := range map[string]mlfeed.ElemType{"f32": mlfeed.Float32, "i16": mlfeed.Int16, "u32": mlfeed.Uint32,
		"i8": mlfeed.Int8, "u64": mlfeed.Uint64, "c64": mlfeed.Complex64, "c128": mlfeed.Complex128, "bint8": mlfeed.Bool} {
		m, err := sample(t, 2, 6, 4, 0.5, vt, false).Convert(binsparse.CSR, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[name+"_CSR"] = m
	}
	iso, _ := sample(t, 3, 5, 7, 0.4, mlfeed.Bool, true).Convert(binsparse.CSC, nil)
	out["iso_bint8_CSC"] = iso
	isoF, _ := sample(t, 4, 5, 7, 0.4, mlfeed.Float32, true).Convert(binsparse.DCSR, nil)
	out["iso_f32_DCSR"] = isoF
	// A symmetric matrix stored as its lower triangle, with user keys.
	sym := sample(t, 5, 6, 6, 0.5, mlfeed.Float64, false)
	r, c, v, _ := sym.Entries(false)
	var ri, ci []int64
	var keep []int64
	for k := range r {
		if r[k] >= c[k] {
			ri, ci, keep = append(ri, r[k]), append(ci, c[k]), append(keep, int64(k))
		}
	}
	vals := mlfeed.NewBuffer(mlfeed.Float64, len(keep))
	for i, k := range keep {
		vals.SetFloat64(i, v.Float64At(int(k)))
	}
	low, err := binsparse.New(binsparse.COOR, []int64{6, 6}, map[string]mlfeed.Buffer{
		"indices_0": u8s(ri), "indices_1": u8s(ci), "values": vals}, false)
	if err != nil {
		t.Fatal(err)
	}
	low.Descriptor.Structure = binsparse.SymmetricLower
	low.Descriptor.User = map[string]json.RawMessage{"comment": json.RawMessage(`"lower triangle"`), "metadata": json.RawMessage(`{"role":"A","id":7}`)}
	out["sym_COOR"] = low
	empty, _ := sample(t, 6, 4, 5, 0, mlfeed.Float64, false).Convert(binsparse.CSR, nil)
	out["empty_CSR"] = empty
	vec, err := binsparse.New(binsparse.CVEC, []int64{9}, map[string]mlfeed.Buffer{"indices_0": u8s([]int64{2, 5, 8}), "values": f64s(13, 16, 19)}, false)
	if err != nil {
		t.Fatal(err)
	}
	out["vec_CVEC"] = vec
	dvec, _ := vec.Convert(binsparse.DVEC, nil)
	out["vec_DVEC"] = dvec
	return out
}

func u8s(v []int64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Uint8, len(v))
	for i, x := range v {
		b.Bytes[i] = byte(x)
	}
	return b
}

func f64s(v ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(mlfeed.Float64, len(v))
	copy(b.Float64s(), v)
	return b
}

func sameMatrix(t *testing.T, name string, got, want *binsparse.Matrix) {
	t.Helper()
	gd, wd := got.Descriptor, want.Descriptor
	if gd.Format != wd.Format || !reflect.DeepEqual(gd.Shape, wd.Shape) || gd.Structure != wd.Structure ||
		!reflect.DeepEqual(gd.DataTypes, wd.DataTypes) || gd.NumberOfStoredValues != want.NNZ() {
		t.Errorf("%s: descriptor\n%+v\nwant\n%+v", name, gd, wd)
	}
	for k, v := range wd.User {
		if compactJSON(gd.User[k]) != compactJSON(v) {
			t.Errorf("%s: user key %s = %s, want %s", name, k, gd.User[k], v)
		}
	}
	for n, b := range want.Arrays {
		g := got.Arrays[n]
		if g.Type != b.Type || !bytes.Equal(g.Bytes, b.Bytes) {
			t.Errorf("%s: array %s differs: %v %v, want %v %v", name, n, g.Type, g.Bytes, b.Type, b.Bytes)
		}
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.String()
}

func TestWriteReadHDF5(t *testing.T) {
	dir := t.TempDir()
	for name, m := range testMatrices(t) {
		p := filepath.Join(dir, name+".bsp.h5")
		if err := binsparse.WriteFile(p, m, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameMatrix(t, name, read(t, p), m)
	}
}

func TestWriteReadNPZ(t *testing.T) {
	dir := t.TempDir()
	for name, m := range testMatrices(t) {
		p := filepath.Join(dir, name+".bsp.npz")
		if err := binsparse.WriteFile(p, m, &binsparse.WriteOptions{Level: 6}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := read(t, p)
		if !got.Descriptor.Unwrapped {
			t.Errorf("%s: NPZ descriptor is wrapped; the Python reference reads only the bare object", name)
		}
		want := *m
		want.Descriptor.User = nil
		sameMatrix(t, name, got, &want)
	}
}

func TestWriterGroups(t *testing.T) {
	p := filepath.Join(t.TempDir(), "multi.bsp.h5")
	ms := testMatrices(t)
	w, err := binsparse.Create(p, &binsparse.WriteOptions{Level: binsparse.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]string{"/": "f64_CSR", "/farm": "u32_CSR", "/mats/A": "c128_CSR", "/mats/B/x": "sym_COOR"}
	for g, n := range groups {
		if err := w.WriteMatrix(g, ms[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := binsparse.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	list, err := f.Matrices()
	if err != nil || !reflect.DeepEqual(list, []string{"/", "/farm", "/mats/A", "/mats/B/x"}) {
		t.Fatalf("matrices %v, %v", list, err)
	}
	for g, n := range groups {
		m, err := f.ReadMatrix(g)
		if err != nil {
			t.Fatal(err)
		}
		sameMatrix(t, g, m, ms[n])
	}
}

func TestWriteOptions(t *testing.T) {
	dir := t.TempDir()
	m := sample(t, 7, 40, 50, 0.2, mlfeed.Float64, false)
	p := filepath.Join(dir, "o.bsp.h5")
	if err := binsparse.WriteFile(p, m, &binsparse.WriteOptions{Format: binsparse.CSC, Level: 9, Shuffle: true, Chunk: 64}); err != nil {
		t.Fatal(err)
	}
	got := read(t, p)
	if got.Format() != binsparse.CSC {
		t.Errorf("format %s", got.Format())
	}
	if !reflect.DeepEqual(sparsetest.Dense(t, got), sparsetest.Dense(t, m)) {
		t.Error("CSC copy differs")
	}
	f, _ := binsparse.OpenFile(p)
	src, _ := f.Source("/", nil)
	arrays := src.Details()["arrays"].(map[string]string)
	f.Close()
	if !strings.Contains(arrays["values"], "chunked(8)+shuffle+deflate") {
		t.Errorf("values stored as %s, want chunks of 8 with shuffle and deflate", arrays["values"])
	}
	// Minimize: float64 values that are small integers become uint8.
	mi := sample(t, 8, 5, 5, 0.5, mlfeed.Uint32, false)
	mi64, _ := mlfeed.ConvertBuffer(mi.Values(), mlfeed.Float64)
	mi.Arrays["values"] = mi64
	mi.Descriptor.DataTypes["values"] = binsparse.DataType{Type: mlfeed.Float64}
	if err := binsparse.WriteFile(p, mi, &binsparse.WriteOptions{Minimize: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got.Values().Type != mlfeed.Float32 || !reflect.DeepEqual(sparsetest.Dense(t, got), sparsetest.Dense(t, mi)) {
		t.Errorf("minimized values %s", got.Values().Type)
	}
	// A writer refuses an invalid matrix.
	bad := sample(t, 9, 3, 3, 1, mlfeed.Float64, false)
	bad.Arrays["indices_1"].Bytes[0] = 9
	if err := binsparse.WriteFile(p, bad, nil); !errors.Is(err, binsparse.ErrFormat) {
		t.Errorf("invalid matrix written: %v", err)
	}
}

// python returns /usr/bin/python3 when it has the checkers this file uses, or skips.
func python(t *testing.T) string {
	t.Helper()
	return testutil.Python(t, "h5py", "numpy", "scipy.sparse", "scipy.io")
}

// pyReader rebuilds each file's matrix with h5py/numpy (NPZ with numpy) and scipy.sparse,
// following the specification independently of our reader, and prints the dense matrices
// (structures expanded, complex as (re, im) pairs) as JSON.
const pyReader = `
import sys, json, h5py, numpy as np, scipy.sparse as sp
out = {}
for path in sys.argv[1:]:
    if path.endswith('.npz'):
        z = np.load(path)
        desc = json.loads(str(z['binsparse']))
        arrays = {k: z[k] for k in z.files if k != 'binsparse'}
    else:
        fname, _, g = path.partition(':')
        h = h5py.File(fname, 'r')
        grp = h[g or '/']
        aid = grp.attrs.get_id('binsparse')
        assert aid.get_type().is_variable_str(), 'descriptor is not a variable-length string'
        assert aid.shape == (), 'descriptor is not scalar'
        desc = json.loads(grp.attrs['binsparse'])
        assert 'binsparse' in desc, 'descriptor is not wrapped'
        arrays = {k: grp[k][()] for k in grp.keys() if isinstance(grp[k], h5py.Dataset)}
    user = {}
    if 'binsparse' in desc:
        user = {k: v for k, v in desc.items() if k != 'binsparse'}
        desc = desc['binsparse']
    assert desc['version'] == '0.1', desc['version']
    fmt, shape, dt = desc['format'], tuple(desc['shape']), desc['data_types']
    nnz = desc['number_of_stored_values']
    vals, vt = arrays['values'], dt['values']
    iso = vt.startswith('iso[')
    if 'complex[' in vt:
        vals = vals.view(np.complex64 if 'float32' in vt else np.complex128)
    if 'bint8' in vt:
        vals = vals.astype(bool)
    if iso:
        assert len(vals) == 1
        vals = np.repeat(vals, nnz)
    assert fmt in ('DVEC', 'DMAT', 'DMATR', 'DMATC') or len(vals) == nnz, (len(vals), nnz)
    i0, i1, ptr = arrays.get('indices_0'), arrays.get('indices_1'), arrays.get('pointers_to_1')
    if fmt in ('DVEC', 'DMAT', 'DMATR'):
        dense = vals.reshape(shape)
    elif fmt == 'DMATC':
        dense = vals.reshape(shape[::-1]).T
    elif fmt == 'CVEC':
        dense = np.zeros(shape, vals.dtype)
        dense[i0] = vals
    elif fmt == 'CSR':
        dense = sp.csr_matrix((vals, i1.astype(np.int64), ptr.astype(np.int64)), shape=shape).toarray()
    elif fmt == 'CSC':
        dense = sp.csc_matrix((vals, i1.astype(np.int64), ptr.astype(np.int64)), shape=shape).toarray()
    elif fmt in ('COO', 'COOR'):
        dense = sp.coo_matrix((vals, (i0.astype(np.int64), i1.astype(np.int64))), shape=shape).toarray()
    elif fmt == 'COOC':
        dense = sp.coo_matrix((vals, (i1.astype(np.int64), i0.astype(np.int64))), shape=shape).toarray()
    elif fmt == 'DCSR':
        rows = np.repeat(i0.astype(np.int64), np.diff(ptr.astype(np.int64)))
        dense = sp.coo_matrix((vals, (rows, i1.astype(np.int64))), shape=shape).toarray()
    elif fmt == 'DCSC':
        cols = np.repeat(i0.astype(np.int64), np.diff(ptr.astype(np.int64)))
        dense = sp.coo_matrix((vals, (i1.astype(np.int64), cols)), shape=shape).toarray()
    else:
        raise Exception('format ' + fmt)
    st = desc.get('structure', 'general')
    if st == 'symmetric_lower':
        dense = dense + np.tril(dense, -1).T
    elif st == 'hermitian_lower':
        dense = dense + np.conj(np.tril(dense, -1).T)
    elif st == 'skew_symmetric_lower':
        dense = dense - np.tril(dense, -1).T
    if dense.ndim == 1:
        dense = dense.reshape(1, -1)
    if np.iscomplexobj(dense):
        pairs = np.empty((dense.shape[0], dense.shape[1] * 2))
        pairs[:, 0::2], pairs[:, 1::2] = dense.real, dense.imag
        dense = pairs
    out[path] = {'dense': dense.astype(np.float64).tolist(), 'user': user}
print(json.dumps(out))
`

func runPython(t *testing.T, paths []string) map[string]struct {
	Dense [][]float64
	User  map[string]any
} {
	py := python(t)
	cmd := exec.Command(py, append([]string{"-c", pyReader}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res map[string]struct {
		Dense [][]float64
		User  map[string]any
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPythonReadsWhatWeWrite(t *testing.T) {
	python(t)
	exts := []string{".bsp.npz", ".bsp.h5"}
	dir := t.TempDir()
	ms := testMatrices(t)
	var paths []string
	want := map[string]*binsparse.Matrix{}
	for name, m := range ms {
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			if err := binsparse.WriteFile(p, m, nil); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
			want[p] = m
		}
	}
	paths = writeGroups(t, dir, ms, paths, want)
	res := runPython(t, paths)
	for _, p := range paths {
		got, ok := res[p]
		if !ok {
			t.Errorf("%s: python returned nothing", p)
			continue
		}
		if exp := sparsetest.Dense(t, want[p]); !reflect.DeepEqual(got.Dense, exp) {
			t.Errorf("%s: python reads\n%v\nwant\n%v", p, got.Dense, exp)
		}
		if strings.HasSuffix(p, ".h5") {
			for k := range want[p].Descriptor.User {
				if _, ok := got.User[k]; !ok {
					t.Errorf("%s: python sees no user key %q", p, k)
				}
			}
		}
	}
}

// writeGroups writes two matrices into groups of one file and adds their addresses to paths.
func writeGroups(t *testing.T, dir string, ms map[string]*binsparse.Matrix, paths []string, want map[string]*binsparse.Matrix) []string {
	gp := filepath.Join(dir, "groups.bsp.h5")
	w, err := binsparse.Create(gp, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"/c64_CSR", "/mats/A"} {
		name := strings.TrimPrefix(g, "/")
		if g == "/mats/A" {
			name = "f64_DCSC"
		}
		if err := w.WriteMatrix(g, ms[name]); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, gp+":"+g)
		want[gp+":"+g] = ms[name]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestWriteCustomTensor(t *testing.T) {
	m := read(t, corpus(t, "reference-c", "tensor3d.custom.bsp.h5"))
	for _, ext := range []string{".bsp.h5", ".bsp.npz"} {
		p := filepath.Join(t.TempDir(), "t"+ext)
		if err := binsparse.WriteFile(p, m, nil); err != nil {
			t.Fatal(err)
		}
		got := read(t, p)
		if got.Format() != binsparse.Custom || got.Descriptor.Custom == nil || !reflect.DeepEqual(got.Descriptor.Custom, m.Descriptor.Custom) {
			t.Errorf("%s: custom levels %+v, want %+v", ext, got.Descriptor.Custom, m.Descriptor.Custom)
		}
		r1, c1, v1, _ := m.Entries(false)
		r2, c2, v2, err := got.Entries(false)
		if err != nil || !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(c1, c2) || !bytes.Equal(v1.Bytes, v2.Bytes) {
			t.Errorf("%s: entries differ: %v", ext, err)
		}
	}
}
