//go:build cgo

package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
)

// warnLog collects the lines the formats log (format.Options.Log: CTF's rounding notices,
// HDF5's datasets left out, ...) for Python, which raises each as a warnings.warn
// (mlfeed.DataWarning). It is safe for concurrent use.
type warnLog struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

// maxWarnings bounds the lines kept between two takes: a format that logs per value cannot
// make the process hold them all.
const maxWarnings = 1000

func (w *warnLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.partial[:i])); line != "" && len(w.lines) < maxWarnings {
			w.lines = append(w.lines, line)
		}
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// take returns the lines logged since the last take.
func (w *warnLog) take() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.lines
	w.lines = nil
	return out
}

// peek returns the lines logged and not yet taken, leaving them.
func (w *warnLog) peek() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// drop removes the first n lines (those a peek returned).
func (w *warnLog) drop(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = w.lines[min(n, len(w.lines)):]
}

type logKey struct{}

// withLog returns ctx carrying the operation's log.
func withLog(ctx context.Context, w *warnLog) context.Context {
	return context.WithValue(ctx, logKey{}, w)
}

// logOf returns the log ctx carries (nil if none).
func logOf(ctx context.Context) *warnLog {
	w, _ := ctx.Value(logKey{}).(*warnLog)
	return w
}
