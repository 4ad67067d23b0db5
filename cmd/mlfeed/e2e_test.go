//go:build unix

package main

// The end-to-end fault suite: the built binary (TestMain) run as real processes against
// devices, FIFOs, sockets, symbolic links and standard output, interrupted by signals at
// random moments, stopped by a full disk and a file size limit, reading inputs that shrink
// underneath it, and given absurd flag values. Every case checks the exit status, that the
// message names the user's path, that no panic or goroutine trace appears, and that nothing is
// left behind. -short runs fewer random repetitions.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mlfeed/mlfeed/internal/testutil/tmpfs"
)

// crashed reports whether stderr shows a Go crash rather than an error message.
func crashed(stderr string) bool {
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "unexpected fault address", "SIGBUS", "SIGSEGV"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// leftovers returns the names in dir that are not in keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		found := false
		for _, k := range keep {
			found = found || e.Name() == k
		}
		if !found {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestFaultOutputToDevicesAndStdout(t *testing.T) {
	labels := mnist(t, "t10k-labels-idx1-ubyte.gz")
	dir := t.TempDir()
	ref := func(ext string) []byte {
		out := filepath.Join(dir, "ref"+ext)
		if _, stderr, code := run(t, "convert", "-q", labels, out, "--type", "float32"); code != 0 {
			t.Fatal(stderr)
		}
		b, _ := os.ReadFile(out)
		return b
	}
	for _, c := range []struct{ to, ext, compress string }{{"idx", ".idx", "none"}, {"idx", ".idx.gz", "gzip"},
		{"ctf", ".ctf", ""}, {"cbf", ".cbf", ""}, {"mtx", ".mtx", ""}} {
		want := ref(c.ext)
		// "-" is standard output: the same bytes, and no file named "-".
		cmd := exec.Command(bin, "convert", "-q", labels, "-", "--to", c.to, "--type", "float32", "--compress", c.compress)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		got, err := cmd.Output()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s to stdout: %v, %d bytes, want %d: %s", c.to, err, len(got), len(want), errb.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
			t.Fatal(`a file named "-" was created`)
		}
		// A FIFO is written into, not replaced.
		fifo := filepath.Join(dir, "fifo"+c.ext)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		read := make(chan []byte)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				read <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			read <- b
		}()
		_, stderr, code := run(t, "convert", "-q", labels, fifo, "--type", "float32")
		if b := <-read; code != 0 || !bytes.Equal(b, want) {
			t.Errorf("%s into a FIFO: exit %d, %d bytes, want %d: %s", c.to, code, len(b), len(want), stderr)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was replaced")
		}
	}
	// /dev/null stays a device.
	if _, stderr, code := run(t, "convert", "-q", labels, "/dev/null", "--to", "idx"); code != 0 {
		t.Errorf("convert to /dev/null: exit %d: %s", code, stderr)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/null is no longer a device")
	}
	// Formats that need to seek refuse standard output, devices and FIFOs with exit 2.
	for _, out := range []string{"-", "/dev/null"} {
		_, stderr, code := run(t, "convert", "-q", labels, out, "--to", "idv")
		if code != 2 || !strings.Contains(stderr, "seekable") {
			t.Errorf("idv to %s: exit %d: %s", out, code, stderr)
		}
	}
	// A socket is a usage error naming it, and stays as it was; so is a directory where a
	// file is wanted (convert writes shards into a directory).
	sub := filepath.Join(dir, "adir.png")
	os.Mkdir(sub, 0o755)
	sock := filepath.Join(dir, "s.idx")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
		if _, stderr, code := run(t, "convert", "-q", labels, sock); code != 2 || !strings.Contains(stderr, "socket") {
			t.Errorf("convert to a socket: exit %d: %s", code, stderr)
		}
		if st, err := os.Lstat(sock); err != nil || st.Mode()&os.ModeSocket == 0 {
			t.Error("the socket was replaced")
		}
	}
	if st, err := os.Stat(sub); err != nil || !st.IsDir() {
		t.Error("the directory was replaced")
	}
	// show --png and batches --save-state follow the same rules.
	if _, stderr, code := run(t, "show", "--png", sub, mnist(t, "t10k-images-idx3-ubyte.gz")); code != 2 || !strings.Contains(stderr, sub) || !strings.Contains(stderr, "directory") {
		t.Errorf("show --png to a directory: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "batches", "--save-state", "/dev/null", "--after", "1", labels); code != 0 {
		t.Errorf("batches --save-state /dev/null: exit %d: %s", code, stderr)
	}
}

func TestFaultOutputSymlinksModesAndNames(t *testing.T) {
	labels := mnist(t, "t10k-labels-idx1-ubyte.gz")
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "labels.idx")
	os.Mkdir(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("old"), 0o600)
	link := filepath.Join(dir, "link.idx")
	os.Symlink("data/labels.idx", link)
	if _, stderr, code := run(t, "convert", "-q", labels, link); code != 0 {
		t.Fatal(stderr)
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symbolic link was replaced by a file")
	}
	st, _ = os.Stat(real)
	if st.Size() != 10008 || st.Mode().Perm() != 0o600 {
		t.Errorf("the link's target: %d bytes, mode %v; want 10008 bytes, mode kept 0600", st.Size(), st.Mode().Perm())
	}
	if extra := leftovers(t, filepath.Dir(real), "labels.idx"); extra != nil {
		t.Errorf("left beside the target: %v", extra)
	}
	// New files get 0666 minus the umask.
	old := syscall.Umask(0o027)
	_, stderr, code := run(t, "convert", "-q", labels, filepath.Join(dir, "new.idx"))
	syscall.Umask(old)
	if st, err := os.Stat(filepath.Join(dir, "new.idx")); code != 0 || err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("new file under umask 027: exit %d, %v: %s", code, err, stderr)
	}
	// Errors name the path given, never the temporary file.
	missing := filepath.Join(dir, "no", "such", "dir", "out.idx")
	_, stderr, code = run(t, "convert", "-q", labels, missing)
	if code != 1 || !strings.Contains(stderr, missing) || strings.Contains(stderr, "mlfeed-tmp") {
		t.Errorf("output in a missing directory: exit %d: %s", code, stderr)
	}
}

// TestFaultSignals interrupts conversions at random moments with SIGINT, SIGTERM and SIGHUP: the
// exit status is 128+N with one line on stderr and nothing left but a complete output (when
// the conversion ended first).
func TestFaultSignals(t *testing.T) {
	images := mnist(t, "train-images-idx3-ubyte.gz")
	dir := t.TempDir()
	sigs := []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}}
	runs := 24
	if testing.Short() {
		runs = 6
	}
	outs := []string{"o.idx.gz", "o.cbf", "o.ctf", "o.idx"}
	deadline := time.Now().Add(40 * time.Second)
	interrupted := 0
	for i := 0; i < runs && time.Now().Before(deadline); i++ {
		s := sigs[i%len(sigs)]
		out := outs[i%len(outs)]
		args := []string{"convert", "-q", images, filepath.Join(dir, out)}
		if out != "o.idx" && out != "o.idx.gz" {
			args = append(args, "--type", "float32")
		}
		cmd := exec.Command(bin, args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(600 * time.Millisecond))))
		cmd.Process.Signal(s.sig)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		stderr := errb.String()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		switch {
		case code == -1:
			// The signal came before the Go runtime started: it killed the process before
			// it wrote anything.
			if extra := leftovers(t, dir); extra != nil {
				t.Fatalf("%v at start left %v", s.sig, extra)
			}
		case crashed(stderr):
			t.Fatalf("%v at a random moment: crashed:\n%s", s.sig, stderr)
		case code == s.code:
			interrupted++
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "interrupted") {
				t.Errorf("%v: stderr is not one line: %q", s.sig, stderr)
			}
			if extra := leftovers(t, dir, out); extra != nil {
				t.Fatalf("%v during convert to %s left %v", s.sig, out, extra)
			}
			// The signal came after the output was renamed into place: it is complete.
			if _, err := os.Stat(filepath.Join(dir, out)); err == nil {
				if _, stderr, code := run(t, "validate", filepath.Join(dir, out)); code != 0 {
					t.Fatalf("output left by an interrupted conversion is invalid: %s", stderr)
				}
				os.Remove(filepath.Join(dir, out))
			}
		case code == 0:
			// Finished before the signal: the output is complete.
			if _, stderr, code := run(t, "validate", filepath.Join(dir, out)); code != 0 {
				t.Fatalf("output finished before %v is invalid: %s", s.sig, stderr)
			}
			if extra := leftovers(t, dir, out); extra != nil {
				t.Fatalf("left %v", extra)
			}
			os.Remove(filepath.Join(dir, out))
		default:
			t.Fatalf("%v: exit %d, want %d: %s", s.sig, code, s.code, stderr)
		}
	}
	if interrupted == 0 {
		t.Error("no run was interrupted: the conversions are too fast for this test")
	}
	// nohup: a SIGHUP ignored at the start stays ignored.
	cmd := exec.Command("nohup", bin, "convert", "-q", images, filepath.Join(dir, "nohup.idx"))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err == nil {
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGHUP)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("nohup mlfeed convert after SIGHUP: exit %d, want 0", code)
		}
		if st, err := os.Stat(filepath.Join(dir, "nohup.idx")); err != nil || st.Size() != 47040016 {
			t.Errorf("nohup mlfeed convert after SIGHUP: output %v", err)
		}
	}
	// demo's temporary directory goes too.
	tmp := t.TempDir()
	cmd = exec.Command(bin, "demo", "-n", "3000")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Start()
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 && code != 0 {
		t.Errorf("demo after SIGTERM: exit %d", code)
	}
	if extra := leftovers(t, tmp); extra != nil {
		t.Errorf("interrupted demo left %v", extra)
	}
}

// TestFaultKilledRunCleanedUp: a kill -9 leaves a temporary file, which is not taken for output and
// is removed by the next conversion to the same output.
func TestFaultKilledRunCleanedUp(t *testing.T) {
	images := mnist(t, "train-images-idx3-ubyte.gz")
	dir := t.TempDir()
	out := filepath.Join(dir, "o.idx.gz")
	var stale []string
	for try := 0; try < 5 && stale == nil; try++ {
		cmd := exec.Command(bin, "convert", "-q", images, out)
		cmd.Start()
		time.Sleep(time.Duration(200+100*try) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		stale = leftovers(t, dir)
	}
	if stale == nil {
		t.Skip("the conversion never got far enough to leave a temporary file")
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a killed conversion left its output")
	}
	for _, n := range stale {
		if !strings.HasPrefix(n, ".o.idx.gz.mlfeed-tmp-") {
			t.Fatalf("unrecognisable temporary file %q", n)
		}
	}
	if _, stderr, code := run(t, "convert", "-q", mnist(t, "t10k-labels-idx1-ubyte.gz"), out); code != 0 {
		t.Fatal(stderr)
	}
	if extra := leftovers(t, dir, "o.idx.gz"); extra != nil {
		t.Errorf("stale temporary files kept: %v", extra)
	}
}

// TestFaultDiskFullAndFileSizeLimit: ENOSPC (a 1 MiB tmpfs, when this runs as root and may mount)
// and EFBIG (RLIMIT_FSIZE) end with exit 1, a message naming the output and the cause, and
// nothing left.
func TestFaultDiskFullAndFileSizeLimit(t *testing.T) {
	images := mnist(t, "t10k-images-idx3-ubyte.gz")
	check := func(name, dir, out, cause string, stderr string, code int) {
		t.Helper()
		if code != 1 || !strings.Contains(stderr, out) || !strings.Contains(strings.ToLower(stderr), cause) || strings.Contains(stderr, "mlfeed-tmp") || crashed(stderr) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming %s and %q", name, code, stderr, out, cause)
		}
		if extra := leftovers(t, dir); extra != nil {
			t.Errorf("%s left %v", name, extra)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "o.cbf")
	cmd := exec.Command("sh", "-c", `ulimit -f 2000 && exec "$@"`, "sh", bin, "convert", "-q", images, out, "--type", "float32")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Run()
	check("RLIMIT_FSIZE", dir, out, "file too large", errb.String(), cmd.ProcessState.ExitCode())

	mnt, err := tmpfs.Mount(t, "1m")
	if err != nil {
		t.Logf("ENOSPC case skipped: %v", err)
		return
	}
	outs := []string{"o.cbf", "o.idx", "o.ctf", "o.idv", "o.bsp.npz", "o.bsp.h5", "o.h5"}
	for _, o := range outs {
		out := filepath.Join(mnt, o)
		_, stderr, code := run(t, "convert", "-q", images, out, "--type", "float32")
		check("ENOSPC "+o, mnt, out, "no space left on device", stderr, code)
	}
	// Shards: the message names the shard, not its temporary file, and the directory the
	// conversion made goes.
	shards := filepath.Join(mnt, "shards")
	_, stderr, code := run(t, "convert", "-q", "--shards", "3", "--to", "cbf", images, shards, "--type", "float32")
	check("ENOSPC shards", mnt, filepath.Join(shards, "part-0000"), "no space left on device", stderr, code)
	// The demo: the directories it made for --dir go too.
	_, stderr, code = run(t, "demo", "--dir", filepath.Join(mnt, "demo", "out"))
	check("ENOSPC demo", mnt, filepath.Join(mnt, "demo", "out", "demo-images-idx3-ubyte"), "no space left on device", stderr, code)
}

// TestFaultInputTruncatedWhileRead shrinks mapped and read inputs while cat, convert and batches
// read them: an error naming the file, or (when the read was over first) a complete result;
// never a fault or a panic.
func TestFaultInputTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src-idx3-ubyte")
	if _, stderr, code := run(t, "convert", "-q", mnist(t, "t10k-images-idx3-ubyte.gz"), src); code != 0 {
		t.Fatal(stderr)
	}
	// Small chunks, so that reading goes on after the first output.
	for _, ext := range []string{".cbf", ".ctf"} {
		if _, stderr, code := run(t, "convert", "-q", src, filepath.Join(dir, "src"+ext), "--type", "float32", "--chunk-size", "65536"); code != 0 {
			t.Fatal(stderr)
		}
	}
	inputs := []string{"src-idx3-ubyte", "src.cbf", "src.ctf"}
	commands := [][]string{{"cat", "--json"}, {"convert", "-q", "--to", "ctf", "-", "NAME"}, {"batches", "--dump", "--mb-size", "7"}}
	failed := map[string]int{}
	for _, in := range inputs {
		orig, _ := os.ReadFile(filepath.Join(dir, in))
		for _, c := range commands {
			name := filepath.Join(dir, "reading-"+in)
			os.WriteFile(name, orig, 0o644)
			args := append([]string{}, c...)
			if args[0] == "convert" {
				args = args[:len(args)-1]
				args[len(args)-1], args = name, append(args, "-")
			} else {
				args = append(args, name)
			}
			if strings.HasSuffix(in, ".ctf") {
				args = append(args, "--input", "features:dense:784", "--opt", "chunkSizeInBytes=65536")
			}
			cmd := exec.Command(bin, args...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read a little of the output (the command has started reading), shrink the
			// file, read the rest.
			head := make([]byte, 1<<16)
			io.ReadFull(stdout, head)
			if err := os.Truncate(name, int64(len(orig)/10)); err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, stdout)
			cmd.Wait()
			code, stderr := cmd.ProcessState.ExitCode(), errb.String()
			what := fmt.Sprintf("%s on %s truncated while read", c[0], in)
			switch {
			case crashed(stderr):
				t.Errorf("%s crashed:\n%s", what, stderr)
			case code == 1:
				failed[in]++
				if !strings.Contains(stderr, name) {
					t.Errorf("%s: message does not name the file: %s", what, stderr)
				}
				t.Logf("%s: %s", what, strings.TrimSpace(stderr))
			case code == 0:
				// The data was read (copied) before the truncation.
			default:
				t.Errorf("%s: exit %d: %s", what, code, stderr)
			}
		}
	}
	for _, in := range inputs {
		if failed[in] == 0 {
			t.Errorf("no read of %s noticed the truncation: the test did not exercise it", in)
		}
	}
}

// absurd are values that no flag should take without a clear answer.
var absurd = []string{"-1", "0", "-9223372036854775808", "9223372036854775807", "1e309", "", "\x01",
	strings.Repeat("9", 400), "-"}

// TestFaultAbsurdFlagValues gives every flag of every command absurd values: the answer is exit 0,
// 1 or 2 within the time limit, never a panic, a trace or a kill for memory.
func TestFaultAbsurdFlagValues(t *testing.T) {
	labels := mnist(t, "t10k-labels-idx1-ubyte.gz")
	images := mnist(t, "t10k-images-idx3-ubyte.gz")
	dir := t.TempDir()
	base := map[string][]string{
		"info":     {labels},
		"cat":      {"-n", "2", labels},
		"show":     {"-n", "1", images, labels},
		"convert":  {labels, filepath.Join(dir, "o.cbf"), "--type", "float32", "-q"},
		"validate": {labels},
		"batches":  {"--max-samples", "100", labels},
		"demo":     {"-n", "20"},
		"formats":  nil,
		"version":  nil,
	}
	// Flags whose large values legitimately mean long work (a sweep count) keep small ones.
	long := map[string]bool{"batches --sweeps": true, "batches --max-samples": true, "batches --after": true,
		"demo --records": true}
	// Exact answers for the cases the issue names.
	exact := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"show", "--png", filepath.Join(dir, "g.png"), "--scale", "100000", images}, 2, "--scale"},
		{[]string{"show", "--png", filepath.Join(dir, "g.png"), "-n", "0", images}, 2, "-n"},
		{[]string{"show", "--png", filepath.Join(dir, "g.png"), "--cols", "1000", "--scale", "64", images}, 2, "limit"},
		{[]string{"demo", "-n", "2000000000"}, 2, "-n"},
		{[]string{"cat", "-n", "-5", labels}, 2, "-n"},
		{[]string{"convert", "--compress", "bogus", labels, filepath.Join(dir, "o.idx")}, 2, "--compress"},
		{[]string{"convert", "--compress", "gzip", labels, filepath.Join(dir, "o.ctf"), "--type", "float32"}, 2, "compression"},
		{[]string{"convert", "--chunk-size", "-1", labels, filepath.Join(dir, "o.cbf")}, 2, "--chunk-size"},
		{[]string{"batches", "--packers", "2000000000", labels}, 2, "--packers"},
		{[]string{"batches", "--workers", "3", "--rank", "5", labels}, 2, "--rank"},
		{[]string{"validate", "--max", "0", labels}, 2, "--max"},
		{[]string{"validate", labels, filepath.Join(dir, "missing"), images}, 1, "1 of 3"},
	}
	for _, c := range exact {
		_, stderr, code := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("mlfeed %q: exit %d, stderr %q; want %d mentioning %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	runs := 0
	for _, cmd := range rootCmd.Commands() {
		args, ok := base[cmd.Name()]
		if !ok {
			continue
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			values := absurd
			if f.Value.Type() == "bool" {
				values = []string{"maybe", "2", ""}
			}
			for _, v := range values {
				if long[cmd.Name()+" --"+f.Name] && len(v) > 2 && v[0] != '-' {
					continue
				}
				argv := append([]string{cmd.Name(), "--" + f.Name + "=" + v}, args...)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				c := exec.CommandContext(ctx, bin, argv...)
				c.Dir = dir
				var errb bytes.Buffer
				c.Stderr = &errb
				c.Stdout = io.Discard
				err := c.Run()
				timedOut := ctx.Err() != nil
				cancel()
				runs++
				code := c.ProcessState.ExitCode()
				switch {
				case timedOut:
					t.Errorf("mlfeed %q: still running after 60s", argv)
				case crashed(errb.String()):
					t.Errorf("mlfeed %q crashed:\n%s", argv, errb.String())
				case code < 0 || code > 2:
					t.Errorf("mlfeed %q: exit %d (%v): %s", argv, code, err, errb.String())
				}
			}
		})
	}
	t.Logf("%d runs with absurd flag values", runs)
	if extra := leftovers(t, dir, "o.cbf", "g.png"); len(extra) > 0 {
		for _, e := range extra {
			if strings.Contains(e, "mlfeed-tmp") {
				t.Errorf("left %s", e)
			}
		}
	}
}

// TestFaultFloat64ThroughCTF: float64 IDX -> CTF -> IDX comes back bit for bit (the CTF reader
// infers double precision), and a declared float32 stream that cannot hold the values fails
// naming line:column, never rounding them silently.
func TestFaultFloat64ThroughCTF(t *testing.T) {
	dir := t.TempDir()
	vals := []float64{1e-300, 0.1, math.Pi, -2.5e300, 5e-324, 1.0 / 3}
	b := []byte{0, 0, 0x0e, 2, 0, 0, 0, 3, 0, 0, 0, 2}
	for _, v := range vals {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	in, ctf, back := filepath.Join(dir, "in.idx"), filepath.Join(dir, "mid.ctf"), filepath.Join(dir, "back.idx")
	os.WriteFile(in, b, 0o644)
	for _, args := range [][]string{{"convert", in, ctf}, {"convert", ctf, back}} {
		if _, stderr, code := run(t, args...); code != 0 {
			t.Fatalf("mlfeed %v: exit %d: %s", args, code, stderr)
		}
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, b) {
		t.Errorf("float64 IDX -> CTF -> IDX changed the file")
	}
	_, stderr, code := run(t, "convert", ctf, filepath.Join(dir, "f32.idx"), "--input", "features:dense:2")
	if code != 1 || !strings.Contains(stderr, ctf+":1:") {
		t.Errorf("declared float32: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "f32.idx")); err == nil {
		t.Error("a failed conversion left its output")
	}
}
