package mmap

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	page := os.Getpagesize()
	name := filepath.Join(t.TempDir(), "f")
	want := make([]byte, 2*page)
	for i := range want {
		want[i] = byte(i * 7)
	}
	os.WriteFile(name, want, 0o644)
	read := func(mf *File) ([]byte, error) {
		b := make([]byte, mf.Size)
		_, err := mf.ReaderAt().ReadAt(b, 0)
		return b, err
	}
	for _, noMmap := range []bool{false, true} {
		got, mf, err := Open(name, Unless(noMmap), read)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || mf.Size != int64(len(want)) {
			t.Errorf("noMmap %v: read %d bytes, not the file's %d", noMmap, len(got), len(want))
		}
		if noMmap && (mf.Region != nil || mf.Bytes() != nil || mf.ReaderAt() != io.ReaderAt(mf.File)) {
			t.Errorf("mapped with noMmap")
		}
		if !noMmap && mf.Region == nil && !errors.Is(func() error { _, err := Map(mf.File, mf.Size); return err }(), ErrUnsupported) {
			t.Errorf("not mapped, on a platform that maps")
		}
		if err := mf.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := mf.File.Stat(); err == nil {
			t.Error("Close left the file open")
		}
	}
	// A failed build closes the file and returns its error as is.
	bad := errors.New("bad header")
	var kept *File
	if _, mf, err := Open(name, nil, func(mf *File) (int, error) { kept = mf; return 0, bad }); err != bad || mf != nil {
		t.Fatalf("failed build: %v, %v", mf, err)
	}
	if _, err := kept.File.Stat(); err == nil {
		t.Error("a failed build left the file open")
	}
	if _, _, err := Open(filepath.Join(t.TempDir(), "none"), nil, read); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A mapped file that shrinks while build reads it is an error naming it, not a crash.
	_, _, err := Open(name, nil, func(mf *File) (byte, error) {
		if mf.Region == nil {
			t.Skip("no mmap on this platform")
		}
		if err := os.Truncate(name, int64(page)); err != nil {
			t.Fatal(err)
		}
		return mf.Bytes()[page+1], nil
	})
	if !errors.Is(err, ErrChanged) {
		t.Errorf("shrunk during build: %v", err)
	}
}
