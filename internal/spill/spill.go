// Package spill holds a stream of unknown length for random access: in memory up to a limit,
// in an unlinked temporary file beyond it. Readers of compressed data (a gzipped tar, a
// compressed TFRecord file) decompress into it once and read their records from it. Writers
// that hold data in a temporary file until its size is known describe that file's failures
// with TempError and TempWriter.
package spill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Data is a stream Read has taken in: Mem when it fitted in memory, else File.
type Data struct {
	// Mem is the stream's bytes when they fitted in the limit, else nil.
	Mem []byte
	// File holds the stream's bytes when they did not: a temporary file already removed
	// from its directory, gone once closed (Close). Nil when Mem holds them.
	File *os.File
	// Size is the stream's length.
	Size int64
}

// ReaderAt returns the stream's bytes as an io.ReaderAt: Mem's, or File.
func (d *Data) ReaderAt() io.ReaderAt {
	if d.File != nil {
		return d.File
	}
	return bytes.NewReader(d.Mem)
}

// Close closes File, if any, which removes it.
func (d *Data) Close() error {
	if d.File == nil {
		return nil
	}
	return d.File.Close()
}

// ReadError is Read's error for a failure of the stream itself (corrupt or cut-short
// compressed data), after Offset bytes of it: the caller names the file and the offset.
// Other errors (the temporary file cannot be made or written: a full disk) say that it was
// the temporary file, and the caller names the file it was reading.
type ReadError struct {
	Offset int64
	Err    error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("after %d bytes of the stream: %v", e.Offset, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// Read reads r to its end: into memory while it holds at most limit bytes (memory grows
// with the bytes read, never ahead of them), else into a temporary file named from pattern
// (as os.CreateTemp names it) in the default temporary directory, removed from the directory
// at once so that nothing is left behind whatever happens. On an error nothing is left open.
func Read(r io.Reader, limit int64, pattern string) (*Data, error) {
	return ReadExpecting(r, 0, limit, pattern)
}

// ReadExpecting is Read for a stream whose length a header claims: memory for up to 64 MiB
// of size (and no more than limit) is taken at once, so that a stream as long as claimed is
// read without the copies of a growing buffer, while a claim the stream does not bear out
// costs no more than that. A size over limit goes to the temporary file from the first byte.
func ReadExpecting(r io.Reader, size, limit int64, pattern string) (*Data, error) {
	inMemory := limit // for the message of a temporary file that fails
	if size > limit {
		limit = 0
	}
	cr := &counter{r: r}
	var mem bytes.Buffer
	if size > 0 && limit > 0 {
		// The claimed bytes, the byte past them that ends a limited reader, and the room
		// bytes.Buffer.ReadFrom wants before each read: a stream as long as claimed then ends
		// without growing the buffer once more (a copy of all of it).
		mem.Grow(int(min(size, limit, 64<<20)) + 1 + bytes.MinRead)
	}
	if _, err := io.Copy(&mem, io.LimitReader(cr, limit+1)); err != nil {
		return nil, cr.fail(err)
	}
	if cr.n <= limit {
		return &Data{Mem: mem.Bytes(), Size: cr.n}, nil
	}
	tmp, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, tempError(inMemory, err)
	}
	os.Remove(tmp.Name()) // gone when closed
	if _, err := tmp.Write(mem.Bytes()); err != nil {
		tmp.Close()
		return nil, tempError(inMemory, err)
	}
	if _, err := io.Copy(tmp, cr); err != nil {
		tmp.Close()
		if err = cr.fail(err); !errors.As(err, new(*ReadError)) {
			err = tempError(inMemory, err)
		}
		return nil, err
	}
	return &Data{File: tmp, Size: cr.n}, nil
}

// tempError describes a failure of the temporary file as one of holding the decompressed
// data, which was over limit bytes.
func tempError(limit int64, err error) error {
	return TempError(fmt.Sprintf("the decompressed data (over the %d bytes held in memory)", limit), err)
}

// TempError describes err, a failure of a temporary file (its directory is missing, the disk
// is full), as one of the temporary file holding what, so that a message says which file
// failed and why there was one.
func TempError(what string, err error) error {
	return fmt.Errorf("a temporary file holding %s: %w", what, err)
}

// TempWriter writes to File, a temporary file holding What, its errors described by
// TempError: the writers that hold data until its size is known write through it.
type TempWriter struct {
	File *os.File
	What string
}

// Write writes p to File; its error is described by TempError.
func (w TempWriter) Write(p []byte) (int, error) {
	n, err := w.File.Write(p)
	if err != nil {
		err = TempError(w.What, err)
	}
	return n, err
}

// counter counts the bytes read from r and keeps the error r returned, to tell it from the
// writer's in io.Copy.
type counter struct {
	r   io.Reader
	n   int64
	err error
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// fail returns err, io.Copy's, as a *ReadError when the stream gave it, else as it is.
func (c *counter) fail(err error) error {
	if c.err != nil && err == c.err {
		return &ReadError{Offset: c.n, Err: err}
	}
	return err
}
