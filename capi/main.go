// Command capi is mlfeed's C ABI: the shared library that the Python package (python/mlfeed)
// loads with ctypes. Build it with
//
//	go build -buildmode=c-shared -o python/mlfeed/libmlfeed.so ./capi
//
// (scripts/python.sh does). The ABI is small and keeps to cgo's pointer rules:
//
//   - Objects (data sets, minibatch sources, running operations, read results) are opaque
//     handles (runtime/cgo.Handle values); mlfeed_free releases one and stops its goroutines.
//   - Arguments travel as JSON text owned by the caller; results come back as JSON text
//     copied into a buffer the caller owns (mlfeed_result returns the length it needs, so a
//     caller with too small a buffer calls again with a bigger one).
//   - Data lives in buffers the caller allocated and passes in: a read result is copied into
//     them (mlfeed_fill), and the minibatch engine's packers write minibatches straight into
//     them (mlfeed_source_fill, minibatch.Batch.SetMemory). No Go memory is ever handed out.
//   - Errors fill a caller-owned mlfeed_error: a kind, the message, and the file and position
//     of a data error (mlfeed.PosError, cntkconfig.Error).
//   - Every entry point recovers from panics and reports them as errors: nothing the data or
//     the caller does can crash the host process.
//   - Any call may come from any thread, at once: an open data set's close waits for the
//     calls reading it (openDataset), later calls are usage errors, and minibatch sources
//     over it keep it open until they are freed.
//   - Long operations (open, info, validate, convert, read, the next minibatch) run on
//     goroutines; the caller polls with a timeout (mlfeed_wait, mlfeed_next) so that it can
//     handle signals between polls, and mlfeed_cancel cancels the operation's context. A
//     minibatch the engine's packers have ready is handed over on the caller's thread
//     (minibatch.Reader.Ready): only a wait for the packers, itself bounded by the timeout.
package main

/*
#include "abi.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/minibatch"
	_ "github.com/mlfeed/mlfeed/storage/all" // s3://, gs://, azblob://
)

func main() {}

// abiVersion changes whenever an entry point, a layout or the set of operations the Python
// package calls changes incompatibly; the Python package refuses a library of another
// version. 4: the "close" operation.
const abiVersion = 4

// Error kinds, as the Python package maps them to exception classes.
const (
	kindNone     = 0
	kindData     = 1 // invalid or unreadable data: mlfeed.FormatError
	kindUsage    = 2 // wrong usage or unsupported (the CLI's exit status 2): mlfeed.UsageError
	kindCanceled = 3 // the operation was canceled
	kindInternal = 4 // a panic: a bug in mlfeed
	kindNotFound = 5 // a file does not exist
	kindIO       = 6 // another operating-system error
)

// errPanic is wrapped by the errors that recovered panics become.
var errPanic = errors.New("internal error")

// recovered turns a recovered panic value into an error.
func recovered(v any) error {
	return fmt.Errorf("mlfeed: %w: %v\n%s", errPanic, v, debug.Stack())
}

func kindOf(err error) int32 {
	var pe *fs.PathError
	switch {
	case err == nil:
		return kindNone
	case errors.Is(err, context.Canceled):
		return kindCanceled
	case errors.Is(err, errPanic):
		return kindInternal
	case errors.Is(err, format.ErrUsage), errors.Is(err, mlfeed.ErrUnknownFormat),
		errors.Is(err, mlfeed.ErrUnsupported), // as the CLI: exit status 2
		errors.Is(err, minibatch.ErrConfig), errors.Is(err, minibatch.ErrState),
		errors.Is(err, cntkconfig.ErrUnsupported):
		return kindUsage
	case errors.Is(err, fs.ErrNotExist):
		return kindNotFound
	case errors.As(err, &pe):
		return kindIO
	}
	return kindData
}

// setError fills e from err (e may be nil).
func setError(e *C.mlfeed_error, err error) {
	if e == nil {
		return
	}
	*e = C.mlfeed_error{kind: C.int32_t(kindOf(err)), offset: -1}
	if err == nil {
		return
	}
	var pe *mlfeed.PosError
	var ce *cntkconfig.Error
	var path *fs.PathError
	switch {
	case errors.As(err, &pe):
		cstr(e.file[:], pe.File)
		cstr(e.field[:], pe.Field)
		e.line, e.column, e.offset = C.int64_t(pe.Line), C.int64_t(pe.Column), C.int64_t(pe.Offset)
		if pe.Line > 0 {
			e.offset = -1
		}
	case errors.As(err, &ce):
		cstr(e.file[:], ce.File)
		e.line = C.int64_t(ce.Line)
	case errors.As(err, &path):
		cstr(e.file[:], path.Path)
	}
	cstr(e.message[:], err.Error()+pythonHints(err))
}

// pythonHints names, in Python's words, the conversion that lets a writer take the data
// (format.Needs), as the CLI names its flags: "" when err marks none.
func pythonHints(err error) string {
	var h string
	for _, n := range []struct {
		remedy error
		words  string
	}{
		{format.ErrNeedsDense, "convert with densify=True to store sparse streams densely"},
		{format.ErrNeedsType, `convert with type="..." (e.g. "float32") to change the element type`},
		{format.ErrNeedsStreams, "choose the streams with streams=[...] (the others, or one output per stream)"},
	} {
		if errors.Is(err, n.remedy) {
			h += " (hint: " + n.words + ")"
		}
	}
	return h
}

// cstr copies s into the C array dst, truncated, NUL-terminated.
func cstr(dst []C.char, s string) {
	if len(dst) == 0 {
		return
	}
	n := min(len(s), len(dst)-1)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(dst))
	copy(b, s[:n])
	b[n] = 0
}

// value returns the object behind handle h, or an error for a handle that is not one of
// this library's.
func value[T any](h uintptr) (v T, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("%w: invalid handle %d", format.ErrUsage, uintptr(h))
		}
	}()
	if h == 0 {
		return v, fmt.Errorf("%w: invalid handle 0", format.ErrUsage)
	}
	x, ok := cgo.Handle(h).Value().(T)
	if !ok {
		return v, fmt.Errorf("%w: handle %d is a %T", format.ErrUsage, uintptr(h), cgo.Handle(h).Value())
	}
	return x, nil
}

// releaser is an object that a handle holds and mlfeed_free releases.
type releaser interface{ close() }

// job is an operation running on its own goroutine.
type job struct {
	done   chan struct{}
	cancel context.CancelFunc
	out    []byte // the result as JSON
	err    error
}

func (j *job) close() {
	j.cancel()
	<-j.done
}

// waitChan waits until c is closed or ms milliseconds have passed (ms < 0: forever).
func waitChan(c <-chan struct{}, ms int64) bool {
	if ms < 0 {
		<-c
		return true
	}
	select {
	case <-c:
		return true
	default:
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

//export mlfeed_abi_version
func mlfeed_abi_version() C.int64_t { return abiVersion }

// mlfeed_start starts operation op ("open", "info", "stats", "validate", "convert", "read",
// "source", "close", "merge", "cache_stats", "formats") with arguments args (JSON) and returns
// the handle of the running job.
//
//export mlfeed_start
func mlfeed_start(op, args *C.char) C.uintptr_t {
	name, a := C.GoString(op), []byte(C.GoString(args))
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(j.done)
		defer func() {
			if v := recover(); v != nil {
				j.out, j.err = nil, recovered(v)
			}
		}()
		j.out, j.err = guarded(ctx, name, a)
	}()
	return C.uintptr_t(cgo.NewHandle(j))
}

// guarded runs operation name as run does, on a goroutine whose faults on a mapped file
// (truncated underneath by another program) become errors naming the file: mmap.Catch applies
// to the goroutine that runs it, and the operations read chunks (which may alias a mapping)
// here.
func guarded(ctx context.Context, name string, args []byte) (out []byte, err error) {
	defer mmap.Recover(mmap.Catch(), &err)
	return run(ctx, name, args)
}

// mlfeed_wait waits up to timeout_ms milliseconds (negative: without limit) for job h to
// finish. It returns 1 when it has, 0 when it has not, -1 for an invalid handle.
//
//export mlfeed_wait
func mlfeed_wait(h C.uintptr_t, timeoutMS C.int64_t) (r C.int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	j, err := value[*job](uintptr(h))
	if err != nil {
		return -1
	}
	if waitChan(j.done, int64(timeoutMS)) {
		return 1
	}
	return 0
}

// mlfeed_cancel cancels job h; it finishes soon after with a canceled error.
//
//export mlfeed_cancel
func mlfeed_cancel(h C.uintptr_t) {
	defer func() { recover() }()
	if j, err := value[*job](uintptr(h)); err == nil {
		j.cancel()
	}
}

// mlfeed_result copies the result of the finished job h (JSON) into buf, when it holds cap
// bytes or more, and returns its length. It returns -1 with e filled when the job failed or
// has not finished.
//
//export mlfeed_result
func mlfeed_result(h C.uintptr_t, buf *C.char, capacity C.int64_t, e *C.mlfeed_error) (n C.int64_t) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			n = -1
		}
	}()
	j, err := value[*job](uintptr(h))
	if err == nil && !waitChan(j.done, 0) {
		err = fmt.Errorf("%w: the operation has not finished", format.ErrUsage)
	}
	if err == nil {
		err = j.err
	}
	if err != nil {
		setError(e, err)
		return -1
	}
	setError(e, nil)
	put(buf, capacity, j.out)
	return C.int64_t(len(j.out))
}

// put copies data into the caller's buffer buf of capacity bytes when it fits, and reports
// whether it did; the caller returns len(data) either way, so that a buffer too small is
// asked for again at that size.
func put(buf *C.char, capacity C.int64_t, data []byte) bool {
	if int64(len(data)) > int64(capacity) {
		return false
	}
	if len(data) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(data)), data)
	}
	return true
}

// mlfeed_free releases handle h: it cancels and waits for a job, closes a data set or a
// minibatch source (stopping its goroutines), and drops a read result.
//
//export mlfeed_free
func mlfeed_free(h C.uintptr_t) {
	defer func() { recover() }()
	c, err := value[releaser](uintptr(h))
	if err != nil {
		return
	}
	cgo.Handle(h).Delete()
	c.close()
}

// mlfeed_fill copies the data of read result or minibatch source h (its current minibatch)
// into the caller's buffers: ptrs holds, for the ids and then for each stream, the
// addresses laid out as described in data.go, each as large as mlfeed_next or mlfeed_sizes
// said. It returns 0, or -1 with e filled.
//
//export mlfeed_fill
func mlfeed_fill(h C.uintptr_t, ptrs *unsafe.Pointer, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	c, err := value[chunkHolder](uintptr(h))
	var parts []*mlfeed.Chunk
	if err == nil {
		parts, err = c.current()
	}
	if err == nil {
		err = fillMapped(parts, unsafe.Slice(ptrs, int(n)))
	}
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
}

// mlfeed_sizes writes the sizes of read result h into sizes (n entries; see data.go).
// It returns 0, or -1 with e filled.
//
//export mlfeed_sizes
func mlfeed_sizes(h C.uintptr_t, sizes *C.int64_t, n C.int64_t, e *C.mlfeed_error) (r C.int) {
	defer func() {
		if v := recover(); v != nil {
			setError(e, recovered(v))
			r = -1
		}
	}()
	c, err := value[chunkHolder](uintptr(h))
	var parts []*mlfeed.Chunk
	if err == nil {
		parts, err = c.current()
	}
	if err == nil {
		err = partsSizes(parts, unsafe.Slice((*int64)(unsafe.Pointer(sizes)), int(n)))
	}
	setError(e, err)
	if err != nil {
		return -1
	}
	return 0
}

// mlfeed_goroutines returns the number of goroutines the library runs: a test's way of seeing
// that closed and collected objects leave none behind.
//
//export mlfeed_goroutines
func mlfeed_goroutines() C.int64_t { return C.int64_t(runtime.NumGoroutine()) }
