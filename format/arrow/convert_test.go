package arrow_test

import (
	"path/filepath"
	"testing"

	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	_ "github.com/mlfeed/mlfeed/format/idv"
	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/libsvm"
	_ "github.com/mlfeed/mlfeed/format/npy"
	_ "github.com/mlfeed/mlfeed/format/parquet"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestConvertIDX: MNIST's IDX files go to Arrow (and Parquet) and back to IDX.
func TestConvertIDX(t *testing.T) {
	arrowtest.ConvertRoundTrip(t, filepath.Join(testutil.Testdata(t, "mnist"), "t10k-labels-idx1-ubyte"), ".idx", ".arrow")
	arrowtest.ConvertRoundTrip(t, filepath.Join(testutil.Testdata(t, "mnist"), "t10k-images-idx3-ubyte"), ".idx", ".arrow", ".parquet", ".arrows")
}

// TestConvertCBF: CNTK binary files with sparse streams and sequences of several samples go
// to Arrow and back to CBF.
func TestConvertCBF(t *testing.T) {
	for _, f := range []string{"10x10_sparse.bin", "50x20_jagged_sequences_sparse.bin", "50x20_jagged_sequences_dense.bin"} {
		arrowtest.ConvertRoundTrip(t, filepath.Join(testutil.Testdata(t, "cntk", "cbf"), f), ".cbf", ".arrow")
	}
}

// TestConvertNumPyLIBSVM: NumPy arrays (several dtypes, Fortran order, .npz members) and
// LIBSVM files (sparse features, multi-label, qid) go to Arrow and Parquet and back.
func TestConvertNumPyLIBSVM(t *testing.T) {
	for _, f := range []string{"f4_3x4.npy", "fortran_f8_2x3.npy", "be_i2_5.npy", "v3_b1_3.npy", "deflated.npz"} {
		ext := filepath.Ext(f)
		arrowtest.ConvertRoundTrip(t, filepath.Join("..", "npy", "testdata", f), ext, ".arrow", ".parquet")
	}
	for _, f := range []string{"sklearn_multi.svm", "sklearn_one_qid.svm", "sklearn_zero.svm"} {
		arrowtest.ConvertRoundTrip(t, filepath.Join("..", "libsvm", "testdata", f), ".svm", ".parquet", ".arrows")
	}
}
