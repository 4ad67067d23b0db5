package mtx_test

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed/format/mtx"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzRead parses arbitrary input; what parses must be valid, and must survive Write and Read
// unchanged.
func FuzzRead(f *testing.F) {
	for _, p := range [][]string{{"finch-2024", "b1_ss.mtx"}, {"finch-2024", "farm.mtx"}, {"reference-c", "sympat.mtx"}, {"reference-c", "herm.mtx"}} {
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
		if got, want := denseOf(t, back), denseOf(t, m); !reflect.DeepEqual(got, want) && !hasNaN(want) {
			t.Fatalf("round trip changed the matrix:\n%v\n%v", got, want)
		}
	})
}

func hasNaN(d [][]float64) bool {
	for _, r := range d {
		for _, v := range r {
			if v != v {
				return true
			}
		}
	}
	return false
}
