package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func gcPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestStartHeap checks that startHeap raises the collector's percentage so that the heap may
// grow to the size asked for, that the next collection puts it back, and that GOGC or
// GOMEMLIMIT set leaves it alone.
func TestStartHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	runtime.GC()
	before := gcPercent()
	startHeap(startHeapSize)
	if p := gcPercent(); p <= before {
		t.Fatalf("after startHeap the collector's percentage is %d, was %d", p, before)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != before {
		if time.Now().After(deadline) {
			t.Fatalf("collections did not put the percentage back: %d, want %d", gcPercent(), before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "100")
			if env == "GOMEMLIMIT" {
				t.Setenv(env, "1GiB")
			}
			startHeap(startHeapSize)
			if p := gcPercent(); p != before {
				t.Errorf("with %s set, startHeap changed the percentage to %d", env, p)
			}
		})
	}
}
