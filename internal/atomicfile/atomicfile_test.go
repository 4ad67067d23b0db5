package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("target visible before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // a no-op after Commit
	if b, _ := os.ReadFile(target); string(b) != "partial" {
		t.Fatalf("target holds %q", b)
	}
	g, _ := Create(target)
	g.WriteString("replacement that fails")
	g.Abort()
	if b, _ := os.ReadFile(target); string(b) != "partial" {
		t.Fatal("Abort touched the target")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "sub", "real")
	os.Mkdir(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("old"), 0o640)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("sub/real", link); err != nil {
		t.Skip(err)
	}
	commit(t, link, "new")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	st, _ := os.Stat(real)
	if b, _ := os.ReadFile(real); string(b) != "new" || st.Mode().Perm() != 0o640 {
		t.Fatalf("target holds %q, mode %v", b, st.Mode())
	}
	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "sub", "created"), dangling)
	commit(t, dangling, "x")
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "created")); string(b) != "x" {
		t.Fatalf("dangling link's target holds %q", b)
	}
}

func commit(t *testing.T, target, data string) {
	t.Helper()
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.WriteString(data)
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestModeFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "new")
	commit(t, target, "x")
	st, _ := os.Stat(target)
	if want := os.FileMode(0o666) &^ umask(); st.Mode().Perm() != want {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), want)
	}
}

func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(dir); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("directory: %v", err)
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		f, err := Create("/dev/null")
		if err != nil || !f.Direct() {
			t.Fatalf("/dev/null: %v", err)
		}
		f.WriteString("discarded")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat("/dev/null"); st.Mode()&os.ModeCharDevice == 0 {
			t.Fatal("/dev/null replaced")
		}
	}
}

func TestStaleAndErrNames(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	// A temporary file of a process that cannot exist (pid beyond pid_max), one of a live
	// process (this one's parent) and an unrelated file.
	// Files of another host are kept: its process ids mean nothing here.
	h := tmpMark + host() + "-"
	stale := filepath.Join(dir, ".out"+h+"2147483647-123")
	alive := filepath.Join(dir, ".out"+h+strconv.Itoa(os.Getppid())+"-456")
	other := filepath.Join(dir, ".other"+h+"2147483647-1")
	remote := filepath.Join(dir, ".out"+tmpMark+"elsewhere-2147483647-1")
	for _, n := range []string{stale, alive, other, remote} {
		os.WriteFile(n, nil, 0o600)
	}
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if !IsTemp(filepath.Base(f.Name())) {
		t.Fatalf("temporary name %q not recognised", f.Name())
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("stale temporary file kept")
	}
	for _, n := range []string{alive, other, remote} {
		if _, err := os.Stat(n); err != nil {
			t.Fatalf("%s removed", n)
		}
	}
	_, werr := f.WriteAt([]byte("x"), -1)
	e := f.Err(werr)
	if e == nil || strings.Contains(e.Error(), tmpMark) || !strings.Contains(e.Error(), target) {
		t.Fatalf("error %v", e)
	}
}

func TestCleanup(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	Cleanup()
	defer func() { mu.Lock(); exiting = false; mu.Unlock() }()
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Cleanup succeeded")
	}
	if _, err := Create(filepath.Join(dir, "out2")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Create after Cleanup: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestMkdirTemp(t *testing.T) {
	dir, remove, err := MkdirTemp("atomicfile-test-*")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	remove()
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("directory kept")
	}
	dir, _, err = MkdirTemp("atomicfile-test-*")
	if err != nil {
		t.Fatal(err)
	}
	Cleanup()
	defer func() { mu.Lock(); exiting = false; mu.Unlock() }()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("Cleanup kept the directory")
	}
}
