package spill

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/mlfeed/mlfeed/internal/testutil/tmpfs"
)

func TestRead(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	for _, c := range []struct {
		limit  int64
		inFile bool
	}{{20000, false}, {10000, false}, {9999, true}, {0, true}} {
		// One byte a read: the limit is met inside the copy, not at a read's end.
		d, err := Read(iotest.OneByteReader(bytes.NewReader(data)), c.limit, "spill-test-*")
		if err != nil {
			t.Fatal(err)
		}
		if d.Size != int64(len(data)) || (d.File != nil) != c.inFile || (d.Mem != nil) == c.inFile {
			t.Fatalf("limit %d: size %d, in a file %v", c.limit, d.Size, d.File != nil)
		}
		got := make([]byte, d.Size)
		if _, err := d.ReaderAt().ReadAt(got, 0); err != nil || !bytes.Equal(got, data) {
			t.Errorf("limit %d: read back %v", c.limit, err)
		}
		if c.inFile {
			if _, err := os.Stat(d.File.Name()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary file is still in its directory: %v", err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A stream that fails is a *ReadError at the offset it failed at, in memory or in the file.
func TestReadError(t *testing.T) {
	bad := errors.New("corrupt")
	for _, limit := range []int64{1 << 20, 100} {
		r := io.MultiReader(bytes.NewReader(make([]byte, 300)), iotest.ErrReader(bad))
		_, err := Read(r, limit, "spill-test-*")
		var re *ReadError
		if !errors.As(err, &re) || re.Offset != 300 || !errors.Is(err, bad) {
			t.Errorf("limit %d: %v; want a ReadError at 300 wrapping the stream's", limit, err)
		}
	}
	// io.ErrUnexpectedEOF stays itself for callers that tell a stream cut short.
	_, err := Read(iotest.ErrReader(io.ErrUnexpectedEOF), 10, "spill-test-*")
	if re := (*ReadError)(nil); !errors.As(err, &re) || re.Err != io.ErrUnexpectedEOF {
		t.Errorf("cut short: %v", err)
	}
}

// A temporary file that cannot be made is an error of its own, not one of the stream.
func TestReadNoTemp(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	_, err := Read(bytes.NewReader(make([]byte, 100)), 10, "spill-test-*")
	var re *ReadError
	if err == nil || errors.As(err, &re) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "a temporary file holding the decompressed data (over the 10 bytes held in memory)") {
		t.Errorf("no temporary directory: %v; want an error that is no ReadError, about the temporary file", err)
	}
	// A claimed size over the limit goes to the file at once; the message gives the limit.
	_, err = ReadExpecting(bytes.NewReader(make([]byte, 100)), 100, 10, "spill-test-*")
	if err == nil || !strings.Contains(err.Error(), "over the 10 bytes held in memory") {
		t.Errorf("no temporary directory, a size over the limit: %v", err)
	}
}

// A full disk while the data is written to the temporary file is an error of its own, and
// says so (a small tmpfs, where this process may mount one).
func TestReadFullDisk(t *testing.T) {
	dir, err := tmpfs.Mount(t, "64k")
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("TMPDIR", dir)
	_, err = Read(bytes.NewReader(make([]byte, 1<<20)), 10, "spill-test-*")
	var re *ReadError
	if !errors.Is(err, syscall.ENOSPC) || errors.As(err, &re) || !strings.Contains(err.Error(), "temporary file") {
		t.Errorf("a full disk: %v; want ENOSPC about the temporary file, no ReadError", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// ReadExpecting holds a stream of the claimed size in memory when it fits the limit, goes to
// the file from the start when the claim is over it, and reads a stream shorter or longer
// than claimed as it is.
func TestReadExpecting(t *testing.T) {
	data := bytes.Repeat([]byte("mlfeed"), 1000)
	for _, c := range []struct {
		size, limit int64
		inFile      bool
	}{
		{6000, 6000, false},
		{6000, 5999, true},
		{1 << 40, 1 << 20, true}, // a claim far over the limit: to the file at once
		{10, 1 << 20, false},     // a claim short of the stream
		{1 << 24, 1 << 40, false},
	} {
		d, err := ReadExpecting(bytes.NewReader(data), c.size, c.limit, "spill-test-*")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, d.Size)
		d.ReaderAt().ReadAt(got, 0)
		if (d.File != nil) != c.inFile || !bytes.Equal(got, data) {
			t.Errorf("size %d, limit %d: in a file %v, bytes equal %v", c.size, c.limit, d.File != nil, bytes.Equal(got, data))
		}
		d.Close()
	}
}
