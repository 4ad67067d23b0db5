//go:build !linux

package npy

import "io"

// preallocate does nothing where fallocate does not exist: the file grows as data arrives.
func preallocate(w io.Writer, size int64) {}
