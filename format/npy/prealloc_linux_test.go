package npy

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A writer that knows the record count reserves the data's blocks in its file before any data
// arrives (as numpy.save does), without changing the file's size; the file is then the same.
func TestPreallocate(t *testing.T) {
	sc, c := benchChunk(1000)
	name := filepath.Join(t.TempDir(), "x.npy")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 1); err != nil {
		t.Skipf("the file system does not preallocate: %v", err)
	}
	w, err := NewWriter(f, sc, &WriterOptions{Records: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	data := int64(1000 * 784 * 4)
	if st.Blocks*512 < data || st.Size != 128 {
		t.Fatalf("after the header: %d bytes, %d allocated; want 128 bytes and at least %d allocated", st.Size, st.Blocks*512, data)
	}
	if err := w.WriteChunk(c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != 128+data {
		t.Fatalf("file of %d bytes, want %d", fi.Size(), 128+data)
	}
}
