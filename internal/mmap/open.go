package mmap

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// File is a file open for reading, with its size and, where it is mapped, its mapping: what a
// format's Open hands the reader it builds.
type File struct {
	*os.File
	Size int64
	// Region is the file's mapping, or nil where it is not mapped: read the file with ReadAt.
	Region *Region
}

// Bytes returns the mapped bytes, or nil when the file is not mapped.
func (f *File) Bytes() []byte {
	if f.Region == nil {
		return nil
	}
	return f.Region.Bytes()
}

// ReaderAt returns the mapped bytes as an io.ReaderAt, or the file when it is not mapped.
func (f *File) ReaderAt() io.ReaderAt {
	if f.Region == nil {
		return f.File
	}
	return bytes.NewReader(f.Region.Bytes())
}

// Close unmaps the file, then closes it.
func (f *File) Close() error {
	var err error
	if f.Region != nil {
		err = f.Region.Close()
	}
	return errors.Join(err, f.File.Close())
}

// Open opens the named file for a reader and returns what build makes of it, with the file.
// The file is mapped when mapIt, given the open file and its size, says so (nil: always);
// where mapping fails (ErrUnsupported, a file larger than the address space) Region is nil and
// build reads the file with ReadAt. build runs under Guard when the file is mapped, so that a
// file that shrinks meanwhile is an error naming it rather than a crash. When build fails, the
// file is closed and the error returned as is; otherwise the caller owns the file and closes
// it (File.Close) with the reader, or at once if the reader keeps none of it.
func Open[T any](name string, mapIt func(f *os.File, size int64) bool, build func(*File) (T, error)) (T, *File, error) {
	var zero T
	f, size, err := OpenFile(name)
	if err != nil {
		return zero, nil, err
	}
	mf := &File{File: f, Size: size}
	if mapIt == nil || mapIt(f, size) {
		if reg, err := Map(f, size); err == nil {
			mf.Region = reg
		}
	}
	var v T
	if mf.Region != nil {
		err = Guard(func() (err error) {
			v, err = build(mf)
			return err
		})
	} else {
		v, err = build(mf)
	}
	if err != nil {
		mf.Close()
		return zero, nil, err
	}
	return v, mf, nil
}

// Unless returns the mapIt of Open that maps every file unless noMmap (an option such as a
// reader's NoMmap) is set.
func Unless(noMmap bool) func(*os.File, int64) bool {
	return func(*os.File, int64) bool { return !noMmap }
}
