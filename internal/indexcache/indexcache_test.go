package indexcache

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

type testDesc struct {
	Mode  string `json:"mode"`
	Count int    `json:"count"`
}

const testMagic = "MLFTEST1"

// write makes a data file of size bytes and its cache with counts {3, 7}, the description
// {raw 5} and a payload of 16 bytes; it returns the data file's name.
func write(t *testing.T, size int64) string {
	t.Helper()
	input := filepath.Join(t.TempDir(), "data.bin")
	if err := os.WriteFile(input, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := Write(Name(input), testMagic, size, []uint64{3, 7}, testDesc{"raw", 5}, func(w *bufio.Writer) {
		w.Write(binary.LittleEndian.AppendUint64(nil, 11))
		w.Write(binary.LittleEndian.AppendUint64(nil, 12))
	})
	if !ok {
		t.Fatal("Write failed")
	}
	return input
}

func TestRoundTrip(t *testing.T) {
	input := write(t, 1000)
	if filepath.Base(Name(input)) != "data.bin.mlfeed-index" {
		t.Errorf("Name = %s", Name(input))
	}
	b, err := os.ReadFile(Name(input))
	if err != nil {
		t.Fatal(err)
	}
	// The layout TFRecord's and WebDataset's caches have had since before this package.
	le := binary.LittleEndian
	want := append([]byte(testMagic), le.AppendUint64(nil, 1000)...)
	want = le.AppendUint64(le.AppendUint64(want, 3), 7)
	js := `{"mode":"raw","count":5}`
	want = append(le.AppendUint64(want, uint64(len(js))), js...)
	want = le.AppendUint64(le.AppendUint64(want, 11), 12)
	if !bytes.Equal(b, want) {
		t.Fatalf("cache bytes\n%q\nwant\n%q", b, want)
	}
	var d testDesc
	counts, payload, ok := Load(Name(input), input, testMagic, 1000, 2, &d)
	if !ok || !reflect.DeepEqual(counts, []uint64{3, 7}) || d != (testDesc{"raw", 5}) || !bytes.Equal(payload, want[len(want)-16:]) {
		t.Fatalf("Load = %v, %q, %v, desc %+v", counts, payload, ok, d)
	}
}

// Every way a cache can be stale or broken makes Load decline it, never fail or panic.
func TestLoadDeclines(t *testing.T) {
	input := write(t, 1000)
	name := Name(input)
	good, _ := os.ReadFile(name)
	load := func(size int64, n int) bool {
		var d testDesc
		_, _, ok := Load(name, input, testMagic, size, n, &d)
		return ok
	}
	if !load(1000, 2) {
		t.Fatal("the good cache was declined")
	}
	if load(999, 2) {
		t.Error("accepted for data of another size")
	}
	if load(1000, 3) {
		t.Error("accepted with a count more than written")
	}
	if _, _, ok := Load(name, input, "MLFTEST2", 1000, 2, &testDesc{}); ok {
		t.Error("accepted under another magic")
	}
	if _, _, ok := Load(name, filepath.Join(t.TempDir(), "gone"), testMagic, 1000, 2, &testDesc{}); ok {
		t.Error("accepted for a data file that does not exist")
	}
	// Older than the data: stale.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(name, old, old)
	if load(1000, 2) {
		t.Error("accepted a cache older than its data")
	}
	os.Chtimes(name, time.Now(), time.Now().Add(time.Hour))
	if !load(1000, 2) {
		t.Error("declined a cache newer than its data")
	}
	set := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(name, time.Now(), time.Now().Add(time.Hour))
	}
	for cut := range len(good) - 16 { // cut anywhere before the payload
		set(good[:cut])
		if load(1000, 2) {
			t.Errorf("accepted the cache cut to %d bytes", cut)
		}
	}
	// A JSON length past the end, or one that splits the JSON.
	for _, jl := range []uint64{1 << 62, uint64(len(good)), 3} {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint64(b[32:], jl)
		set(b)
		if load(1000, 2) {
			t.Errorf("accepted a JSON length of %d", jl)
		}
	}
	// Larger than a cache of this data can be.
	set(append(bytes.Clone(good), make([]byte, MaxSize(1000))...))
	if load(1000, 2) {
		t.Error("accepted a cache over MaxSize")
	}
}

// A cache that cannot be written leaves nothing, and a link in its place is replaced, not
// written through.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if Write(filepath.Join(dir, "missing", "x.mlfeed-index"), testMagic, 0, nil, testDesc{}, func(*bufio.Writer) {}) {
		t.Error("wrote into a directory that does not exist")
	}
	if Write(filepath.Join(dir, "y.mlfeed-index"), testMagic, 0, nil, func() {}, func(*bufio.Writer) {}) {
		t.Error("wrote a description JSON cannot hold")
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "z.mlfeed-index")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if !Write(link, testMagic, 0, nil, testDesc{}, func(*bufio.Writer) {}) {
		t.Fatal("Write failed")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("wrote through a link: target holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v, %v", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left %d entries, want the target and the cache", len(ents))
	}
}
