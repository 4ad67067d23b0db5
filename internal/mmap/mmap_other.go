//go:build !unix

package mmap

import "os"

// Map returns ErrUnsupported: this platform has no mmap support in mlfeed.
func Map(f *os.File, size int64) (*Region, error) { return nil, ErrUnsupported }
