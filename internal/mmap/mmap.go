// Package mmap maps files into memory read-only, so that formats can hand out their bytes
// without copying. On platforms without mmap, Map returns ErrUnsupported and callers fall back
// to reading.
//
// A mapped file that another process truncates while it is mapped makes reads of the lost
// pages fault (SIGBUS), which kills a Go program with "unexpected fault address". Guard and
// Catch turn such a fault on the goroutine that runs them into an error naming the file.
package mmap

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/mlfeed/mlfeed"
)

// ErrUnsupported is returned where memory mapping is not available.
var ErrUnsupported = errors.New("mmap: not supported on this platform")

// ErrChanged is wrapped by the error Guard and Catch return for a fault on mapped memory.
var ErrChanged = fmt.Errorf("%w: the file shrank while it was read (changed by another program?)", mlfeed.ErrTruncated)

// Region is a read-only mapping of a file.
type Region struct {
	data  []byte
	unmap func([]byte) error
	name  string
}

// live holds the regions mapped now, to name the file a fault address lies in, and the spans
// of the last regions closed: a fault unwinds the stack, running deferred Close calls, before
// Recover sees it.
var live struct {
	sync.Mutex
	m      map[*Region]struct{}
	closed [64]span
	next   int
}

// span is where a region was mapped.
type span struct {
	start, end uintptr
	name       string
}

func (r *Region) span() (start, end uintptr) {
	if len(r.data) == 0 {
		return 0, 0
	}
	start = uintptr(unsafe.Pointer(unsafe.SliceData(r.data)))
	return start, start + uintptr(len(r.data))
}

func track(r *Region) {
	live.Lock()
	if live.m == nil {
		live.m = map[*Region]struct{}{}
	}
	live.m[r] = struct{}{}
	live.Unlock()
}

// faultError returns the error for a recovered panic value that is a fault on a live region,
// or nil.
func faultError(v any) error {
	f, ok := v.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	addr := f.Addr()
	live.Lock()
	defer live.Unlock()
	for r := range live.m {
		if start, end := r.span(); start <= addr && addr < end {
			return &mlfeed.PosError{File: r.name, Offset: int64(addr - start), Err: ErrChanged}
		}
	}
	for k := range len(live.closed) {
		// The most recently closed first: an address range may have been mapped again.
		sp := live.closed[(live.next-1-k+2*len(live.closed))%len(live.closed)]
		if sp.start <= addr && addr < sp.end {
			// Closed since: a fault there is the file's only if it did shrink, else a
			// read after Close, a bug that must not pass for bad input.
			off := int64(addr - sp.start)
			if st, err := os.Stat(sp.name); err == nil && st.Size() <= off {
				return &mlfeed.PosError{File: sp.name, Offset: off, Err: ErrChanged}
			}
			return nil
		}
	}
	return nil
}

// Catch makes faults on this goroutine panic (runtime/debug.SetPanicOnFault) and returns the
// setting it replaced, for Recover to restore. Use the two as
//
//	defer mmap.Recover(mmap.Catch(), &err)
//
// (the deferred call allocates nothing, so it fits hot paths).
func Catch() (old bool) { return debug.SetPanicOnFault(true) }

// Recover, deferred, recovers a fault on a mapped region into *err (an error naming the file
// and the offset, wrapping ErrChanged) and restores the setting Catch replaced. Any other
// panic goes on.
func Recover(old bool, err *error) {
	debug.SetPanicOnFault(old)
	if v := recover(); v != nil {
		e := faultError(v)
		if e == nil {
			panic(v)
		}
		*err = e
	}
}

// Guard runs fn on the calling goroutine and returns its error, or the error for a fault on
// a mapped region during fn (see Catch).
func Guard(fn func() error) (err error) {
	defer Recover(Catch(), &err)
	return fn()
}

// Bytes returns the mapped bytes. They must not be written to, nor used after Close.
func (r *Region) Bytes() []byte { return r.data }

// Close unmaps the region.
func (r *Region) Close() error {
	if r.data == nil {
		return nil
	}
	live.Lock()
	delete(live.m, r)
	start, end := r.span()
	live.closed[live.next] = span{start, end, r.name}
	live.next = (live.next + 1) % len(live.closed)
	live.Unlock()
	d := r.data
	r.data = nil
	return r.unmap(d)
}

// OpenFile opens the named file for reading and returns it with its size, the first step of
// every format's Open. On error nothing is left open.
func OpenFile(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}
