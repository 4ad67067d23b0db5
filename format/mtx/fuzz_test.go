package mtx_test

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzRead parses arbitrary input; what parses must be valid, and must survive Write and Read
// unchanged.
func FuzzRead(f *testing.F) {
	for _, p := range [][]string{{"finch-2024", "b1_ss.mtx"}, {"finch-2024", "farm.mtx"}, {"finch-2024", "bar.mtx"}, {"reference-c", "sympat.mtx"}, {"reference-c", "herm.mtx"}} {
		if d := testutil.SharedDir(); d != "" {
			if data, err := os.ReadFile(d + "/testdata/binsparse/" + p[0] + "/" + p[1]); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"))
	f.Add([]byte("%%MatrixMarket matrix array complex general\n1 2\n1 2\n3 4\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n1 3 -7\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate pattern general\n% c\n2 3 2\n2 3\n1 1\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n5 2\n4 1.5\n2 -2\n"))                                   // a vector, as Finch writes one
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 nan(0x8000000000001)\n2 1 -nan\n2 2 nan\n")) // NaN payloads
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n2 2 2\n2 1 1\n% c\n2 1 2\n"))                           // a duplicate
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := mtx.Read(bytes.NewReader(data), "fuzz.mtx")
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed an invalid matrix: %v", err)
		}
		var buf bytes.Buffer
		if err := mtx.Write(&buf, m, nil); err != nil {
			t.Fatalf("write: %v", err)
		}
		back, err := mtx.Read(&buf, "again.mtx")
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, buf.Bytes())
		}
		// Compared entry by entry, not densified: a header may declare a huge, empty shape.
		if got, want := nonzeros(t, back), nonzeros(t, m); !reflect.DeepEqual(got, want) && !hasNaN(want) {
			t.Fatalf("round trip changed the matrix:\n%v\n%v", got, want)
		}
	})
}

// nonzeros returns a matrix's nonzero entries (symmetric ones expanded, a later duplicate
// replacing an earlier one, as a dense copy would have them) by position.
func nonzeros(t testing.TB, m *binsparse.Matrix) map[[2]int64][]float64 {
	t.Helper()
	r, c, vals := sparsetest.Entries(t, m)
	out := map[[2]int64][]float64{}
	for k, val := range vals {
		key := [2]int64{r[k], c[k]}
		if slices.ContainsFunc(val, func(x float64) bool { return x != 0 }) {
			out[key] = val
		} else {
			delete(out, key)
		}
	}
	return out
}

func hasNaN(d map[[2]int64][]float64) bool {
	for _, v := range d {
		for _, x := range v {
			if x != x {
				return true
			}
		}
	}
	return false
}
