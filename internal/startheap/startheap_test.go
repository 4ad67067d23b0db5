package startheap

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

// settle collects until every raise has been undone.
func settle(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for raised.Load() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("collections did not undo %d raises of the collector's percentage", raised.Load())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestStart checks that start raises the collector's percentage so that the heap may
// grow to the size asked for, that the next collection puts it back, and that GOGC or
// GOMEMLIMIT set leaves it alone.
func TestStart(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	settle(t) // the package's own raise, when it initialised
	before := gcPercent()
	start(Size)
	if p := gcPercent(); p <= before {
		t.Fatalf("after start the collector's percentage is %d, was %d", p, before)
	}
	settle(t)
	if p := gcPercent(); p != before {
		t.Fatalf("collections did not put the percentage back: %d, want %d", p, before)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "100")
			if env == "GOMEMLIMIT" {
				t.Setenv(env, "1GiB")
			}
			start(Size)
			if p := gcPercent(); p != before {
				t.Errorf("with %s set, start changed the percentage to %d", env, p)
			}
		})
	}
}
