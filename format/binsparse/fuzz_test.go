package binsparse

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// corpusDescriptors extracts the JSON descriptors stored in the corpus files' bytes (HDF5
// keeps attribute strings unfiltered), so the descriptor fuzzer starts from what real
// implementations write without needing libhdf5.
func corpusDescriptors(f *testing.F) [][]byte {
	d := testutil.SharedDir()
	if d == "" {
		return nil
	}
	var out [][]byte
	filepath.WalkDir(filepath.Join(d, "testdata", "binsparse"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for i := 0; i < len(data); i++ {
			if data[i] != '{' {
				continue
			}
			depth := 0
			for j := i; j < len(data) && j-i < 1<<16; j++ {
				switch data[j] {
				case '{':
					depth++
				case '}':
					depth--
				}
				if depth == 0 {
					if js := data[i : j+1]; bytes.Contains(js, []byte(`"data_types"`)) {
						out = append(out, append([]byte(nil), js...))
						i = j
					}
					break
				}
			}
		}
		return nil
	})
	return out
}

func FuzzDescriptor(f *testing.F) {
	for _, c := range descriptorCases {
		f.Add([]byte(c.js))
	}
	for _, js := range corpusDescriptors(f) {
		f.Add(js)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDescriptor(data)
		if err != nil {
			return
		}
		if d.NumberOfStoredValues < 0 {
			d.NumberOfStoredValues = 0
		}
		js, err := d.Marshal()
		if err != nil {
			return // user keys holding invalid JSON cannot come from a parsed file; other errors are fine
		}
		d2, err := ParseDescriptor(js)
		if err != nil {
			t.Fatalf("re-parse of\n%s\nfailed: %v", js, err)
		}
		if d2.Format != d.Format || !reflect.DeepEqual(d2.Shape, d.Shape) || d2.Structure != d.Structure ||
			d2.Fill != d.Fill || !reflect.DeepEqual(d2.DataTypes, d.DataTypes) || !reflect.DeepEqual(d2.Custom, d.Custom) ||
			d2.NumberOfStoredValues != d.NumberOfStoredValues || len(d2.User) != len(d.User) {
			t.Fatalf("round trip changed the descriptor:\n%+v\n%+v", d, d2)
		}
	})
}

// matrixFromBytes builds a small matrix of any predefined format from fuzz data: a format
// byte, a structure byte, the shape, then the arrays' uint8 elements.
func matrixFromBytes(data []byte) *Matrix {
	formats := []Format{DVEC, DMATR, DMATC, CVEC, CSR, CSC, DCSR, DCSC, COOR, COOC}
	structures := []Structure{General, General, General, SymmetricLower, SymmetricUpper, SkewSymmetricLower, SkewSymmetricUpper}
	if len(data) < 4 {
		return nil
	}
	f := formats[int(data[0])%len(formats)]
	st := structures[int(data[1])%len(structures)]
	lv := predefined(f)
	shape := []int64{int64(data[2] % 16)}
	data = data[3:]
	if lv.Rank() == 2 {
		shape = append(shape, int64(data[0]%16))
		data = data[1:]
		if st != General {
			shape[1] = shape[0]
		}
	} else {
		st = General
	}
	m := &Matrix{Descriptor: Descriptor{Format: f, Shape: shape, NumberOfStoredValues: -1, Structure: st,
		DataTypes: map[string]DataType{}}, Arrays: map[string]mlfeed.Buffer{}}
	names := lv.arrays()
	for i, n := range names {
		var b []byte
		if len(data) > 0 {
			k := int(data[0]) % (len(data))
			if i == len(names)-1 {
				k = len(data) - 1
			}
			b, data = data[1:1+k], data[1+k:]
		}
		t := mlfeed.Uint8
		if n == "values" {
			t = mlfeed.Int8
		}
		m.Arrays[n] = mlfeed.Buffer{Type: t, Bytes: append([]byte{}, b...)}
		m.Descriptor.DataTypes[n] = DataType{Type: t}
	}
	return m
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte{4, 0, 3, 3, 4, 0, 1, 2, 3, 2, 0, 2, 3, 5, 6, 7})    // CSR 3x3
	f.Add([]byte{8, 3, 3, 3, 3, 0, 1, 2, 3, 0, 0, 1, 3, 1, 2, 3})    // COOR symmetric
	f.Add([]byte{6, 0, 4, 4, 2, 0, 3, 3, 0, 2, 3, 2, 1, 3, 4, 9, 8}) // DCSR
	f.Add([]byte{1, 0, 2, 3, 7, 1, 2, 3, 4, 5, 6})                   // DMATR
	f.Add([]byte{3, 0, 9, 3, 2, 5, 8, 4, 13, 16, 19})                // CVEC
	f.Fuzz(func(t *testing.T, data []byte) {
		m := matrixFromBytes(data)
		if m == nil {
			return
		}
		var errs int
		m.ValidateAll(func(error) bool { errs++; return true })
		if m.Validate() != nil {
			if errs == 0 {
				t.Fatal("Validate fails but ValidateAll reports nothing")
			}
			return
		}
		want, err := denseInts(m)
		if err != nil {
			t.Fatal(err)
		}
		targets := []Format{CSR, CSC, DCSR, DCSC, COOR, COOC, DMATR, DMATC}
		if len(m.Descriptor.Shape) == 1 {
			targets = []Format{DVEC, CVEC}
		}
		for _, g := range targets {
			c, err := m.Convert(g, &ConvertOptions{Expand: true})
			if err != nil {
				t.Fatalf("%s -> %s: %v", m.Format(), g, err)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("%s -> %s: invalid result: %v", m.Format(), g, err)
			}
			got, err := denseInts(c)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s -> %s: %v, want %v", m.Format(), g, got, want)
			}
		}
	})
}

// denseInts returns the logical matrix of an integer-valued matrix.
func denseInts(m *Matrix) ([][]int64, error) {
	r, c, v, err := m.Entries(true)
	if err != nil {
		return nil, err
	}
	d := &m.Descriptor
	rows, cols := d.Rows(), d.Shape[len(d.Shape)-1]
	out := make([][]int64, rows)
	for i := range out {
		out[i] = make([]int64, cols)
	}
	for k := range r {
		out[r[k]][c[k]] = v.Int64At(k)
	}
	return out, nil
}

// FuzzNPZ reads arbitrary bytes as an NPZ container: an error or a valid matrix, never a
// panic or an allocation the input does not justify.
func FuzzNPZ(f *testing.F) {
	if d := testutil.SharedDir(); d != "" {
		if data, err := os.ReadFile(filepath.Join(d, "testdata", "binsparse", "reference-python-2026", "ref2026_csr.bsp.npz")); err == nil {
			f.Add(data)
		}
	}
	m, err := New(CSR, []int64{2, 3}, map[string]mlfeed.Buffer{"pointers_to_1": u8(0, 1, 2), "indices_1": u8(2, 0), "values": f64(1, 2)}, false)
	if err != nil {
		f.Fatal(err)
	}
	for _, level := range []int{NoCompression, 5} {
		p := filepath.Join(f.TempDir(), "seed.bsp.npz")
		if err := WriteFile(p, m, &WriteOptions{Level: level}); err != nil {
			f.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.bsp.npz")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil {
			return
		}
		if _, err := got.check(func(error) bool { return true }); err != nil {
			t.Fatalf("ReadFile returned a matrix that fails its check: %v", err)
		}
	})
}

// FuzzHDF5 opens arbitrary bytes as a Binsparse HDF5 file (.bsp.h5), as FuzzNPZ does for
// NPZ: seeded with files this package writes (contiguous and deflated), the corpus's small
// files, and internal/hdf5's hostile ones (groups that link back to the root, soft links, a
// gzip bomb). Group listing walks each object once; no panic, no hang.
func FuzzHDF5(f *testing.F) {
	var seeds []string
	if d := testutil.SharedDir(); d != "" {
		seeds, _ = filepath.Glob(filepath.Join(d, "testdata", "binsparse", "*", "*.bsp.h5"))
	}
	hostile, _ := filepath.Glob("../../internal/hdf5/testdata/*.h5")
	for _, name := range append(seeds, hostile...) {
		if data, err := os.ReadFile(name); err == nil && len(data) <= 24<<10 {
			f.Add(data)
		}
	}
	m, err := New(CSR, []int64{2, 3}, map[string]mlfeed.Buffer{"pointers_to_1": u8(0, 1, 2), "indices_1": u8(2, 0), "values": f64(1, 2)}, false)
	if err != nil {
		f.Fatal(err)
	}
	for _, level := range []int{NoCompression, 5} {
		p := filepath.Join(f.TempDir(), "seed.bsp.h5")
		if err := WriteFile(p, m, &WriteOptions{Level: level}); err != nil {
			f.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.bsp.h5")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		matchFile(bytes.NewReader(data), int64(len(data)))
		got, err := ReadFile(p)
		if err != nil {
			return
		}
		if _, err := got.check(func(error) bool { return true }); err != nil {
			t.Fatalf("ReadFile returned a matrix that fails its check: %v", err)
		}
	})
}
