//go:build !linux

package ctf

// populate does nothing where MADV_POPULATE_READ does not exist.
func (r *Reader) populate(off, end int64) {}
