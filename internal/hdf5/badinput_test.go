package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
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

// TestSharedSymbolNodes forges an old-style group whose B-tree leaf lists one symbol table
// node of many entries over and over: each node may be read once, so the links stay within
// what the file holds (before, the links multiplied: entries × listings).
func TestSharedSymbolNodes(t *testing.T) {
	const listings, entries = 400, 300
	le := binary.LittleEndian
	b := make([]byte, 0, 64<<10)
	// local heap: header at 0, data (one name) at 64
	b = append(b, "HEAP\x00\x00\x00\x00"...)
	b = le.AppendUint64(b, 8)  // data size
	b = le.AppendUint64(b, 0)  // free list
	b = le.AppendUint64(b, 64) // data address
	b = append(b, make([]byte, 64-len(b))...)
	b = append(b, "\x00name\x00\x00\x00"...)
	// symbol table node at 128: entries all naming "name" and object 0
	b = append(b, make([]byte, 128-len(b))...)
	b = append(b, "SNOD\x01\x00"...)
	b = le.AppendUint16(b, entries)
	for i := 0; i < entries; i++ {
		b = le.AppendUint64(b, 1) // name offset
		b = le.AppendUint64(b, 0) // object header
		b = append(b, make([]byte, 24)...)
	}
	// B-tree leaf listing the symbol table node again and again
	tree := uint64(len(b))
	b = append(b, "TREE\x00\x00"...)
	b = le.AppendUint16(b, listings)
	b = le.AppendUint64(b, undef)
	b = le.AppendUint64(b, undef)
	for i := 0; i < listings; i++ {
		b = le.AppendUint64(b, 0)
		b = le.AppendUint64(b, 128)
	}
	b = le.AppendUint64(b, 0)
	f := &File{r: bytes.NewReader(b), size: int64(len(b)), name: "forged", offSize: 8, lenSize: 8, headers: map[uint64]*object{}}
	links, err := f.symbolTable(tree, 0)
	if err == nil || !errors.Is(err, mlfeed.ErrFormat) {
		t.Errorf("%d links, error %v; want a format error", len(links), err)
	}
	if w := f.work.Load(); w > uint64(len(b)) {
		t.Errorf("work %d for a %d-byte file", w, len(b))
	}
}

// TestSparseChunkGrid forges a chunked dataset of one-element chunks whose dimension claims
// a thousand times the file's size in rows, nearly all chunks never written: reading it fills
// them with work that follows the chunks stored, not the chunks claimed.
func TestSparseChunkGrid(t *testing.T) {
	const rows = 77
	p := t.TempDir() + "/sparse.h5"
	w, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	data := testData(mlfeed.Uint8, rows)
	if err := w.WriteDataset("/", "x", mlfeed.Uint8, []uint64{rows}, data, DatasetOptions{ChunkRows: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// the dataspace message (version 2, rank 1; maximum dimensions or not) holds the rows
	forged := uint64(1000 * len(b))
	patched := 0
	for _, flags := range []byte{0, 1} {
		at := bytes.Index(b, binary.LittleEndian.AppendUint64([]byte{2, 1, flags, 1}, rows))
		if at >= 0 {
			binary.LittleEndian.PutUint64(b[at+4:], forged)
			if flags == 1 && binary.LittleEndian.Uint64(b[at+12:]) == rows {
				binary.LittleEndian.PutUint64(b[at+12:], forged)
			}
			patched++
		}
	}
	if patched != 1 {
		t.Fatalf("found %d dataspace messages", patched)
	}
	verifyChecksums = false
	defer func() { verifyChecksums = true }()
	f, err := NewFile(bytes.NewReader(b), int64(len(b)), "forged")
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Get("/x")
	if err != nil {
		t.Fatal(err)
	}
	d, err := o.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows() != forged {
		t.Fatalf("the forged dimension did not take: %v", d.Dims)
	}
	got := make([]byte, forged)
	if err := d.ReadRows(got, 0, forged); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:rows], data) || bytes.Count(got[rows:], []byte{0}) != len(got)-rows {
		t.Error("stored chunks or fill wrong")
	}
	if w := f.work.Load(); w > 4*rows+64 {
		t.Errorf("work %d for %d stored chunks (%d claimed)", w, rows, forged)
	}
}

// TestUndefinedAddress writes the undefined address (eight 0xff bytes) over every 8 bytes of
// files of both formats (checksums ignored, so that the forged addresses are used): an error
// about an undefined address must give the byte offset where it was stored (issue 28: it gave
// none).
func TestUndefinedAddress(t *testing.T) {
	defer func(v bool) { verifyChecksums = v }(verifyChecksums)
	verifyChecksums = false
	for _, name := range []string{"testdata/types_earliest.h5", "testdata/types_latest.h5", "testdata/graph_earliest.h5", "testdata/graph_latest.h5"} {
		orig, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for at := 0; at+8 <= len(orig); at++ {
			b := bytes.Clone(orig)
			copy(b[at:], bytes.Repeat([]byte{0xff}, 8))
			f, err := NewFile(bytes.NewReader(b), int64(len(b)), name)
			if err == nil {
				err = walkAll(f)
			}
			if err == nil || !strings.Contains(err.Error(), "undefined address") {
				continue
			}
			seen++
			var pe *mlfeed.PosError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(len(b)) {
				t.Errorf("%s: 0xff at %d: %v: no byte offset", name, at, err)
			}
		}
		if seen == 0 {
			t.Errorf("%s: no forged address was reported as undefined", name)
		}
	}
}
