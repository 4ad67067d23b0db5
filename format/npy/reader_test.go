package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// npyBytes builds a .npy file from a header dictionary and data, padded as numpy pads.
func npyBytes(dict string, data []byte) []byte {
	h := []byte(dict)
	for (10+len(h)+1)%64 != 0 {
		h = append(h, ' ')
	}
	b := append([]byte(Magic+"\x01\x00"), byte(len(h)+1), byte((len(h)+1)>>8))
	b = append(append(append(b, h...), '\n'), data...)
	return b
}

// TestBadInput checks that broken and unsupported files fail with the right sentinel and the
// byte offset, before anything is allocated for what they claim.
func TestBadInput(t *testing.T) {
	ok := "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }"
	for _, c := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"magic", []byte("\x93NUMPX\x01\x00\x10\x00"), mlfeed.ErrFormat, "byte offset 0"},
		{"version", []byte(Magic + "\x04\x00\x10\x00"), mlfeed.ErrUnsupported, "version 4.0"},
		{"short header", []byte(Magic + "\x01\x00\x40\x00{'descr'"), mlfeed.ErrTruncated, "header"},
		{"short data", npyBytes(ok, make([]byte, 7)), mlfeed.ErrTruncated, "announces 8 data bytes, file has 7"},
		{"trailing data", npyBytes(ok, make([]byte, 9)), mlfeed.ErrFormat, "1 bytes after"},
		{"longdouble", npyBytes("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", make([]byte, 32)), mlfeed.ErrUnsupported, "extended precision"},
		{"objects", npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", make([]byte, 16)), mlfeed.ErrUnsupported, "Python objects"},
		{"bytes", npyBytes("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", make([]byte, 6)), mlfeed.ErrUnsupported, "bytes"},
		{"structured", npyBytes("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)), mlfeed.ErrUnsupported, "structured"},
		{"unknown key", npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'x': 1}", make([]byte, 4)), mlfeed.ErrFormat, "unknown key"},
		{"missing key", npyBytes("{'descr': '<i2', 'shape': (2,), }", make([]byte, 4)), mlfeed.ErrFormat, "required"},
		{"huge shape", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }", nil), mlfeed.ErrTooLarge, "overflows"},
		{"claims more than the file", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,), }", nil), mlfeed.ErrTruncated, "file has 0"},
		{"many empty records", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 0), }", nil), mlfeed.ErrTooLarge, "records of zero bytes"},
		{"one-element tuple without comma", npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (2), }", make([]byte, 4)), mlfeed.ErrFormat, "shape"},
		{"bad byte order", npyBytes("{'descr': '!i2', 'fortran_order': False, 'shape': (2,), }", make([]byte, 4)), mlfeed.ErrFormat, "byte order"},
	} {
		_, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), &ReaderOptions{FileName: "x.npy"})
		var pe *mlfeed.PosError
		if err == nil || !errors.Is(err, c.want) || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "x.npy") {
			t.Errorf("%s: %v, want %v naming x.npy and %q", c.name, err, c.want, c.msg)
		}
	}
	// The header numpy writes for these shapes parses back to them.
	for _, shape := range [][]int{{}, {0}, {3}, {2, 3}, {4, 1, 5}} {
		h, err := ParseHeader(AppendHeader(nil, "<f4", shape), "")
		if err != nil || len(h.Shape) != len(shape) || h.DataOffset%64 != 0 {
			t.Errorf("%v: %v %+v", shape, err, h)
		}
	}
}

// TestOverlappingMembers: an archive whose directory names one member's bytes twice (the
// overlapping zip bomb's trick, which multiplies the data without growing the file) is
// refused with the byte offset, rather than read once per name.
func TestOverlappingMembers(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"x.npy", "y.npy"} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", []byte{1, 0, 2, 0}))
	}
	zw.Close()
	b := buf.Bytes()
	second := bytes.LastIndex(b, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(b[second+42:], 0) // y.npy's local header: x.npy's
	_, err := NewReader(bytes.NewReader(b), int64(len(b)), &ReaderOptions{FileName: "o.npz"})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "overlap") || !strings.Contains(err.Error(), "o.npz: byte offset") {
		t.Fatalf("got %v, want ErrFormat naming the overlap", err)
	}
}

// TestArrays: the option arrays reads the arrays of an .npz named, in that order, and only
// them: Keras's mnist.npz layout (x_train, y_train, x_test, y_test, of two lengths), which
// mlfeed refused as a whole, reads as a train or a test set, and a member mlfeed cannot hold
// (an object array) no longer stops the archive. Unknown names, and the option on a .npy
// file, are usage errors.
func TestArrays(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	members := []struct{ name, dict string }{
		{"x_train", "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 2), }"},
		{"y_train", "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }"},
		{"x_test", "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }"},
		{"y_test", "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }"},
		{"meta", "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"},
	}
	for i, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name + ".npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		n := map[int]int{0: 12, 1: 3, 2: 8, 3: 2, 4: 8}[i]
		data := make([]byte, n)
		for k := range data {
			data[k] = byte(10*i + k)
		}
		w.Write(npyBytes(m.dict, data))
	}
	zw.Close()
	b := buf.Bytes()
	open := func(arrays ...string) (*Reader, error) {
		return NewReader(bytes.NewReader(b), int64(len(b)), &ReaderOptions{FileName: "mnist.npz", Arrays: arrays})
	}
	if _, err := open(); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "arrays=NAME") || !strings.Contains(err.Error(), "meta.npy") {
		t.Fatalf("every array: %v, want unsupported naming the option", err)
	}
	rd, err := open("y_test", "x_test")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if st := rd.Schema().Streams; len(st) != 2 || st[0].Name != "y_test" || st[1].Name != "x_test" || st[1].Dim != 2 {
		t.Fatalf("streams %+v", st)
	}
	c, err := rd.ReadChunk(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sequences != 2 || !bytes.Equal(c.Streams[0].Values.Bytes, []byte{30, 31}) || !bytes.Equal(c.Streams[1].Values.Bytes, []byte{20, 21, 22, 23, 24, 25, 26, 27}) {
		t.Errorf("chunk %+v", c.Streams)
	}
	if _, err := open("x_train", "nope"); !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), `no array "nope" (its arrays: "x_train", "y_train", "x_test", "y_test", "meta")`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := open("x_train", "x_test"); !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), "differ in their first dimension") || !strings.Contains(err.Error(), "arrays=NAME") {
		t.Errorf("arrays of two lengths: %v, want unsupported naming the option", err)
	}
	if _, err := open("meta"); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("the object array, named: %v, want unsupported", err)
	}
	one := npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", []byte{1, 2, 3})
	if _, err := NewReader(bytes.NewReader(one), int64(len(one)), &ReaderOptions{Arrays: []string{"x"}}); !errors.Is(err, format.ErrUsage) {
		t.Errorf("arrays on a .npy file: %v, want a usage error", err)
	}
}
