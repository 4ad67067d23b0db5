package parquet

import (
	"path/filepath"
	"testing"

	_ "github.com/mlfeed/mlfeed/format/arrow"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	_ "github.com/mlfeed/mlfeed/format/idv"
	_ "github.com/mlfeed/mlfeed/format/idx"
	"github.com/mlfeed/mlfeed/internal/arrowmap/arrowtest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestConvertIDV: ML.NET's IDV files (every column type, key types, vectors, slot names) go
// to Parquet, to Arrow and back to IDV.
func TestConvertIDV(t *testing.T) {
	for _, f := range []string{"datatypes.idv", "calibrator-Schema.idv", "termlookup-DefaultMap.idv"} {
		arrowtest.ConvertRoundTrip(t, filepath.Join(testutil.Testdata(t, "idv"), f), ".idv", ".parquet", ".arrow")
	}
}

// TestConvertCTF: CNTK text files with sequences of several samples and sparse streams go to
// Parquet and back to CTF.
func TestConvertCTF(t *testing.T) {
	for _, f := range []string{"100x100_jagged_sequences_sparse.txt", "10x10_dense.txt", "1x10_sparse.txt"} {
		arrowtest.ConvertRoundTrip(t, filepath.Join(testutil.Testdata(t, "cntk", "ctf"), f), ".ctf", ".parquet")
	}
}
