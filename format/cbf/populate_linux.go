package cbf

import (
	"os"
	"syscall"
)

// madvPopulateRead is Linux's MADV_POPULATE_READ (5.14): fault the pages of a range in.
const madvPopulateRead = 22

var pageSize = os.Getpagesize()

// canPopulate reports whether populate does anything.
const canPopulate = true

// populate maps in the pages of mem[off:end], a file mapping, before they are read: one
// system call instead of a page fault per page. Kernels without MADV_POPULATE_READ refuse
// it, and the pages fault in as they are read.
func populate(mem []byte, off, end int64) {
	start := off &^ int64(pageSize-1)
	if end > start {
		_ = syscall.Madvise(mem[start:end], madvPopulateRead)
	}
}
