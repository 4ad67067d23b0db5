package mtx_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
	"github.com/mlfeed/mlfeed/internal/sparsetest"
)

func buf(t mlfeed.ElemType, v ...float64) mlfeed.Buffer {
	b := mlfeed.NewBuffer(t, len(v))
	for i, x := range v {
		b.SetFloat64(i, x)
	}
	return b
}

func TestWriteTypes(t *testing.T) {
	idx := func(v ...float64) mlfeed.Buffer { return buf(mlfeed.Uint8, v...) }
	c64 := buf(mlfeed.Float32, 1, -2, 0.5, 3)
	c64.Type = mlfeed.Complex64
	cases := map[string]struct {
		m      *binsparse.Matrix
		header string
	}{}
	add := func(name string, f binsparse.Format, shape []int64, arrays map[string]mlfeed.Buffer, iso bool, st binsparse.Structure, header string) {
		m, err := binsparse.New(f, shape, arrays, iso)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m.Descriptor.Structure = st
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cases[name] = struct {
			m      *binsparse.Matrix
			header string
		}{m, header}
	}
	add("f32", binsparse.CSR, []int64{2, 3}, map[string]mlfeed.Buffer{"pointers_to_1": idx(0, 1, 2), "indices_1": idx(2, 0), "values": buf(mlfeed.Float32, 0.1, 1e-30)}, false, "", "coordinate real general")
	add("u64", binsparse.COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": idx(0, 1), "indices_1": idx(1, 1), "values": buf(mlfeed.Uint64, 7, 9)}, false, "", "coordinate integer general")
	add("c64", binsparse.COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": idx(0, 1), "indices_1": idx(0, 1), "values": c64}, false, "", "coordinate complex general")
	add("bool0", binsparse.COOR, []int64{2, 2}, map[string]mlfeed.Buffer{"indices_0": idx(0, 1), "indices_1": idx(0, 1), "values": buf(mlfeed.Bool, 1, 0)}, false, "", "coordinate integer general")
	add("iso", binsparse.CSC, []int64{3, 2}, map[string]mlfeed.Buffer{"pointers_to_1": idx(0, 2, 3), "indices_1": idx(0, 2, 1), "values": buf(mlfeed.Bool, 1)}, true, "", "coordinate pattern general")
	add("isoreal", binsparse.CSR, []int64{2, 2}, map[string]mlfeed.Buffer{"pointers_to_1": idx(0, 1, 2), "indices_1": idx(0, 1), "values": buf(mlfeed.Float64, 2.5)}, true, "", "coordinate real general")
	add("upper", binsparse.COOR, []int64{3, 3}, map[string]mlfeed.Buffer{"indices_0": idx(0, 0, 1), "indices_1": idx(1, 2, 2), "values": buf(mlfeed.Float64, 1, 2, 3)}, false, binsparse.SkewSymmetricUpper, "coordinate real skew-symmetric")
	add("dense", binsparse.DMATR, []int64{2, 3}, map[string]mlfeed.Buffer{"values": buf(mlfeed.Int16, 1, 2, 3, 4, 5, 6)}, false, "", "array integer general")
	add("densesym", binsparse.DMATR, []int64{2, 2}, map[string]mlfeed.Buffer{"values": buf(mlfeed.Float64, 1, 0, 2, 3)}, false, binsparse.SymmetricLower, "array real symmetric")
	for name, c := range cases {
		var b bytes.Buffer
		if err := mtx.Write(&b, c.m, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.header != "" && !strings.HasPrefix(b.String(), "%%MatrixMarket matrix "+c.header+"\n") {
			t.Errorf("%s: header %q", name, strings.SplitN(b.String(), "\n", 2)[0])
		}
		back, err := mtx.Read(&b, name)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b.String())
		}
		if c.m.Values().Type == mlfeed.Float32 {
			// float32 values are written in their shortest float32 form; they read back as
			// the float64 of that decimal, which rounds to the original float32.
			v, err := mlfeed.ConvertBuffer(mlfeed.Buffer{Type: mlfeed.Float32, Bytes: toF32(back.Values())}, mlfeed.Float32)
			if err != nil {
				t.Fatal(err)
			}
			back.Arrays["values"] = v
			back.Descriptor.DataTypes["values"] = binsparse.DataType{Type: mlfeed.Float32}
		}
		if got, want := sparsetest.Dense(t, back), sparsetest.Dense(t, c.m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back\n%v\nwant\n%v", name, got, want)
		}
	}
	var b bytes.Buffer
	mtx.Write(&b, cases["upper"].m, nil)
	if want := "skew-symmetric\n3 3 3\n2 1 -1\n3 1 -2\n3 2 -3\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("upper skew matrix written as\n%s", b.String())
	}
}

// TestConvertRoundTrip goes through the data model as the CLI does: mtx -> Binsparse NPZ ->
// mtx, keeping the structure.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, f := range corpusMTX(t) {
		orig, err := mtx.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []bool{false, true} {
			opts := &format.Options{}
			if keep {
				opts.Params = map[string]string{"structure": "keep"}
			}
			src, err := dataset.OpenFiles([]string{f}, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			mid := filepath.Join(dir, "m.bsp.npz")
			if err := convert.File(context.Background(), src, mid, nil); err != nil {
				t.Fatal(err)
			}
			src.Close()
			src, err = dataset.OpenFiles([]string{mid}, "", opts)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.mtx")
			if err := convert.File(context.Background(), src, out, nil); err != nil {
				t.Fatal(err)
			}
			src.Close()
			back, err := mtx.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sparsetest.Dense(t, back), sparsetest.Dense(t, orig)) {
				t.Errorf("%s (keep %v): round trip differs", filepath.Base(f), keep)
			}
			if keep && back.Descriptor.Structure != orig.Descriptor.Structure {
				t.Errorf("%s: structure %q after the round trip, want %q", filepath.Base(f), back.Descriptor.Structure, orig.Descriptor.Structure)
			}
			h, _ := mtx.ReadHeader(out)
			oh, _ := mtx.ReadHeader(f)
			if h.Field != oh.Field {
				t.Errorf("%s: field %s after the round trip, want %s", filepath.Base(f), h.Field, oh.Field)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.mtx")); err != nil {
		t.Fatal(err)
	}
}

// toF32 rounds float64 values to float32 bytes.
func toF32(b mlfeed.Buffer) []byte {
	out := mlfeed.NewBuffer(mlfeed.Float32, b.Len())
	for i := 0; i < b.Len(); i++ {
		out.SetFloat64(i, b.Float64At(i))
	}
	return out.Bytes
}

func TestConvertGzipOutput(t *testing.T) {
	f := corpusMTX(t)[1]
	src, err := dataset.OpenFiles([]string{f}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "farm.mtx.gz")
	if err := convert.File(context.Background(), src, out, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Fatalf("%s is not gzip", out)
	}
	a, err := mtx.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mtx.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sparsetest.Dense(t, a), sparsetest.Dense(t, b)) {
		t.Error("gzip copy differs")
	}
}
