package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// startHeapSize is the heap the process may grow to before its first garbage collection
// after main starts.
const startHeapSize = 64 << 20

// startHeap lets the heap grow to size bytes before the next garbage collection, then
// returns to the collector's setting (GOGC's default of 100), as the Go compiler does
// (cmd/compile's AdjustStartingHeap). The runtime starts with a heap goal of 4 MB, and
// doubles it at each collection: a command whose working set is a few chunks of megabytes
// (the chunks of the first minibatch, fetched from object storage or decoded) collects two
// or three times before it has delivered anything, each time finding nothing to free (the
// chunks are live) while scanning the packages' initialised data, making the goroutines that
// allocate the chunks assist, and taking CPU from the reads. Memory stays bounded: the heap
// never exceeds size before that collection, after which the usual goal (twice the live
// heap) applies. Where GOGC or GOMEMLIMIT is set, the user's setting is left alone.
func startHeap(size uint64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// The goal is the heap marked live by the last collection (the one during the
	// packages' initialisation, or the runtime's initial 4 MB if none ran yet) times
	// 1 + GOGC/100.
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	live := uint64(4 << 20)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0 {
		live = s[0].Value.Uint64()
	}
	if live >= size/2 {
		return
	}
	old := debug.SetGCPercent(int((size - live) * 100 / live))
	// The next collection reclaims the sentinel and runs its cleanup: back to the usual goal.
	runtime.AddCleanup(&sentinel{}, func(old int) { debug.SetGCPercent(old) }, old)
}

// sentinel is an object whose reclamation marks a collection. It holds a pointer so that it
// is never packed into a tiny block with other objects (which could keep it alive).
type sentinel struct{ _ *byte }
