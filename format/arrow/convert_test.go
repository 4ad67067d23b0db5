package arrow

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	_ "github.com/mlfeed/mlfeed/format/idv"
	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/libsvm"
	_ "github.com/mlfeed/mlfeed/format/npy"
	_ "github.com/mlfeed/mlfeed/format/parquet"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func openAny(t *testing.T, name string) mlfeed.Source {
	t.Helper()
	src, err := format.Open([]string{name}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// roundTrip converts in to each of the middle formats and back to back's extension, and
// checks that the data and the schema survive every step.
func roundTrip(t *testing.T, in string, back string, middle ...string) {
	t.Helper()
	src := openAny(t, in)
	dir := t.TempDir()
	cur := src
	for i, ext := range append(middle, back) {
		out := filepath.Join(dir, "step"+string(rune('0'+i))+ext)
		if err := convert.File(context.Background(), cur, out, nil); err != nil {
			t.Fatalf("%s -> %s: %v", filepath.Base(in), ext, err)
		}
		cur = openAny(t, out)
		qa, na := mlfeed.Totals(src.Chunks())
		if qb, nb := mlfeed.Totals(cur.Chunks()); qa != qb || na != nb {
			t.Errorf("%s -> %s: chunk table counts %d sequences, %d samples; want %d, %d", filepath.Base(in), ext, qb, nb, qa, na)
		}
		if err := mlfeed.Diff(context.Background(), src, cur); err != nil {
			t.Errorf("%s -> %s: %v", filepath.Base(in), ext, err)
		}
		sa, sb := src.Schema(), cur.Schema()
		for k := range sa.Streams {
			if a, b := sa.Streams[k], sb.Streams[k]; !reflect.DeepEqual(a, b) {
				t.Errorf("%s -> %s: stream\n%#v\nbecame\n%#v", filepath.Base(in), ext, a, b)
			}
		}
	}
}

// TestConvertIDX: MNIST's IDX files go to Arrow (and Parquet) and back to IDX.
func TestConvertIDX(t *testing.T) {
	roundTrip(t, filepath.Join(testutil.Testdata(t, "mnist"), "t10k-labels-idx1-ubyte"), ".idx", ".arrow")
	roundTrip(t, filepath.Join(testutil.Testdata(t, "mnist"), "t10k-images-idx3-ubyte"), ".idx", ".arrow", ".parquet", ".arrows")
}

// TestConvertCBF: CNTK binary files with sparse streams and sequences of several samples go
// to Arrow and back to CBF.
func TestConvertCBF(t *testing.T) {
	for _, f := range []string{"10x10_sparse.bin", "50x20_jagged_sequences_sparse.bin", "50x20_jagged_sequences_dense.bin"} {
		roundTrip(t, filepath.Join(testutil.Testdata(t, "cntk", "cbf"), f), ".cbf", ".arrow")
	}
}

// TestConvertNumPyLIBSVM: NumPy arrays (several dtypes, Fortran order, .npz members) and
// LIBSVM files (sparse features, multi-label, qid) go to Arrow and Parquet and back.
func TestConvertNumPyLIBSVM(t *testing.T) {
	for _, f := range []string{"f4_3x4.npy", "fortran_f8_2x3.npy", "be_i2_5.npy", "v3_b1_3.npy", "deflated.npz"} {
		ext := filepath.Ext(f)
		roundTrip(t, filepath.Join("..", "npy", "testdata", f), ext, ".arrow", ".parquet")
	}
	for _, f := range []string{"sklearn_multi.svm", "sklearn_one_qid.svm", "sklearn_zero.svm"} {
		roundTrip(t, filepath.Join("..", "libsvm", "testdata", f), ".svm", ".parquet", ".arrows")
	}
}
