// Package atomicfile writes a file so that it appears complete or not at all: data goes to a
// temporary file in the target's directory, which Commit syncs and renames over the target
// and Abort removes.
//
// It never renames over something that is not a regular file: a character device
// (/dev/null) or a FIFO is written into directly (Direct reports it), and a directory, a
// socket or a block device is refused with an error wrapping ErrNotRegular. A symbolic link is
// followed: its target is replaced, atomically, in the target's directory, and the link stays.
// New files get mode 0666 minus the umask; an existing file keeps its mode.
//
// Temporary files are named ".NAME.mlfeed-tmp-HOST-PID-RANDOM" so that they are never taken
// for output. Create removes those of the same target left by processes of this host that no
// longer run (a kill -9), and Cleanup removes every temporary file of this process (signal
// handlers call it before exiting).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrNotRegular is wrapped by Create's error for a target that cannot be written: a directory,
// a socket or a block device.
var ErrNotRegular = errors.New("not a regular file")

// ErrClosed is returned by Create after Cleanup: the process is exiting.
var ErrClosed = errors.New("atomicfile: exiting, no new output")

// tmpMark separates a temporary file's target name from its process id and random part.
const tmpMark = ".mlfeed-tmp-"

// File is a temporary file that becomes the target on Commit, or the target itself when it is
// a device or a FIFO (Direct).
type File struct {
	*os.File
	target string // the name the caller gave
	final  string // the file replaced: target with symbolic links followed
	direct bool
	stdout bool
	mode   fs.FileMode
	done   bool
}

var (
	mu      sync.Mutex
	live    = map[*File]bool{}
	dirs    = map[string]bool{}
	exiting bool
	// stale holds, per directory scanned, the stale temporary files of each target name.
	stale = map[string]map[string][]string{}
)

// host names this machine in temporary names: a process id means something only on its host
// (tasks on several machines may write into one shared directory).
var host = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, h)
})

// Create returns a file to write target through. It wraps ErrNotRegular for a directory, a
// socket or a block device. Errors name target, never the temporary file.
func Create(target string) (*File, error) {
	final, err := resolve(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	mode := fs.FileMode(0o666) &^ umask()
	if st, err := os.Stat(final); err == nil {
		switch m := st.Mode(); {
		case m.IsRegular():
			mode = m.Perm()
		case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
			return createDirect(target)
		case m.IsDir():
			return nil, fmt.Errorf("%s: %w: it is a directory", target, ErrNotRegular)
		case m&fs.ModeSocket != 0:
			return nil, fmt.Errorf("%s: %w: it is a socket", target, ErrNotRegular)
		default:
			return nil, fmt.Errorf("%s: %w: it is a %v", target, ErrNotRegular, m.Type())
		}
	}
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	mu.Lock()
	defer mu.Unlock()
	if exiting {
		return nil, fmt.Errorf("%s: %w", target, ErrClosed)
	}
	f, err := os.CreateTemp(dir, "."+base+tmpMark+host()+"-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, unwrapPath(err))
	}
	af := &File{File: f, target: target, final: final, mode: mode}
	live[af] = true
	return af, nil
}

func createDirect(target string) (*File, error) {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return nil, err // names target
	}
	return &File{File: f, target: target, final: target, direct: true}, nil
}

// Stdout returns a File that writes to standard output directly; Commit and Abort do not
// close it.
func Stdout() *File {
	return &File{File: os.Stdout, target: "standard output", final: os.Stdout.Name(), direct: true, stdout: true}
}

// Direct reports whether the target is a device or a FIFO written into directly: what is
// written cannot be taken back, and the writer cannot seek.
func (f *File) Direct() bool { return f.direct }

// Target returns the name Create was given.
func (f *File) Target() string { return f.target }

// Err returns err with the temporary file's name replaced by the target's, keeping what it
// wraps; nil stays nil. Libraries that write through the file report the name they see.
func (f *File) Err(err error) error {
	if err == nil || f.direct || !strings.Contains(err.Error(), f.Name()) {
		return err
	}
	return renamed{err, f.Name(), f.target}
}

type renamed struct {
	error
	from, to string
}

func (r renamed) Error() string { return strings.ReplaceAll(r.error.Error(), r.from, r.to) }
func (r renamed) Unwrap() error { return r.error }

// Commit flushes the file to disk, closes it, gives it its mode and renames it to the target.
// After a failed Commit the temporary file is removed. For a direct file it only closes.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: %w", f.target, os.ErrClosed)
	}
	f.done = true
	if f.stdout {
		return nil
	}
	if f.direct {
		return f.File.Close()
	}
	err := f.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), f.mode)
	}
	mu.Lock()
	defer mu.Unlock()
	delete(live, f)
	if err == nil && exiting {
		err = ErrClosed
	}
	if err == nil {
		err = os.Rename(f.Name(), f.final)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", f.target, unwrapPath(err))
	}
	return nil
}

// Abort closes and removes the temporary file. It does nothing after Commit or Abort, so it
// can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.stdout {
		return
	}
	f.File.Close()
	if f.direct {
		return
	}
	mu.Lock()
	delete(live, f)
	mu.Unlock()
	os.Remove(f.Name())
}

// Cleanup removes every temporary file and directory of this process and makes later Create and Commit
// calls fail, so that nothing appears after it returns: the last thing a program does when a
// signal ends it. The files are only removed, not closed.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	exiting = true
	for f := range live {
		os.Remove(f.Name())
	}
	clear(live)
	for d := range dirs {
		os.RemoveAll(d)
	}
	clear(dirs)
}

// MkdirTemp creates a temporary directory as os.MkdirTemp does, which Cleanup removes with
// everything in it; remove removes it now.
func MkdirTemp(pattern string) (dir string, remove func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	if exiting {
		return "", nil, ErrClosed
	}
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return "", nil, err
	}
	dirs[dir] = true
	return dir, func() {
		mu.Lock()
		defer mu.Unlock()
		if dirs[dir] {
			delete(dirs, dir)
			os.RemoveAll(dir)
		}
	}, nil
}

// IsTemp reports whether name (a base name) is one of this package's temporary files.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMark)
}

// resolve follows symbolic links at the end of name, also dangling ones, as cp does.
func resolve(name string) (string, error) {
	for range 40 {
		st, err := os.Lstat(name)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		link, err := os.Readlink(name)
		if err != nil {
			return "", unwrapPath(err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(name), link)
		}
		name = link
	}
	return "", errors.New("too many levels of symbolic links")
}

// removeStale removes the temporary files of base in dir that processes of this host that no
// longer run left. Each directory is read once per process (outputs may be many shards).
func removeStale(dir, base string) {
	mu.Lock()
	m, ok := stale[dir]
	if !ok {
		m = scanStale(dir)
		stale[dir] = m
	}
	names := m[base]
	delete(m, base)
	mu.Unlock()
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
}

// scanStale returns the stale temporary files in dir by target name.
func scanStale(dir string) map[string][]string {
	m := map[string][]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return m
	}
	for _, e := range ents {
		n := e.Name()
		i := strings.LastIndex(n, tmpMark)
		if !IsTemp(n) || i < 1 {
			continue
		}
		// HOST-PID-RANDOM, the host possibly with dashes of its own.
		rest := n[i+len(tmpMark):]
		j := strings.LastIndexByte(rest, '-')
		if j < 0 {
			continue
		}
		k := strings.LastIndexByte(rest[:j], '-')
		if k < 0 || rest[:k] != host() {
			continue
		}
		pid, err := strconv.Atoi(rest[k+1 : j])
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		m[n[1:i]] = append(m[n[1:i]], n)
	}
	return m
}

// unwrapPath drops an *fs.PathError's path (a temporary name) and keeps its operation.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
