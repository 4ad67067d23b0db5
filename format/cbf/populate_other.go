//go:build !linux

package cbf

// canPopulate reports whether populate does anything.
const canPopulate = false

// populate does nothing where MADV_POPULATE_READ does not exist.
func populate(mem []byte, off, end int64) {}
