package cputime

import (
	"testing"
	"time"
)

// Used grows while the process computes, and Seconds says the same.
func TestUsed(t *testing.T) {
	start, t0 := Used(), time.Now()
	x := 0
	for Used()-start < 20*time.Millisecond {
		for i := range 1 << 16 {
			x += i
		}
		if time.Since(t0) > 10*time.Second {
			t.Fatalf("CPU time stayed at %v for 10 s of work", Used()-start)
		}
	}
	if Seconds() < (Used() - time.Millisecond).Seconds() {
		t.Errorf("Seconds %v, Used %v", Seconds(), Used())
	}
	_ = x
}
