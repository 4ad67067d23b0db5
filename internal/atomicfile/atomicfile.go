// Package atomicfile writes a file so that it appears complete or not at all: data goes to a
// temporary file in the target's directory, which Commit syncs and renames over the target
// and Abort removes.
package atomicfile

import (
	"os"
	"path/filepath"
)

// File is a temporary file that becomes the target on Commit.
type File struct {
	*os.File
	target string
	done   bool
}

// Create creates a temporary file beside target.
func Create(target string) (*File, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, target: target}, nil
}

// Commit flushes the file to disk, closes it, gives it mode 0644 and renames it to the target.
// After a failed Commit the temporary file is removed.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	err := f.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.target)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Abort closes and removes the temporary file. It does nothing after Commit or Abort, so it
// can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}
