//go:build linux

package hdf5_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// bomb.h5.gz (testdata) holds bomb.h5 from ../../internal/hdf5/testdata/hostile.py: one gzip
// chunk of 65536 x 4096 float32 zeros (1 GiB) in a 1.3 MB file, and a dataset y of 65536 int32.
// Issue 28: `mlfeed cat -n 2` took 2.1 GB.

// TestBombChild is the child process of TestBombMemory: it opens the file named by
// MLFEED_BOMB with a scheduler of MLFEED_BOMB_MEMORY bytes, as `mlfeed cat --memory` does,
// reads the first chunk and prints the outcome.
func TestBombChild(t *testing.T) {
	name := os.Getenv("MLFEED_BOMB")
	if name == "" {
		t.Skip("run by TestBombMemory")
	}
	var mem int64
	fmt.Sscan(os.Getenv("MLFEED_BOMB_MEMORY"), &mem)
	ctx := sched.WithContext(context.Background(), sched.New(0, mem))
	f, _ := format.Lookup("hdf5")
	src, err := f.Open(name, &format.Options{Context: ctx})
	if err == nil {
		_, err = src.ReadChunk(ctx, 0)
	}
	switch {
	case err == nil:
		fmt.Println("RESULT ok")
	case errors.Is(err, mlfeed.ErrTooLarge):
		fmt.Println("RESULT too large:", err)
	default:
		fmt.Println("RESULT error:", err)
	}
}

// TestBombMemory reads the bomb in a child process and checks its peak memory (max RSS):
// under a budget smaller than the chunk, the chunk is refused (ErrTooLarge, exit 1 in the CLI)
// naming its size and --memory, before anything is allocated for it; under a larger budget it
// is read with the memory of the chunk once (decoded straight into the rows read).
func TestBombMemory(t *testing.T) {
	gz, err := os.Open("testdata/bomb.h5.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "bomb.h5")
	out, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()
	run := func(memory int64) (string, int64) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBombChild$", "-test.v")
		cmd.Env = append(os.Environ(), "MLFEED_BOMB="+name, fmt.Sprint("MLFEED_BOMB_MEMORY=", memory), "GOGC=100")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, b)
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024 // kilobytes on Linux (this file's system)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "RESULT ") {
				return line, rss
			}
		}
		t.Fatalf("child printed no result:\n%s", b)
		return "", 0
	}
	res, rss := run(256 << 20)
	if !strings.HasPrefix(res, "RESULT too large") || !strings.Contains(res, "1073741824 bytes") || !strings.Contains(res, "--memory") || !strings.Contains(res, "byte offset") {
		t.Errorf("budget 256 MiB: %s", res)
	}
	if rss > 128<<20 {
		t.Errorf("budget 256 MiB: max RSS %d MiB", rss>>20)
	}
	t.Logf("budget 256 MiB: %s; max RSS %d MiB", res, rss>>20)
	if testing.Short() {
		return
	}
	res, rss = run(2 << 30)
	if res != "RESULT ok" {
		t.Errorf("budget 2 GiB: %s", res)
	}
	// the chunk's rows (1 GiB) once, the file and the runtime: not twice the chunk (2.1 GB)
	if rss > 1280<<20 {
		t.Errorf("budget 2 GiB: max RSS %d MiB", rss>>20)
	}
	t.Logf("budget 2 GiB: max RSS %d MiB", rss>>20)
}
