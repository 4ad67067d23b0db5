package mmap

import (
	"os"
	"syscall"
)

// madvPopulateRead is Linux's MADV_POPULATE_READ (5.14): fault the pages of a range in.
const madvPopulateRead = 22

// CanPopulate reports whether Populate does anything on this platform.
const CanPopulate = true

var pageSize = int64(os.Getpagesize())

// Populate maps in the pages of r's bytes [off, end) before they are read: one system call
// instead of a page fault per page. Kernels without MADV_POPULATE_READ refuse it, and the
// pages then fault in as they are read. A nil region, or an empty or out-of-range span, is
// left alone. It runs on the caller's goroutine and returns when the pages are in.
func (r *Region) Populate(off, end int64) {
	if r == nil || off < 0 || end > int64(len(r.data)) || end <= off {
		return
	}
	start := off &^ (pageSize - 1)
	_ = syscall.Madvise(r.data[start:end], madvPopulateRead)
}

// unmapBlock is the unit Unmap drops mappings in: a huge page, so that a mapping in 2 MiB
// pages (adviseHuge) is dropped a whole page at a time rather than split.
const unmapBlock = 2 << 20

// Unmap drops the mappings of r's bytes from the unmapBlock holding off to the one holding
// end, or to the end of r when end is r's end (MADV_DONTNEED): the pages stay in the page
// cache, and a later read maps them in again. A reader going front to back calls it for each
// span it is done with, which drops every block once, whole, so that closing the region,
// with no other work beside it, has little left to unmap. A nil region, or an empty or
// out-of-range span, is left alone.
func (r *Region) Unmap(off, end int64) {
	if r == nil || off < 0 || end > int64(len(r.data)) || end <= off {
		return
	}
	start := off &^ (unmapBlock - 1)
	if end < int64(len(r.data)) {
		end &^= unmapBlock - 1
	}
	if end > start {
		_ = syscall.Madvise(r.data[start:end], syscall.MADV_DONTNEED)
	}
}

// adviseHuge asks for b, a file's mapping, in huge pages (MADV_HUGEPAGE): pages read in from
// disk through it then come into the page cache in 2 MiB folios where the kernel and file
// system can, which the mapping maps with one TLB entry each (a shuffled gather misses the
// TLB far less). Pages already cached in small folios stay as they are. Kernels without
// transparent huge pages refuse it, which changes nothing.
func adviseHuge(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
