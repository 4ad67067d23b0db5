//go:build cgo && hdf5

package binsparse

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5"
	"github.com/mlfeed/mlfeed/format/binsparse/internal/h5cgo"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// oracleCompare checks that the pure-Go HDF5 layer reads the file at p exactly as libhdf5 does:
// the same groups, descriptors, array descriptions and values.
func oracleCompare(t *testing.T, p string) {
	g, err := h5.Open(p)
	if err != nil {
		t.Errorf("%s: pure Go: %v", p, err)
		return
	}
	defer g.Close()
	c, err := h5cgo.Open(p)
	if err != nil {
		t.Errorf("%s: libhdf5: %v", p, err)
		return
	}
	defer c.Close()
	gg, err1 := g.Groups()
	cg, err2 := c.Groups()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gg, cg) {
		t.Errorf("%s: groups %v (%v), libhdf5 %v (%v)", p, gg, err1, cg, err2)
		return
	}
	names := []string{"pointers_to_1", "indices_0", "indices_1", "indices_2", "values", "fill_value"}
	for _, grp := range gg {
		gv, gok, err1 := g.Attr(grp, "binsparse")
		cv, cok, err2 := c.Attr(grp, "binsparse")
		if err1 != nil || err2 != nil || gok != cok || gv != cv {
			t.Errorf("%s %s: descriptor %q %v %v, libhdf5 %q %v %v", p, grp, gv, gok, err1, cv, cok, err2)
		}
		for _, n := range names {
			gi, gok, err1 := g.Dataset(grp, n)
			ci, cok, err2 := c.Dataset(grp, n)
			if err1 != nil || err2 != nil || gok != cok {
				t.Errorf("%s %s/%s: %v %v, libhdf5 %v %v", p, grp, n, gok, err1, cok, err2)
				continue
			}
			if !gok {
				continue
			}
			if gi.Type != ci.Type || gi.Len != ci.Len || gi.Rank != ci.Rank || gi.Layout != ci.Layout || gi.Chunk != ci.Chunk ||
				strings.Join(gi.Filters, "+") != strings.Join(ci.Filters, "+") {
				t.Errorf("%s %s/%s: %+v, libhdf5 %+v", p, grp, n, gi, ci)
				continue
			}
			gb, err1 := g.Read(grp, n, gi.Type, 0, gi.Len, gi.Len)
			cb, err2 := c.Read(grp, n, ci.Type, 0, ci.Len, ci.Len)
			if err1 != nil || err2 != nil || !bytes.Equal(gb.Bytes, cb.Bytes) {
				t.Errorf("%s %s/%s: values differ (%v, libhdf5 %v)", p, grp, n, err1, err2)
			}
			if gi.Len > 2 { // a part in the middle
				gb, err1 := g.Read(grp, n, gi.Type, 1, gi.Len-2, gi.Len)
				cb, err2 := c.Read(grp, n, ci.Type, 1, ci.Len-2, ci.Len)
				if err1 != nil || err2 != nil || !bytes.Equal(gb.Bytes, cb.Bytes) {
					t.Errorf("%s %s/%s: partial values differ (%v, libhdf5 %v)", p, grp, n, err1, err2)
				}
			}
		}
	}
}

// TestOracleCorpus compares the pure-Go HDF5 layer with libhdf5 on every HDF5 test file.
func TestOracleCorpus(t *testing.T) {
	root := testutil.Testdata(t, "binsparse")
	n := 0
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && (strings.HasSuffix(p, ".h5") || strings.HasSuffix(p, ".nc")) && !strings.Contains(p, "broken") {
			oracleCompare(t, p)
			n++
		}
		return nil
	})
	if n < 40 {
		t.Errorf("compared %d files", n)
	}
}

// TestOracleReadsWhatWeWrite writes every test matrix with the pure-Go writer (several
// storage options) and compares libhdf5's reading with ours.
func TestOracleReadsWhatWeWrite(t *testing.T) {
	dir := t.TempDir()
	for name, m := range testMatricesInternal(t) {
		for i, o := range []*WriteOptions{nil, {Level: NoCompression}, {Level: 1, Shuffle: true, Chunk: 64}} {
			p := filepath.Join(dir, name+string(rune('a'+i))+".bsp.h5")
			if err := WriteFile(p, m, o); err != nil {
				t.Fatal(err)
			}
			oracleCompare(t, p)
		}
	}
}

// testMatricesInternal returns a few matrices of different formats and types.
func testMatricesInternal(t *testing.T) map[string]*Matrix {
	out := map[string]*Matrix{}
	coo, err := New(COOR, []int64{50, 60}, map[string]mlfeed.Buffer{
		"indices_0": u8(0, 3, 3, 9, 49), "indices_1": u8(7, 1, 59, 0, 0), "values": f64(1, 2, 3, 4, 5)}, false)
	if err != nil {
		t.Fatal(err)
	}
	out["coo"] = coo
	for _, f := range []Format{CSR, CSC, DMATR} {
		m, err := coo.Convert(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[string(f)] = m
	}
	return out
}

// BenchmarkOracleScript is bench/binsparse.sh's libhdf5 (cgo) side: it reads the arrays of
// each file in MLFEED_BENCH_FILES (comma-separated) through libhdf5.
func BenchmarkOracleScript(b *testing.B) {
	files := os.Getenv("MLFEED_BENCH_FILES")
	if files == "" {
		b.Skip("skipped: set MLFEED_BENCH_FILES (bench/binsparse.sh does)")
	}
	for _, p := range strings.Split(files, ",") {
		b.Run("read/"+filepath.Base(p), func(b *testing.B) {
			reportCPU(b, func() { oracleRead(b, p) })
		})
	}
}

// oracleRead reads the arrays of p through libhdf5 b.N times.
func oracleRead(b *testing.B, p string) {
	for i := 0; i < b.N; i++ {
		f, err := h5cgo.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []string{"pointers_to_1", "indices_1", "values"} {
			in, ok, err := f.Dataset("/", n)
			if err != nil || !ok {
				b.Fatal(n, err)
			}
			if _, err := f.Read("/", n, in.Type, 0, in.Len, in.Len); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
