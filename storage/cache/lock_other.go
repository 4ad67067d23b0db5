//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
)

const (
	shared    = 1
	exclusive = 2
)

var errNoFlock = fmt.Errorf("the node cache needs flock(2) (Linux, macOS, the BSDs): %w", errors.ErrUnsupported)

func supported() error { return errNoFlock }

func tryLock(path string, how int) (*os.File, error)     { return nil, errNoFlock }
func tryLockFile(path string, how int) (*os.File, error) { return nil, errNoFlock }
func lockWait(ctx context.Context, path string) (*os.File, error) {
	return nil, errNoFlock
}
func lockFD(f *os.File, how int) error { return errNoFlock }
func unlock(f *os.File)                {}
