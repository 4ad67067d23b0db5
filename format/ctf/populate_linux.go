package ctf

import (
	"os"
	"syscall"
)

// madvPopulateRead is Linux's MADV_POPULATE_READ (5.14): fault the pages of a range in.
const madvPopulateRead = 22

var pageSize = int64(os.Getpagesize())

// populate maps in the pages of data[off:end], a file mapping, before they are read: one system
// call instead of a page fault per page. Older kernels refuse it; the pages then fault in as
// they are read. Data that is not mapped is left alone.
func (r *Reader) populate(off, end int64) {
	if r.region == nil || end <= off {
		return
	}
	start := off &^ (pageSize - 1)
	_ = syscall.Madvise(r.data[start:end], madvPopulateRead)
}
