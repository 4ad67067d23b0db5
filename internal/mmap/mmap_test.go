package mmap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
)

func TestMap(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	os.WriteFile(name, []byte("hello, mapped world"), 0o644)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Map(f, 19)
	if err == ErrUnsupported {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Bytes()) != "hello, mapped world" {
		t.Fatalf("%q", r.Bytes())
	}
	if err := r.Close(); err != nil || r.Close() != nil {
		t.Fatal("Close twice")
	}
	empty, err := Map(f, 0)
	if err != nil || len(empty.Bytes()) != 0 {
		t.Fatal("empty map")
	}
}

func TestGuardTruncated(t *testing.T) {
	name := filepath.Join(t.TempDir(), "shrinks")
	page := os.Getpagesize()
	os.WriteFile(name, make([]byte, 4*page), 0o644)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Map(f, int64(4*page))
	if err == ErrUnsupported {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(name, int64(page)); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = Guard(func() error {
		for _, b := range r.Bytes() {
			sum += b
		}
		return nil
	})
	var pe *mlfeed.PosError
	if !errors.Is(err, ErrChanged) || !errors.Is(err, mlfeed.ErrTruncated) || !errors.As(err, &pe) || pe.File != name || pe.Offset != int64(page) {
		t.Fatalf("Guard: %v", err)
	}
	// A region closed by a deferred Close while the fault unwinds still names the file.
	os.WriteFile(name, make([]byte, 4*page), 0o644)
	r2, err := Map(f, int64(4*page))
	if err != nil {
		t.Fatal(err)
	}
	os.Truncate(name, int64(2*page))
	err = Guard(func() error {
		defer r2.Close()
		sum += r2.Bytes()[3*page]
		return nil
	})
	if !errors.As(err, &pe) || pe.File != name || pe.Offset != int64(3*page) {
		t.Fatalf("Guard with Close deferred: %v", err)
	}
	// Other panics are not swallowed.
	defer func() {
		if recover() == nil {
			t.Fatal("a nil dereference was swallowed")
		}
	}()
	Guard(func() error {
		var p *int
		return errors.New(fmt.Sprint(*p))
	})
}

// TestPopulateUnmap: the bytes read the same after their pages are mapped in, unmapped (whole
// pages only, the file's last partial page included) and mapped in again; spans out of range
// are left alone.
func TestPopulateUnmap(t *testing.T) {
	data := make([]byte, 3*os.Getpagesize()+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Map(f, int64(len(data)))
	if err == ErrUnsupported {
		t.Skip("no mmap on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := int64(len(data))
	for _, s := range [][2]int64{{0, n}, {1, n - 1}, {100, 5000}, {n - 10, n}, {-1, 5}, {0, n + 1}, {7, 7}} {
		r.Populate(s[0], s[1])
		r.Unmap(s[0], s[1])
		if string(r.Bytes()) != string(data) {
			t.Fatalf("span %v: the bytes changed", s)
		}
	}
	var nilRegion *Region
	nilRegion.Unmap(0, 1)
}
