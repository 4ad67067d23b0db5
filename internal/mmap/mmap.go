// Package mmap maps files into memory read-only, so that formats can hand out their bytes
// without copying. On platforms without mmap, Map returns ErrUnsupported and callers fall back
// to reading.
package mmap

import (
	"errors"
	"os"
)

// ErrUnsupported is returned where memory mapping is not available.
var ErrUnsupported = errors.New("mmap: not supported on this platform")

// Region is a read-only mapping of a file.
type Region struct {
	data  []byte
	unmap func([]byte) error
}

// Bytes returns the mapped bytes. They must not be written to, nor used after Close.
func (r *Region) Bytes() []byte { return r.data }

// Close unmaps the region.
func (r *Region) Close() error {
	if r.data == nil {
		return nil
	}
	d := r.data
	r.data = nil
	return r.unmap(d)
}

// OpenFile opens the named file for reading and returns it with its size, the first step of
// every format's Open. On error nothing is left open.
func OpenFile(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}
