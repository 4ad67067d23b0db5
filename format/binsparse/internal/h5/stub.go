//go:build !(cgo && hdf5)

package h5

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

// Available reports whether this build reads and writes HDF5 files.
const Available = false

// errUnavailable is returned by every operation of a build without HDF5.
var errUnavailable = fmt.Errorf("binsparse: built without HDF5 support: install libhdf5-dev and build with -tags hdf5: %w", mlfeed.ErrUnsupported)

// File is an open HDF5 file; this build cannot open any.
type File struct{}

// Open reports that HDF5 support is not compiled in.
func Open(name string) (*File, error) { return nil, errUnavailable }

// Create reports that HDF5 support is not compiled in.
func Create(name string) (*File, error) { return nil, errUnavailable }

// Close does nothing.
func (f *File) Close() error { return nil }

// Attr reports that HDF5 support is not compiled in.
func (f *File) Attr(path, name string) (string, bool, error) { return "", false, errUnavailable }

// SetAttr reports that HDF5 support is not compiled in.
func (f *File) SetAttr(path, name, value string) error { return errUnavailable }

// Groups reports that HDF5 support is not compiled in.
func (f *File) Groups() ([]string, error) { return nil, errUnavailable }

// Dataset reports that HDF5 support is not compiled in.
func (f *File) Dataset(path, name string) (Info, bool, error) { return Info{}, false, errUnavailable }

// Read reports that HDF5 support is not compiled in.
func (f *File) Read(path, name string, t mlfeed.ElemType, off, n, total int64) (mlfeed.Buffer, error) {
	return mlfeed.Buffer{}, errUnavailable
}

// Write reports that HDF5 support is not compiled in.
func (f *File) Write(path, name string, b mlfeed.Buffer, o WriteOptions) error { return errUnavailable }

// ErrCrashed is returned once libhdf5 has crashed on a corrupt file (never, in this build).
var ErrCrashed = fmt.Errorf("%w: libhdf5 crashed reading a corrupt HDF5 file", mlfeed.ErrFormat)

// Appender writes a growable dataset; this build cannot create any.
type Appender struct{}

// Append reports that HDF5 support is not compiled in.
func (f *File) Append(path, name string, t mlfeed.ElemType, o WriteOptions) (*Appender, error) {
	return nil, errUnavailable
}

// Write reports that HDF5 support is not compiled in.
func (a *Appender) Write(b []byte) error { return errUnavailable }

// Len returns 0.
func (a *Appender) Len() int64 { return 0 }

// Close does nothing.
func (a *Appender) Close() error { return nil }
