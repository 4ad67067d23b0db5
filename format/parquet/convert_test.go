package parquet

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/arrow"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	_ "github.com/mlfeed/mlfeed/format/idv"
	_ "github.com/mlfeed/mlfeed/format/idx"
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

// TestConvertIDV: ML.NET's IDV files (every column type, key types, vectors, slot names) go
// to Parquet, to Arrow and back to IDV.
func TestConvertIDV(t *testing.T) {
	for _, f := range []string{"datatypes.idv", "calibrator-Schema.idv", "termlookup-DefaultMap.idv"} {
		roundTrip(t, filepath.Join(testutil.Testdata(t, "idv"), f), ".idv", ".parquet", ".arrow")
	}
}

// TestConvertCTF: CNTK text files with sequences of several samples and sparse streams go to
// Parquet and back to CTF.
func TestConvertCTF(t *testing.T) {
	for _, f := range []string{"100x100_jagged_sequences_sparse.txt", "10x10_dense.txt", "1x10_sparse.txt"} {
		roundTrip(t, filepath.Join(testutil.Testdata(t, "cntk", "ctf"), f), ".ctf", ".parquet")
	}
}
