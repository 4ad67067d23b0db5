//go:build cgo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// concurrentData writes a CBF file of n sequences of one dense float32 sample of dim 8 and a
// label, in chunks of about 4 KiB (so that reads span chunks of the mapping), through the
// ABI's convert, and returns its path.
func concurrentData(t *testing.T, n int) string {
	dir := t.TempDir()
	var text strings.Builder
	for q := range n {
		fmt.Fprintf(&text, "%d |x", q)
		for k := range 8 {
			fmt.Fprintf(&text, " %d.25", q*8+k)
		}
		fmt.Fprintf(&text, " |y %d\n", q%10)
	}
	in, out := filepath.Join(dir, "in.ctf"), filepath.Join(dir, "data.cbf")
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:8", "y:dense:1"},
		"output": out, "to": "cbf", "chunk_size": 4096})
	if _, err := run(context.Background(), "convert", a); err != nil {
		t.Fatal(err)
	}
	return out
}

// The C ABI under the Python package's threads, in Go and under -race (scripts/test.sh):
// reads of one data set from several goroutines give what one reader alone gets; a close
// while others read makes their later calls fail as usage errors, never a panic or a fault,
// and one while a minibatch source reads the data set waits for the source to be freed; and
// two goroutines asking one minibatch source for minibatches share one sweep, every
// sequence delivered once.
func TestConcurrentABI(t *testing.T) {
	const n = 2000
	path := concurrentData(t, n)
	open := func() uint64 {
		var opened struct {
			Handle uint64 `json:"handle"`
		}
		if !abiCall(t, path, "open", map[string]any{"paths": []string{path}}, &opened) {
			t.Fatal("open failed")
		}
		return opened.Handle
	}

	t.Run("reads", func(t *testing.T) {
		h := open()
		defer freeHandle(h)
		ranges := [][2]int64{{0, n}, {0, 1}, {17, 1033}, {999, 1001}, {1500, n}}
		want := make([][][]byte, len(ranges))
		for i, r := range ranges {
			var ok bool
			if want[i], ok = abiRead(t, path, h, r[0], r[1]); !ok || want[i] == nil {
				t.Fatalf("read %v failed", r)
			}
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 25 {
					i := (g + k) % len(ranges)
					got, ok := abiRead(t, path, h, ranges[i][0], ranges[i][1])
					if !ok {
						t.Errorf("read %v failed beside other reads", ranges[i])
						return
					}
					for j := range got {
						if !bytes.Equal(got[j], want[i][j]) {
							t.Errorf("read %v, buffer %d: differs from the read alone", ranges[i], j)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
	})

	t.Run("close while reading", func(t *testing.T) {
		h := open()
		defer freeHandle(h)
		var reads atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if _, ok := abiRead(t, path, h, 0, n); !ok {
						return // closed: a usage error (abiCall fails t on any other kind)
					}
					reads.Add(1)
				}
			}()
		}
		for reads.Load() < 8 {
			runtime.Gosched()
		}
		if !abiCall(t, path, "close", map[string]any{"dataset": h}, nil) {
			t.Fatal("close failed")
		}
		wg.Wait()
		if abiCall(t, path, "read", map[string]any{"dataset": h, "start": 0, "stop": 1}, nil) {
			t.Fatal("a read after close succeeded")
		}
	})

	t.Run("close with a source open", func(t *testing.T) {
		h := open()
		defer freeHandle(h)
		src, nstreams := abiSource(t, path, h, 100)
		if !abiCall(t, path, "close", map[string]any{"dataset": h}, nil) {
			t.Fatal("close failed")
		}
		if abiCall(t, path, "read", map[string]any{"dataset": h, "start": 0, "stop": 1}, nil) {
			t.Fatal("a read after close succeeded")
		}
		ds, err := value[*openDataset](uintptr(h))
		if err != nil {
			t.Fatal(err)
		}
		if seqs := sweep(t, path, src, nstreams); seqs != n || ds.closed {
			t.Fatalf("a sweep of %d sequences after close, data set closed %v", seqs, ds.closed)
		}
		freeHandle(src)
		if !ds.closed {
			t.Fatal("the data set stayed open once its last source was freed")
		}
	})

	t.Run("one source, two goroutines", func(t *testing.T) {
		h := open()
		defer freeHandle(h)
		src, nstreams := abiSource(t, path, h, 37)
		defer freeHandle(src)
		var seqs atomic.Int64
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				seqs.Add(sweep(t, path, src, nstreams))
			}()
		}
		wg.Wait()
		if seqs.Load() != n {
			t.Fatalf("two goroutines got %d sequences of a sweep of %d", seqs.Load(), n)
		}
	})
}

// abiSource starts a minibatch source of one unrandomized sweep of data set h in minibatches
// of mbSize samples and returns its handle and stream count.
func abiSource(t *testing.T, path string, h uint64, mbSize int) (uint64, int) {
	var src struct {
		Handle  uint64 `json:"handle"`
		Streams []any  `json:"streams"`
	}
	if !abiCall(t, path, "source", map[string]any{"dataset": h, "minibatch_size": mbSize, "randomize": false,
		"max_sweeps": 1}, &src) {
		t.Fatal("source failed")
	}
	return src.Handle, len(src.Streams)
}

// sweep takes minibatches from source h until the end and returns the sequences they held;
// an error (checkABIError: a usage error is no failure) ends it.
func sweep(t *testing.T, path string, h uint64, nstreams int) int64 {
	meta := make([]int64, metaLen+sizesHeader+sizesPerStream*nstreams)
	var seqs int64
	for {
		rc, err := sourceNext(uintptr(h), false, -1, meta)
		if err != nil {
			checkABIError(t, path, "next", err)
			return seqs
		}
		if rc == 0 {
			return seqs
		}
		seqs += meta[1]
	}
}
