package hdf5

import (
	"bytes"
	"encoding/binary"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// testData returns n little-endian elements of type t with varied values.
func testData(t mlfeed.ElemType, n int) []byte {
	b := make([]byte, n*t.Size())
	for i := 0; i < n; i++ {
		v := uint64(i)*0x9E3779B97F4A7C15 ^ uint64(i%7)
		switch t {
		case mlfeed.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)*0.25-100))
		case mlfeed.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(i)*1.5e-3-7))
		default:
			for k := 0; k < t.Size(); k++ {
				b[i*t.Size()+k] = byte(v >> (8 * k))
			}
		}
	}
	return b
}

type writeCase struct {
	path, name string
	t          mlfeed.ElemType
	dims       []uint64
	o          DatasetOptions
}

var writeCases = []writeCase{
	{"/", "contiguous", mlfeed.Float64, []uint64{1000}, DatasetOptions{}},
	{"/", "matrix", mlfeed.Float32, []uint64{100, 3, 4}, DatasetOptions{}},
	{"/", "chunked", mlfeed.Int32, []uint64{5000}, DatasetOptions{ChunkRows: 64}},
	{"/", "gzip", mlfeed.Int64, []uint64{10000}, DatasetOptions{ChunkRows: 100, Level: 6}},
	{"/", "gzip_shuffle", mlfeed.Uint16, []uint64{7777}, DatasetOptions{ChunkRows: 1000, Level: 1, Shuffle: true}},
	{"/", "deep_btree", mlfeed.Uint8, []uint64{100000}, DatasetOptions{ChunkRows: 10}},
	{"/", "rows_gzip", mlfeed.Float64, []uint64{333, 5}, DatasetOptions{ChunkRows: 10, Level: 9, Shuffle: true}},
	{"/", "empty", mlfeed.Int8, []uint64{0}, DatasetOptions{ChunkRows: 10}},
	{"/", "empty_contig", mlfeed.Uint32, []uint64{0, 2}, DatasetOptions{}},
	{"/", "scalar", mlfeed.Float64, nil, DatasetOptions{}},
	{"/a/b", "nested", mlfeed.Uint64, []uint64{17}, DatasetOptions{ChunkRows: 4, Level: 3}},
}

func writeTestFile(t *testing.T, name string) {
	w, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range writeCases {
		n := 1
		for _, d := range c.dims {
			n *= int(d)
		}
		if err := w.WriteDataset(c.path, c.name, c.t, c.dims, testData(c.t, n), c.o); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetAttr("/", "binsparse", `{"binsparse": {"format": "CSR"}, "ünïcode": "✓"}`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		w.SetAttr("/a", "attr"+string(rune('a'+i)), strings.Repeat("x", i*100))
	}
	w.CreateGroup("/empty/group")
	// rows appended in pieces of varied sizes
	d, err := w.CreateDataset("/a", "appended", mlfeed.Int16, []uint64{3}, DatasetOptions{ChunkRows: 7, Level: 2, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	all := testData(mlfeed.Int16, 3*200)
	for off, k := 0, 1; off < 200; off, k = off+k, k+3 {
		k := min(k, 200-off)
		if err := d.Write(all[off*6 : (off+k)*6]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteRead writes every kind of dataset and reads it back with this package.
func TestWriteRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "w.h5")
	writeTestFile(t, name)
	f, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check := func(path string, et mlfeed.ElemType, dims []uint64, want []byte) {
		o, err := f.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := o.Dataset()
		if err != nil {
			t.Fatal(err)
		}
		if d.Type.ElemType() != et || len(d.Dims) != len(dims) {
			t.Errorf("%s: %s %v", path, d.Type, d.Dims)
		}
		buf := make([]byte, d.Len()*uint64(d.Type.Size))
		if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, want) {
			t.Errorf("%s: values differ", path)
		}
	}
	for _, c := range writeCases {
		n := 1
		for _, d := range c.dims {
			n *= int(d)
		}
		check(c.path+"/"+c.name, c.t, c.dims, testData(c.t, n))
	}
	check("/a/appended", mlfeed.Int16, []uint64{200, 3}, testData(mlfeed.Int16, 600))
	root, _ := f.Root()
	a, err := root.Attr("binsparse")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := a.String(); s != `{"binsparse": {"format": "CSR"}, "ünïcode": "✓"}` {
		t.Errorf("attribute %q", s)
	}
}

// TestWriteH5py checks that h5py reads what the writer writes, equal values, and that h5dump
// (HDF5's own tool) reads it without error.
func TestWriteH5py(t *testing.T) {
	name := filepath.Join(t.TempDir(), "w.h5")
	writeTestFile(t, name)
	want, err := goDump(name)
	if err != nil {
		t.Fatal(err)
	}
	got := pyDump(t, []string{name})[name]
	for path, we := range want {
		ge := got[path]
		if we.Sha256 != ge.Sha256 || we.Dtype != ge.Dtype && we.Sha256 != "" || len(we.Attrs) != len(ge.Attrs) {
			t.Errorf("%s:\n h5py %+v\n   go %+v", path, ge, we)
		}
		for k, v := range we.Attrs {
			if ge.Attrs[k]["str"] != v["str"] {
				t.Errorf("%s attribute %s: h5py %q", path, k, ge.Attrs[k])
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("h5py sees %d objects, go %d", len(got), len(want))
	}
	if _, err := exec.LookPath("h5dump"); err != nil {
		t.Log("h5dump not installed")
		return
	}
	out, err := exec.Command("h5dump", name).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("error")) {
		t.Errorf("h5dump: %v\n%s", err, out[:min(len(out), 2000)])
	}
}
