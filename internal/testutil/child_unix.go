//go:build unix

package testutil

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// ChildEnv is the environment variable that tells a test it runs as the child of RunChild.
const ChildEnv = "MLFEED_TEST_CHILD"

// IsChild reports whether the running test is the child RunChild started for it.
func IsChild(tb testing.TB) bool { return os.Getenv(ChildEnv) == tb.Name() }

// RunChild runs the calling test again, alone, in a child process of the test binary (where
// IsChild is true), with env (KEY=VALUE) added, and returns its output and its peak resident
// memory in bytes (getrusage's ru_maxrss). A test measures a reader's memory this way, apart
// from the memory of the test process. err is the child's exit error, if any.
func RunChild(tb testing.TB, env ...string) (out string, peakRSS int64, err error) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+tb.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), ChildEnv+"="+tb.Name()), env...)
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		tb.Fatalf("running the child: %v", err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		tb.Skip("no resource usage of the child on this system")
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		rss <<= 10 // kilobytes elsewhere
	}
	return string(b), rss, err
}
