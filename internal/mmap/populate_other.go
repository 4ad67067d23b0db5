//go:build !linux

package mmap

// CanPopulate reports whether Populate does anything on this platform.
const CanPopulate = false

// Populate does nothing where MADV_POPULATE_READ does not exist: pages fault in as they are
// read.
func (r *Region) Populate(off, end int64) {}

// Unmap does nothing here: the mappings go when the region is closed.
func (r *Region) Unmap(off, end int64) {}

// adviseHuge does nothing: huge pages for file mappings are Linux's.
func adviseHuge(b []byte) {}
