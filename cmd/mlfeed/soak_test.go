//go:build linux

package main

// The soak test: data sets 20 times larger than a memory limit streamed through the built
// CLI in real processes (convert to a file and to shards, batches with a randomization window
// over a file and over a directory of shards), each process held to the limit. The limit is a
// hard one when the test may create a memory cgroup (v2, else v1; as root): exceeding it gets
// the process killed, and the test fails. Always, the process runs with GOMEMLIMIT at half the
// limit (the rest is for the kernel: the page cache of the files written, dirty until written
// back, is charged to the cgroup too), and its anonymous resident memory (/proc/PID/status RssAnon plus
// RssShmem, sampled every few milliseconds) must stay under the limit. Its file-backed resident
// memory (the inputs' mapped pages: page cache, clean and reclaimable, which a cgroup takes
// back under pressure) is reported, not limited. Skipped with -short: it writes about 3.5 GB
// and runs for one to two minutes (the limit leaves the kernel little page cache: batches
// reads its randomized chunks from disk).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// soakLimit is the memory limit of every process of the soak test. Chunks are 2 MiB (read and
// written) so that a few of them and a window of 4 fit in it with the Go runtime.
const (
	soakLimit = 64 << 20
	soakChunk = 2 << 20
	soakScale = 20 // the large data sets are this many times the limit
)

func TestSoakBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: skipped with -short")
	}
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err == nil && int64(st.Bavail)*st.Bsize < 6<<30 {
		t.Skipf("soak test: %s has less than the 6 GiB free it needs", dir)
	}
	var cg *memCgroup
	if st.Type == unix.TMPFS_MAGIC {
		// Files written on tmpfs are memory the cgroup cannot reclaim: the outputs alone are
		// over the limit.
		t.Logf("%s is on tmpfs: no memory cgroup", dir)
	} else {
		cg = newMemCgroup(t, soakLimit)
	}
	if cg != nil {
		t.Logf("limit %d MiB: a %s memory cgroup (hard), GOMEMLIMIT and RSS sampling", soakLimit>>20, cg.kind)
	} else {
		t.Logf("limit %d MiB: GOMEMLIMIT and RSS sampling (no memory cgroup could be made)", soakLimit>>20)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	chunk := strconv.Itoa(soakChunk)

	// 1. IDX (float32 images, uint8 labels) to CBF: 20 times the limit.
	const dim = 28 * 28
	n := int64(soakScale*soakLimit)/(4*dim) + 1000
	writeSoakIDX(t, p("img-idx3-float"), p("lab-idx1-ubyte"), n)
	total := fileSize(t, p("img-idx3-float")) + fileSize(t, p("lab-idx1-ubyte"))
	soakRun(t, cg, "convert IDX -> CBF", total, "convert", "-q", "--type", "float32", "--chunk-size", chunk,
		p("img-idx3-float"), p("lab-idx1-ubyte"), p("big.cbf"))
	os.Remove(p("img-idx3-float")) // disk, not memory
	big := fileSize(t, p("big.cbf"))

	// 2. CBF to a directory of 8 shards (two writers at once: GOMAXPROCS is 2).
	soakRun(t, cg, "convert CBF -> 8 CBF shards", big, "convert", "-q", "--chunk-size", chunk, "--shards", "8",
		"--to", "cbf", p("big.cbf"), p("shards"))

	// 3. batches, randomized in a window of 4 chunks, over the file and over the shards.
	want := fmt.Sprintf(" %d samples, 1 sweeps", n)
	out := soakRun(t, cg, "batches --window 4, one CBF file", big, "batches", "--window", "4", "--mb-size", "256", p("big.cbf"))
	if !strings.Contains(out, want) {
		t.Errorf("batches over the file: want %q in:\n%s", want, out)
	}
	os.Remove(p("big.cbf"))
	out = soakRun(t, cg, "batches --window 4, 8 CBF shards", big, "batches", "--window", "4", "--mb-size", "256", p("shards"))
	if !strings.Contains(out, want) {
		t.Errorf("batches over the shards: want %q in:\n%s", want, out)
	}
	os.RemoveAll(p("shards"))

	// 4. CTF (sparse, text) to CBF, reading and writing 2 MiB chunks: 5 times the limit (text
	// parses at tens of MB/s; the limit does not depend on the size, as the legs above show).
	lines := writeSoakCTF(t, p("in.ctf"), 5*soakLimit)
	soakRun(t, cg, "convert CTF -> CBF", fileSize(t, p("in.ctf")), "convert", "-q", "--opt", "chunkSizeInBytes="+chunk,
		"--chunk-size", chunk, "--input", "x:sparse:1000", "--input", "y:sparse:10", p("in.ctf"), p("ctf.cbf"))
	js, _, code := run(t, "info", "--json", p("ctf.cbf"))
	if code != 0 || !strings.Contains(js, fmt.Sprintf(`"sequences": %d`, lines)) {
		t.Errorf("info of the converted CTF (exit %d): want %d sequences in %s", code, lines, js)
	}
}

// soakRun runs mlfeed with args under the limit, fails the test when it fails, is killed or
// its anonymous memory reaches the limit, logs what it used and returns its standard output.
//
// A v1 memory cgroup counts the page cache its processes write, dirty and under writeback,
// and its reclaim cannot write dirty pages itself: it waits for the kernel's flusher, and can
// call the OOM killer first when the disk is slow. That killed convert once in CI with 28.8
// MiB of anonymous memory (before convert waited for its writeback every 8 MiB). So a v1 kill
// of a process whose sampled anonymous memory stayed under half the limit is logged, with what
// the cgroup held, and the run is tried once more; a second kill fails the test.
func soakRun(t *testing.T, cg *memCgroup, what string, dataBytes int64, args ...string) string {
	t.Helper()
	for try := 1; ; try++ {
		out, anon, killed := soakOnce(t, cg, what, dataBytes, args...)
		if killed == "" {
			return out
		}
		if try == 1 && cg != nil && !cg.v2 && anon < soakLimit/2 {
			t.Logf("%s: killed in a v1 cgroup with %.1f MiB of anonymous memory%s; once more", what, float64(anon)/(1<<20), killed)
			continue
		}
		t.Fatalf("%s: mlfeed %v killed (over the %d MiB limit?)%s", what, args, soakLimit>>20, killed)
	}
}

// soakOnce runs mlfeed for soakRun. It fails the test when mlfeed fails or its anonymous
// memory reaches the limit, and returns its standard output, its peak anonymous memory and,
// when it was killed by a signal, what to say of it (the signal, what the cgroup held, and
// mlfeed's standard error).
func soakOnce(t *testing.T, cg *memCgroup, what string, dataBytes int64, args ...string) (stdout string, anon int64, killed string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	ooms := 0
	if cg != nil { // enter the cgroup before mlfeed starts: a shell joins it, then execs mlfeed
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, cg.procs, bin}, args...)...)
		cg.reset()
		ooms = cg.ooms()
	}
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMEMLIMIT=%dMiB", soakLimit/2>>20), "GOMAXPROCS=2")
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := sampleRSS(cmd.Process.Pid)
	err := cmd.Wait()
	m := peak()
	elapsed := time.Since(start)
	hwm := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	cgInfo := ""
	if cg != nil {
		cgInfo = fmt.Sprintf(", cgroup peak %.1f MiB (page cache included)", float64(cg.peak())/(1<<20))
	}
	t.Logf("%s: %.2f GB (%.1fx the limit) in %.1fs: peak anonymous RSS %.1f MiB, peak RSS %.1f MiB with %.1f MiB of mapped file pages%s",
		what, float64(dataBytes)/1e9, float64(dataBytes)/soakLimit, elapsed.Seconds(), float64(m.anon)/(1<<20),
		float64(hwm)/(1<<20), float64(m.file)/(1<<20), cgInfo)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "", m.anon, fmt.Sprintf(" by signal %q%s\n%s", ws.Signal(), cg.charged(), stderr.String())
		}
	}
	if err != nil {
		t.Fatalf("%s: mlfeed %v: %v\n%s", what, args, err, stderr.String())
	}
	if cg != nil && cg.ooms() > ooms {
		t.Errorf("%s: the cgroup's OOM killer ran", what)
	}
	if m.samples < 10 {
		t.Errorf("%s: only %d samples of the process's memory", what, m.samples)
	}
	if m.anon >= soakLimit {
		t.Errorf("%s: peak anonymous RSS %d bytes, over the %d MiB limit", what, m.anon, soakLimit>>20)
	}
	return out.String(), m.anon, ""
}

// rssPeaks are the highest values sampled from /proc/PID/status.
type rssPeaks struct {
	anon, file int64 // RssAnon+RssShmem, RssFile
	samples    int
}

// sampleRSS samples the memory of process pid every 2 ms until it exits; the function it
// returns waits for the sampler and gives the peaks.
func sampleRSS(pid int) func() rssPeaks {
	var p rssPeaks
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		name := fmt.Sprintf("/proc/%d/status", pid)
		for {
			b, err := os.ReadFile(name)
			if err != nil || !strings.Contains(string(b), "RssAnon:") { // gone, or a zombie
				return
			}
			var anon, file int64
			for _, line := range strings.Split(string(b), "\n") {
				k, v, _ := strings.Cut(line, ":")
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				switch k {
				case "RssAnon", "RssShmem":
					anon += kb << 10
				case "RssFile":
					file = kb << 10
				}
			}
			p.anon, p.file, p.samples = max(p.anon, anon), max(p.file, file), p.samples+1
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() rssPeaks { wg.Wait(); return p }
}

// memCgroup is a memory cgroup made for the test, with a hard limit.
type memCgroup struct {
	kind, dir, procs string
	v2               bool
}

// newMemCgroup makes a memory cgroup limited to limit bytes (no swap), removed when the test
// ends, or returns nil when it cannot (not root, no memory controller, read-only /sys).
func newMemCgroup(t *testing.T, limit int64) *memCgroup {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var v1, v2 string
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		fstype, opts := f[sep+1], f[sep+3]
		switch {
		case fstype == "cgroup2" && v2 == "":
			v2 = f[4]
		case fstype == "cgroup" && v1 == "" && slices.Index(strings.Split(opts, ","), "memory") >= 0:
			v1 = f[4]
		}
	}
	name := fmt.Sprintf("mlfeed-soak-%d", os.Getpid())
	l := strconv.FormatInt(limit, 10)
	try := func(cg *memCgroup, files ...[2]string) *memCgroup {
		if err := os.Mkdir(cg.dir, 0o755); err != nil {
			return nil
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(cg.dir, f[0]), []byte(f[1]), 0o644); err != nil && f[0] != "memory.swap.max" && f[0] != "memory.memsw.limit_in_bytes" {
				os.Remove(cg.dir)
				return nil
			}
		}
		t.Cleanup(func() { os.Remove(cg.dir) })
		return cg
	}
	if v2 != "" {
		if c, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers")); err == nil && slices.Index(strings.Fields(string(c)), "memory") >= 0 {
			os.WriteFile(filepath.Join(v2, "cgroup.subtree_control"), []byte("+memory"), 0o644)
			cg := &memCgroup{kind: "v2", dir: filepath.Join(v2, name), v2: true}
			cg.procs = filepath.Join(cg.dir, "cgroup.procs")
			if cg = try(cg, [2]string{"memory.max", l}, [2]string{"memory.swap.max", "0"}); cg != nil {
				return cg
			}
		}
	}
	if v1 != "" {
		cg := &memCgroup{kind: "v1", dir: filepath.Join(v1, name)}
		cg.procs = filepath.Join(cg.dir, "cgroup.procs")
		return try(cg, [2]string{"memory.limit_in_bytes", l}, [2]string{"memory.memsw.limit_in_bytes", l})
	}
	return nil
}

func (cg *memCgroup) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(cg.dir, name))
	return string(b)
}

// reset clears the peak before a run (v1 only: v2's memory.peak resets with a new cgroup
// only, so it reports the highest of the runs so far).
func (cg *memCgroup) reset() {
	if !cg.v2 {
		os.WriteFile(filepath.Join(cg.dir, "memory.max_usage_in_bytes"), []byte("0"), 0o644)
	}
}

// peak returns the cgroup's peak usage, page cache included.
func (cg *memCgroup) peak() int64 {
	name := "memory.max_usage_in_bytes"
	if cg.v2 {
		name = "memory.peak"
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(cg.read(name)), 10, 64)
	return n
}

// charged returns what the cgroup holds now, by kind (anonymous memory, page cache, its dirty
// pages and those under writeback, shared memory), for the message of a process it killed: the
// page cache stays charged after the process ends. Empty for a nil cgroup.
func (cg *memCgroup) charged() string {
	if cg == nil {
		return ""
	}
	keys := []string{"total_rss", "total_cache", "total_dirty", "total_writeback", "total_shmem", "total_mapped_file"}
	if cg.v2 {
		keys = []string{"anon", "file", "file_dirty", "file_writeback", "shmem", "file_mapped"}
	}
	var b strings.Builder
	for _, line := range strings.Split(cg.read("memory.stat"), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && slices.Contains(keys, k) {
			n, _ := strconv.ParseInt(v, 10, 64)
			fmt.Fprintf(&b, " %s %.1f MiB", k, float64(n)/(1<<20))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return ";\nthe cgroup holds" + b.String()
}

// ooms returns how many processes the cgroup's OOM killer has killed.
func (cg *memCgroup) ooms() int {
	name := "memory.oom_control"
	if cg.v2 {
		name = "memory.events"
	}
	for _, line := range strings.Split(cg.read(name), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// writeSoakIDX writes n 28x28 float32 images (IDX type 0x0D) and n uint8 labels.
func writeSoakIDX(t *testing.T, images, labels string, n int64) {
	t.Helper()
	write := func(name string, header []byte, body func(w *bufio.Writer)) {
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		w.Write(header)
		body(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	h := []byte{0, 0, 0x0D, 3}
	h = binary.BigEndian.AppendUint32(h, uint32(n))
	h = binary.BigEndian.AppendUint32(h, 28)
	h = binary.BigEndian.AppendUint32(h, 28)
	row := make([]byte, 4*28*28*1000) // 1000 images, repeated with their first value changed
	for k := range len(row) / 4 {
		binary.BigEndian.PutUint32(row[4*k:], math.Float32bits(float32(k%251)/250))
	}
	write(images, h, func(w *bufio.Writer) {
		for i := int64(0); i < n; i += 1000 {
			binary.BigEndian.PutUint32(row, math.Float32bits(float32(i)))
			w.Write(row[:4*28*28*min(1000, n-i)])
		}
	})
	h = binary.BigEndian.AppendUint32([]byte{0, 0, 8, 1}, uint32(n))
	write(labels, h, func(w *bufio.Writer) {
		for i := int64(0); i < n; i++ {
			w.WriteByte(byte(i % 10))
		}
	})
}

// writeSoakCTF writes at least size bytes of CTF: one sequence per line, a sparse stream x of
// dimension 1000 with 20 values and a one-hot y of dimension 10. It returns the line count.
func writeSoakCTF(t *testing.T, name string, size int64) int64 {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n, written int64
	var line []byte
	for ; written < size; n++ {
		line = strconv.AppendInt(line[:0], n, 10)
		line = append(line, " |x"...)
		for k := int64(0); k < 20; k++ {
			line = append(line, ' ')
			line = strconv.AppendInt(line, (n*7+k*50)%1000/50*50+k, 10) // increasing, distinct
			line = append(line, ':')
			line = strconv.AppendInt(line, (n+k)%7+1, 10)
		}
		line = append(line, " |y "...)
		line = strconv.AppendInt(line, n%10, 10)
		line = append(line, ":1\n"...)
		w.Write(line)
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}
