// Package hdf5 reads and writes plain HDF5 files of N-dimensional datasets that share their
// first dimension, the layout of h5py/Keras data (X, y) and MATLAB v7.3 .mat files, as mlfeed
// data sets: each dataset is a dense stream whose samples are its rows (one index of the first
// dimension), the rest of its shape being the sample's shape. Reading and writing are pure Go
// (package internal/hdf5); see docs/hdf5.md.
//
// Files that hold Binsparse matrices belong to package binsparse; HDF5 files with no Binsparse
// descriptor are handed to this package by binsparse's registered Open, and writing a ".h5"
// or ".hdf5" file writes a plain HDF5 file.
package hdf5

import (
	"bytes"
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Errors, wrapping mlfeed's sentinels.
var (
	// ErrFormat means the file is not a data set of datasets sharing a first dimension.
	ErrFormat = fmt.Errorf("hdf5: %w", mlfeed.ErrFormat)
	// ErrUnsupported means a dataset or stream cannot be represented.
	ErrUnsupported = fmt.Errorf("hdf5: %w", mlfeed.ErrUnsupported)
)

// Match reports whether head starts with the HDF5 signature (at byte 0, or at 512 after a
// MATLAB v7.3 user block).
func Match(head []byte) bool {
	sig := []byte("\x89HDF\r\n\x1a\n")
	return bytes.HasPrefix(head, sig) || len(head) >= 520 && bytes.Equal(head[512:520], sig)
}
