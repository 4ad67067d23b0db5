// Package prefetch asks the CPU to start loading memory that the caller will read soon, so that
// the wait for it overlaps other work. A shuffled gather (copying rows from random places) is
// bound by the latency of each row's first cache miss; prefetching the rows a few copies ahead
// lets those misses run in parallel.
//
// Prefetching is a hint: it never faults, changes no memory, and is a no-op on architectures
// without an implementation here.
package prefetch

import "unsafe"

// Bytes hints that b's first cache line will be read soon. It does nothing for an empty b.
func Bytes(b []byte) {
	if len(b) > 0 {
		line(&b[0])
	}
}

// Span hints that all of b will be read soon: every cache line it touches. For a row copied
// from a random place, prefetching only its first line leaves the rest to the hardware
// prefetcher, which starts late and stops at the end of a page; Span starts every line's load
// (and the page walk of every page the row spans). It does nothing for an empty b.
func Span(b []byte) {
	if len(b) > 0 {
		span(&b[0], len(b))
	}
}

// Int64s hints that s's first element will be read soon. It does nothing for an empty s.
func Int64s(s []int64) {
	if len(s) > 0 {
		line((*byte)(unsafe.Pointer(&s[0])))
	}
}
