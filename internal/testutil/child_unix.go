//go:build unix

package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mlfeed/mlfeed"
)

// ChildEnv is the environment variable that tells a test it runs as the child of RunChild.
const ChildEnv = "MLFEED_TEST_CHILD"

// peakMarker starts the line on which a child reports its peak memory.
const peakMarker = "mlfeed-child-peak-rss "

// IsChild reports whether the running test is the child RunChild started for it. In the
// child, it arranges for the test's peak memory to be reported to the parent when it ends.
func IsChild(tb testing.TB) bool {
	if os.Getenv(ChildEnv) != tb.Name() {
		return false
	}
	tb.Cleanup(func() {
		if n, ok := ownPeak(); ok {
			fmt.Printf("\n%s%d\n", peakMarker, n)
		}
	})
	return true
}

// ownPeak returns this process's peak resident memory since its exec (Linux's VmHWM). The
// rusage of a child is no use on Linux: its ru_maxrss starts from the parent's peak at fork.
func ownPeak() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// RunChild runs the calling test again, alone, in a child process of the test binary (where
// IsChild is true), with env (KEY=VALUE) added, and returns its output and its peak resident
// memory in bytes: what the child reports (Linux's VmHWM), else getrusage's ru_maxrss. A test
// measures a reader's memory this way, apart from the memory of the test process. err is the
// child's exit error, if any.
func RunChild(tb testing.TB, env ...string) (out string, peakRSS int64, err error) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+tb.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), ChildEnv+"="+tb.Name()), env...)
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		tb.Fatalf("running the child: %v", err)
	}
	if i := bytes.LastIndex(b, []byte(peakMarker)); i >= 0 {
		line, _, _ := bytes.Cut(b[i+len(peakMarker):], []byte("\n"))
		if n, perr := strconv.ParseInt(string(line), 10, 64); perr == nil {
			return string(b), n, err
		}
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

// ZeroColumn returns a chunk of rows sequences of one zero of type t: the body of a
// decompression bomb, which compresses to almost nothing.
func ZeroColumn(t mlfeed.ElemType, rows int) *mlfeed.Chunk {
	seq := make([]int64, rows+1)
	for i := range seq {
		seq[i] = int64(i)
	}
	return &mlfeed.Chunk{Sequences: rows, Streams: []mlfeed.StreamData{{SeqStart: seq, Values: mlfeed.NewBuffer(t, rows)}}}
}

// CheckChildPeak runs the test's child (RunChild, with env) on the bomb file path and fails
// the test when the child's peak memory passes limit bytes; what describes the unit refused.
func CheckChildPeak(tb testing.TB, path, what string, limit int64, env ...string) {
	tb.Helper()
	st, _ := os.Stat(path)
	out, rss, err := RunChild(tb, env...)
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	tb.Logf("%d-byte file, %s: peak RSS %.1f MiB", st.Size(), what, float64(rss)/(1<<20))
	if rss > limit {
		tb.Errorf("peak RSS %.1f MiB refusing %s; want under %d MiB", float64(rss)/(1<<20), what, limit>>20)
	}
}
