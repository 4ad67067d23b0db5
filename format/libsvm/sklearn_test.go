package libsvm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/libsvm"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// matrix is a data set as both sides see it: labels (one per row, or label lists), CSR
// features, qids.
type matrix struct {
	Labels  []float64 `json:"labels,omitempty"`
	Multi   [][]int   `json:"multi,omitempty"`
	Indptr  []int64   `json:"indptr"`
	Indices []int32   `json:"indices"`
	Values  []float64 `json:"values"`
	QID     []int64   `json:"qid,omitempty"`
	Dim     int       `json:"dim"`
}

// sklearnDump writes files with dump_svmlight_file and prints, for each, what
// load_svmlight_file reads from it, as JSON.
const sklearnDump = `
import json, sys
import numpy as np, scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
d = sys.argv[1]
rng = np.random.default_rng(3)
X = sp.random(40, 25, density=0.3, format='csr', random_state=rng)
X.data = np.round(X.data * 2000 - 1000, rng.integers(0, 17)) ; X.data[::7] = 1e-300 ; X.data[::11] = -2.5e17
y = rng.integers(-3, 4, 40).astype(float) / 2
q = np.repeat(np.arange(10), 4)
Y = sp.csr_matrix((rng.random((40, 6)) < 0.3).astype(float))
out = {}
def put(name, multilabel=False, query_id=False, **kw):
    path = '%s/%s.svm' % (d, name)
    r = load_svmlight_file(path, multilabel=multilabel, query_id=query_id, **kw)
    Xr = r[0].tocsr(); Xr.sort_indices()
    m = dict(indptr=Xr.indptr.tolist(), indices=Xr.indices.tolist(), values=Xr.data.tolist(), dim=Xr.shape[1])
    if multilabel:
        m['multi'] = [[int(v) for v in t] for t in r[1]]
    else:
        m['labels'] = r[1].tolist()
    if query_id:
        m['qid'] = r[2].tolist()
    out[name] = m
dump_svmlight_file(X, y, d + '/zero.svm', comment='sklearn zero-based')
put('zero')
dump_svmlight_file(X, y, d + '/one.svm', zero_based=False)
put('one')
dump_svmlight_file(X, y, d + '/qid.svm', query_id=q, zero_based=False)
put('qid', query_id=True)
dump_svmlight_file(X, Y, d + '/multi.svm', multilabel=True)
put('multi', multilabel=True)
json.dump(out, sys.stdout)
`

// sklearnLoad reads files with load_svmlight_file and checks them against JSON expectations
// given on stdin: the files mlfeed wrote.
const sklearnLoad = `
import json, sys
import numpy as np
from sklearn.datasets import load_svmlight_file
want = json.load(sys.stdin)
for path, m in want.items():
    multi = 'multi' in m
    r = load_svmlight_file(path, multilabel=multi, query_id='qid' in m, zero_based=False, n_features=m['dim'])
    X = r[0]; X.sort_indices()
    assert X.indptr.tolist() == m['indptr'], path
    assert X.indices.tolist() == m['indices'], path
    assert X.data.tolist() == m['values'], path
    if multi:
        assert [[int(v) for v in t] for t in r[1]] == m['multi'], path
    else:
        assert r[1].tolist() == m['labels'], path
    if 'qid' in m:
        assert r[2].tolist() == m['qid'], path
print('ok')
`

// fromReader reads every chunk of rd into a matrix.
func fromReader(t *testing.T, rd *libsvm.Reader) matrix {
	t.Helper()
	sc := rd.Schema()
	m := matrix{Indptr: []int64{0}, Indices: []int32{}, Values: []float64{}}
	li, fi, qi := sc.Index(libsvm.LabelsName), sc.Index(libsvm.FeaturesName), sc.Index(libsvm.QIDName)
	m.Dim = sc.Streams[fi].Dim
	var prev *mlfeed.Chunk
	for i := range rd.Chunks() {
		c, err := rd.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(&sc); err != nil {
			t.Fatal(err)
		}
		for q := 0; q < c.Sequences; q++ {
			if li >= 0 {
				d := &c.Streams[li]
				if sc.Streams[li].Storage == mlfeed.Sparse {
					l := []int{}
					for k := d.SampleStart[q]; k < d.SampleStart[q+1]; k++ {
						l = append(l, int(d.Indices[k]))
					}
					m.Multi = append(m.Multi, l)
				} else {
					m.Labels = append(m.Labels, d.Values.Float64At(q))
				}
			}
			d := &c.Streams[fi]
			for k := d.SampleStart[q]; k < d.SampleStart[q+1]; k++ {
				m.Indices = append(m.Indices, d.Indices[k])
				m.Values = append(m.Values, d.Values.Float64At(int(k)))
			}
			m.Indptr = append(m.Indptr, int64(len(m.Indices)))
			if qi >= 0 {
				m.QID = append(m.QID, c.Streams[qi].Values.Int64At(q))
			}
		}
		prev = c
	}
	return m
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func sameMatrix(t *testing.T, what string, got, want matrix) {
	t.Helper()
	if !reflect.DeepEqual(got.Indptr, want.Indptr) || !reflect.DeepEqual(got.Indices, want.Indices) || !sameFloats(got.Values, want.Values) {
		t.Fatalf("%s: features differ:\n got %v %v %v\nwant %v %v %v", what, got.Indptr, got.Indices, got.Values, want.Indptr, want.Indices, want.Values)
	}
	if !sameFloats(got.Labels, want.Labels) || !reflect.DeepEqual(got.Multi, want.Multi) || !reflect.DeepEqual(got.QID, want.QID) {
		t.Fatalf("%s: labels or qids differ:\n got %v %v %v\nwant %v %v %v", what, got.Labels, got.Multi, got.QID, want.Labels, want.Multi, want.QID)
	}
	if got.Dim != want.Dim {
		t.Fatalf("%s: dimension %d, want %d", what, got.Dim, want.Dim)
	}
}

// TestSklearn reads what dump_svmlight_file writes (zero- and one-based, qid, multi-label)
// and compares with what load_svmlight_file reads from the same files; then writes the data
// back and has load_svmlight_file read mlfeed's files.
func TestSklearn(t *testing.T) {
	py := testutil.Python(t, "sklearn")
	d := t.TempDir()
	out, err := exec.Command(py, "-c", sklearnDump, d).Output()
	if err != nil {
		t.Fatalf("sklearn: %v", err)
	}
	var want map[string]matrix
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	written := map[string]matrix{}
	for name, w := range want {
		for _, opts := range []*libsvm.ReaderOptions{nil, {NoMmap: true, ChunkSize: 100}} {
			rd, err := libsvm.Open(filepath.Join(d, name+".svm"), opts)
			if err != nil {
				t.Fatal(err)
			}
			wantBase := libsvm.BaseOne
			if name == "zero" || name == "multi" {
				wantBase = libsvm.BaseZero
			}
			if rd.Base() != wantBase {
				t.Errorf("%s: base %v, want %v", name, rd.Base(), wantBase)
			}
			got := fromReader(t, rd)
			if name == "multi" {
				for i := range w.Multi { // our multi-hot has the set; sklearn keeps lists of floats
					if w.Multi[i] == nil {
						w.Multi[i] = []int{}
					}
				}
			}
			sameMatrix(t, name, got, w)
			// Write it back, one-based, and have scikit-learn read it.
			path := filepath.Join(t.TempDir(), name+".svm")
			f, _ := os.Create(path)
			wr, err := libsvm.NewWriter(f, rd.Schema(), nil)
			if err != nil {
				t.Fatal(err)
			}
			testutil.WriteAll(t, rd, wr)
			f.Close()
			rd.Close()
			written[path] = got
		}
	}
	cmd := exec.Command(py, "-c", sklearnLoad)
	js, _ := json.Marshal(written)
	cmd.Stdin = strings.NewReader(string(js))
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("load_svmlight_file on mlfeed's files: %v\n%s", err, out)
	}
}

// TestErrors checks that bad input fails with the line and column.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ text, where string }{
		{"1 1:2\n1 3:x\n", ":2:5:"},
		{"1 2:1 1:3\n", ":1:7:"},
		{"1 -1:3\n", ":1:3:"},
		{"abc 1:3\n", ":1:1:"},
		{"1 1:\n", ":1:5:"},
		{"1 qid:1 1:2\n2 1:3\n", ":2:3:"},
		{"1 1:2 junk\n", ":1:7:"},
		{"1,2.5 1:2\n", ":1:3:"},
		{"# c\n\n1 99999999999:2\n", ":3:3:"},
	} {
		_, err := openText(c.text, nil)
		if err == nil {
			rd, _ := openText(c.text, nil)
			_, err = rd.ReadChunk(context.Background(), 0)
		}
		var pe *mlfeed.PosError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.where) {
			t.Errorf("%q: error %v, want one at %s", c.text, err, c.where)
		}
	}
	if _, err := openText("0 0:1\n", &libsvm.ReaderOptions{Base: libsvm.BaseOne}); err == nil {
		t.Error("index 0 in a one-based file accepted")
	}
	if _, err := openText("0 5:1\n", &libsvm.ReaderOptions{Dim: 3}); !errors.Is(err, mlfeed.ErrRange) {
		t.Errorf("dim below the largest index: %v", err)
	}
}

func openText(text string, opts *libsvm.ReaderOptions) (*libsvm.Reader, error) {
	if opts == nil {
		opts = &libsvm.ReaderOptions{}
	}
	opts.FileName = "t.svm"
	return libsvm.NewReaderBytes([]byte(text), opts)
}
