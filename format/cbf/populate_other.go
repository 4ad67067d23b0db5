//go:build !linux

package cbf

// populate does nothing where MADV_POPULATE_READ does not exist.
func populate(mem []byte, off, end int64) {}
