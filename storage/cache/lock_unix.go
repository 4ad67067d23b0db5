//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cache

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// How a lock is held.
const (
	shared    = syscall.LOCK_SH
	exclusive = syscall.LOCK_EX
)

func supported() error { return nil }

// tryLock takes the lock file path (created if need be) as how says, without waiting: nil
// (and no error) when another process holds it in a way that conflicts. The lock returned is
// on the file the path names now: one removed while the lock was being taken (by the process
// that removed its object) is not returned.
func tryLock(path string, how int) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, how|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, nil
			}
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if same(f, path) {
			return f, nil
		}
		f.Close() // removed meanwhile: lock the new one
	}
	return nil, nil
}

// tryLockFile takes the lock of an existing file, without waiting: nil when another process
// holds it.
func tryLockFile(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := flock(f, how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return f, nil
}

// lockWait takes the lock file path exclusively, waiting for it (the cache's own lock, held
// briefly) until ctx is done.
func lockWait(ctx context.Context, path string) (*os.File, error) {
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		l, err := tryLock(path, exclusive)
		if err != nil || l != nil {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// lockFD takes the lock of an open file, without waiting.
func lockFD(f *os.File, how int) error {
	if err := flock(f, how|syscall.LOCK_NB); err != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return nil
}

// unlock releases a lock and closes its file.
func unlock(f *os.File) {
	flock(f, syscall.LOCK_UN)
	f.Close()
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// same reports whether the open file f is the one path names.
func same(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}
