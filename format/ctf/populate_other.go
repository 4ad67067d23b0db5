//go:build !linux

package ctf

import "sync/atomic"

// populate does nothing where MADV_POPULATE_READ does not exist.
func (r *Reader) populate(off, end int64) {}

// prefault does nothing where MADV_POPULATE_READ does not exist.
func (r *Reader) prefault(done *atomic.Int64) (stop func()) { return func() {} }
