package ctf

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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

// prefaultLead bounds how far ahead of the indexer prefault maps pages in, so that a file
// larger than memory is not read twice.
const prefaultLead = 64 << 20

// prefault maps in the pages of the file on another core while the indexer, which reports how
// far it got in done, reads them: the page faults then cost the indexer nothing. It returns a
// function that stops it and waits for it. With one core, or data that is not mapped, it does
// nothing.
func (r *Reader) prefault(done *atomic.Int64) (stop func()) {
	if r.region == nil || runtime.GOMAXPROCS(0) < 2 {
		return func() {}
	}
	var quit atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		size := int64(len(r.data))
		for off := int64(0); off < size && !quit.Load(); off += progressStep {
			for off > done.Load()+prefaultLead && !quit.Load() {
				time.Sleep(100 * time.Microsecond)
			}
			r.populate(off, min(off+progressStep, size))
		}
	}()
	return func() {
		quit.Store(true)
		wg.Wait()
	}
}
