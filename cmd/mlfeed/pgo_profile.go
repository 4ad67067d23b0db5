//go:build pgoprofile

package main

import (
	"os"
	"runtime/pprof"
)

// With the pgoprofile build tag, $MLFEED_CPUPROFILE names a file that receives the CPU
// profile of the command (scripts/pgo.sh merges such profiles into default.pgo).
func init() {
	name := os.Getenv("MLFEED_CPUPROFILE")
	if name == "" {
		return
	}
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	stopProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
