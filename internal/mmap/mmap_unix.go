//go:build unix

package mmap

import (
	"os"
	"syscall"
)

// Map maps size bytes of f read-only. A size of 0 gives an empty region.
func Map(f *os.File, size int64) (*Region, error) {
	if size == 0 {
		return &Region{data: []byte{}, unmap: func([]byte) error { return nil }}, nil
	}
	if int64(int(size)) != size {
		return nil, ErrUnsupported
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	adviseHuge(b)
	r := &Region{data: b, unmap: syscall.Munmap, name: f.Name()}
	track(r)
	return r, nil
}
