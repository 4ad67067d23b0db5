// Package startheap lets a command's heap grow to 64 MiB before its first garbage collection,
// from the start of the packages' initialisation, as the Go compiler does for itself
// (cmd/compile's AdjustStartingHeap). A command imports it for its effect, first:
//
//	import _ "github.com/mlfeed/mlfeed/internal/startheap"
//
// The runtime starts with a heap goal of 4 MB and doubles it at each collection. The
// packages a command links (the object-storage clients register thousands of protocol
// buffer descriptors) allocate more than that while they initialise, and the collections
// that follow find almost nothing to free: about a fifth of the time an `mlfeed` run takes to
// start. Then a command whose working set is a few chunks of megabytes (the chunks of the
// first minibatch, fetched from object storage or decoded) collects two or three times before
// it has delivered anything, each time finding nothing to free (the chunks are live), making
// the goroutines that allocate the chunks assist, and taking CPU from the reads. Memory stays
// bounded: the heap never exceeds the size before that collection, after which the usual goal
// (twice the live heap, GOGC's default of 100) applies. Where GOGC or GOMEMLIMIT is set, the
// user's setting is left alone.
//
// The package imports nothing outside the standard library's runtime packages, so that it is
// initialised before the packages that allocate: Go initialises, among the packages whose
// imports are initialised, the one first by import path.
package startheap

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// Size is the heap a command may grow to before its first garbage collection.
const Size = 64 << 20

func init() { start(Size) }

// raised counts the raises whose collection has not come yet.
var raised atomic.Int32

// start lets the heap grow to size bytes before the next garbage collection, then returns to
// the collector's setting.
func start(size uint64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// The goal is the heap marked live by the last collection (the runtime's initial 4 MB if
	// none ran yet) times 1 + GOGC/100. Before the first collection, the usual case here, that
	// is all there is to know; after one, the heap allocated now bounds the live heap from
	// above, and a raise from less than 4 MB would also raise the runtime's minimum goal (4 MB
	// times the same factor) past size. debug.ReadGCStats first: runtime/metrics's
	// initialisation (a description of each metric) took as long as this package's work, and
	// runtime.ReadMemStats stops the world (3 ms at start-up on a 2-core VM).
	live := uint64(4 << 20)
	var gs debug.GCStats
	debug.ReadGCStats(&gs)
	if gs.NumGC > 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = max(ms.HeapAlloc, live)
	}
	if live >= size/2 {
		return
	}
	old := debug.SetGCPercent(int((size - live) * 100 / live))
	raised.Add(1)
	// The next collection reclaims the sentinel and runs its cleanup: back to the usual goal.
	runtime.AddCleanup(&sentinel{}, func(old int) {
		debug.SetGCPercent(old)
		raised.Add(-1)
	}, old)
}

// sentinel is an object whose reclamation marks a collection. It holds a pointer so that it
// is never packed into a tiny block with other objects (which could keep it alive).
type sentinel struct{ _ *byte }
