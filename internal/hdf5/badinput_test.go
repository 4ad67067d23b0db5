package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func TestBrokenFiles(t *testing.T) {
	for _, name := range []string{"broken_truncated.bsp.h5", "broken_bitflips.bsp.h5"} {
		p := testutil.Testdata(t, "binsparse", "layouts", name)
		_, err := goDump(p)
		if err == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		var pe *mlfeed.PosError
		if !errors.As(err, &pe) || !(errors.Is(err, mlfeed.ErrFormat) || errors.Is(err, mlfeed.ErrTruncated)) {
			t.Errorf("%s: %v: not a positional format error", name, err)
		}
	}
}

// TestForgedDimension patches every 8-byte 3000 (the arrays' length) to 2^50: the reader must
// refuse the dimension, not allocate for it.
func TestForgedDimension(t *testing.T) {
	for _, name := range []string{"contiguous.bsp.h5", "chunked_gzip.bsp.h5"} {
		b, err := os.ReadFile(testutil.Testdata(t, "binsparse", "layouts", name))
		if err != nil {
			t.Fatal(err)
		}
		var old, new [8]byte
		binary.LittleEndian.PutUint64(old[:], 3000)
		binary.LittleEndian.PutUint64(new[:], 1<<50)
		b = bytes.ReplaceAll(b, old[:], new[:])
		f, err := NewFile(bytes.NewReader(b), int64(len(b)), name)
		if err != nil {
			t.Fatal(err)
		}
		o, err := f.Get("values")
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.Dataset()
		if !errors.Is(err, mlfeed.ErrTooLarge) && !errors.Is(err, mlfeed.ErrFormat) {
			t.Errorf("%s: forged dimension gave %v", name, err)
		}
	}
}

func TestNotHDF5(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("hello"), make([]byte, 2000)} {
		if _, err := NewFile(bytes.NewReader(data), int64(len(data)), "x"); !errors.Is(err, mlfeed.ErrFormat) {
			t.Errorf("%q: %v", data[:min(len(data), 8)], err)
		}
	}
}

func TestUnsupported(t *testing.T) {
	// a superblock of an unknown version
	b, err := os.ReadFile("testdata/types_latest.h5")
	if err != nil {
		t.Fatal(err)
	}
	b[8] = 9
	if _, err := NewFile(bytes.NewReader(b), int64(len(b)), "x"); !errors.Is(err, mlfeed.ErrUnsupported) {
		t.Errorf("superblock 9: %v", err)
	}
}

func TestChecksums(t *testing.T) {
	// any flipped byte in the metadata of a latest-format file is caught (or is harmless):
	// the file never reads back different values silently.
	b, err := os.ReadFile("testdata/types_latest.h5")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := NewFile(bytes.NewReader(b), int64(len(b)), "x")
	want, err := dumpBytes(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 97 {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		f, err := NewFile(bytes.NewReader(c), int64(len(c)), "x")
		if err != nil {
			continue
		}
		got, err := dumpBytes(f)
		if err != nil {
			continue
		}
		for k, v := range got {
			if w, ok := want[k]; ok && !bytes.Equal(w, v) && !isDataByte(f, i) {
				t.Errorf("byte %d flipped: %s reads differently with no error", i, k)
			}
		}
	}
}

// isDataByte reports whether file offset i lies in raw (unchecksummed) dataset storage.
func isDataByte(f *File, i int) bool {
	root, _ := f.Root()
	kids, _ := root.Children()
	for _, k := range kids {
		o, err := root.Child(k)
		if err != nil || !o.IsDataset() {
			continue
		}
		d, err := o.Dataset()
		if err != nil {
			continue
		}
		if d.layout == layoutContiguous && uint64(i) >= d.addr && uint64(i) < d.addr+d.size {
			return true
		}
		if d.layout == layoutCompact {
			return true // compact data sits in a checksummed header; flips there are caught
		}
	}
	return false
}

func dumpBytes(f *File) (map[string][]byte, error) {
	out := map[string][]byte{}
	root, err := f.Root()
	if err != nil {
		return nil, err
	}
	kids, err := root.Children()
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		o, err := root.Child(k)
		if err != nil {
			return nil, err
		}
		d, err := o.Dataset()
		if err != nil {
			return nil, err
		}
		buf := make([]byte, d.Len()*uint64(d.Type.Size))
		if err := d.ReadRows(buf, 0, d.Rows()); err != nil {
			return nil, err
		}
		out[k] = buf
	}
	return out, nil
}
