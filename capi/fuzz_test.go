//go:build cgo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/cgo"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/inspect"
)

// FuzzReadPath drives the C ABI's read path as the Python package does, on arbitrary bytes
// read as a file of one of the registered formats (format names one; a name that is not a
// format's picks one from its bytes): open (mlfeed.open), info, read of sequence ranges
// whose sizes and data cross into buffers allocated here (mlfeed_sizes, mlfeed_fill), a
// minibatch source over the open data set whose minibatches are packed into registered
// buffer sets (mlfeed_next, mlfeed_source_fill), and the release of every handle
// (mlfeed_free). mode picks the ranges read and the minibatch size.
//
// Whatever the bytes, every step either succeeds or fails with an error of a kind Python
// maps to an exception other than the one for a recovered panic (kindInternal); a data error
// names the file; and one unrandomized sweep of the minibatch source delivers every
// sequence once, with the same values as the reads.
func FuzzReadPath(f *testing.F) {
	seedReadPath(f)
	f.Fuzz(func(t *testing.T, data []byte, name string, mode uint8) {
		if len(data) > 1<<20 {
			return
		}
		ft := fuzzFormat(name, data)
		path := filepath.Join(t.TempDir(), "in"+ft.Ext())
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// A hang is a finding too: the fuzzer keeps the input of a worker that dies.
		watchdog := time.AfterFunc(fuzzHang, func() {
			buf := make([]byte, 1<<20)
			os.Stderr.Write(buf[:runtime.Stack(buf, true)])
			panic(fmt.Sprintf("the read path of %d bytes as %s took over %v", len(data), ft.Name, fuzzHang))
		})
		defer watchdog.Stop()
		fuzzABI(t, path, ft.Name, mode)
	})
}

// fuzzHang is the time one input may take, on a loaded machine, before it counts as a hang.
const fuzzHang = 60 * time.Second

// fuzzFormat returns the format called name, or, for a name that is none, one picked by a
// sum of data's first bytes (so that the fuzzer's mutations of the name still reach them all).
func fuzzFormat(name string, data []byte) *format.Format {
	if ft, ok := format.Lookup(name); ok && !ft.IsDir() {
		return ft
	}
	// The formats of one file (a directory format, MDS, has its own fuzz targets).
	var files []*format.Format
	for _, ft := range format.All() {
		if !ft.IsDir() {
			files = append(files, ft)
		}
	}
	sum := len(name)
	for _, b := range data[:min(len(data), 16)] {
		sum += int(b)
	}
	return files[sum%len(files)]
}

// abiCall runs operation op with arguments args as mlfeed_start does (guarded against
// faults on mapped files, panics recovered) and decodes the result's value into v. It
// fails t on an error of kind kindInternal, or a data error that does not name path.
func abiCall(t *testing.T, path, op string, args map[string]any, v any) bool {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, err := func() (out []byte, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = recovered(v)
			}
		}()
		return guarded(context.Background(), op, a)
	}()
	if err != nil {
		checkABIError(t, path, op, err)
		return false
	}
	res := struct {
		Value any `json:"value"`
	}{v}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: result %s: %v", op, out, err)
	}
	return true
}

// checkABIError fails t when err, returned by operation op on file path, is a recovered
// panic, or a data error that does not name path.
func checkABIError(t *testing.T, path, op string, err error) {
	t.Helper()
	switch k := kindOf(err); {
	case k == kindInternal:
		t.Fatalf("%s: %v", op, err)
	case k == kindData && !strings.Contains(err.Error(), path):
		t.Fatalf("%s: a data error that does not name the file %s: %v", op, path, err)
	}
}

// freeHandle releases handle h as mlfeed_free does.
func freeHandle(h uint64) {
	c, err := value[releaser](uintptr(h))
	if err != nil {
		return
	}
	cgo.Handle(h).Delete()
	c.close()
}

// fuzzBudget bounds the bytes one fuzz input may have crossing the ABI in each step, so that
// a small file of many rows (valid: a compressed column of constants) keeps the fuzzer fast.
const fuzzBudget = 16 << 20

// fuzzABI drives the read path on file path of format name.
func fuzzABI(t *testing.T, path, name string, mode uint8) {
	// With mode's high bit, validate (mlfeed.validate) first: a file it passes must read.
	valid := false
	if mode&0x80 != 0 {
		var problems []problem
		if abiCall(t, path, "validate", map[string]any{"paths": []string{path}, "format": name, "max": 10}, &problems) {
			for _, p := range problems {
				if p.Kind == kindInternal || p.Kind == kindData && !strings.Contains(p.File+p.Message, path) {
					t.Fatalf("validate: %+v", p)
				}
			}
			valid = len(problems) == 0
		}
	}
	var opened struct {
		Handle uint64       `json:"handle"`
		Info   inspect.Info `json:"info"`
	}
	if !abiCall(t, path, "open", map[string]any{"paths": []string{path}, "format": name}, &opened) {
		if valid {
			t.Fatal("validate passed a file that does not open")
		}
		return
	}
	defer freeHandle(opened.Handle)
	var info inspect.Info
	if !abiCall(t, path, "info", map[string]any{"dataset": opened.Handle, "chunks": true}, &info) {
		t.Fatal("info of an open data set failed")
	}
	if info.Sequences != opened.Info.Sequences || info.Chunks != len(info.ChunkList) {
		t.Fatalf("info %+v of the data set opened as %+v", info, opened.Info)
	}
	total := info.Sequences
	// Read [0, total) in pieces of step sequences (mode's low bits), all of it when it fits
	// the budget, else the first and last pieces.
	step := max(1, total/int64(1+mode%4))
	var got [][]byte // per buffer, the data read, joined
	complete := true
	for lo := int64(0); lo < total; lo += step {
		hi := min(total, lo+step)
		bufs, ok := abiRead(t, path, opened.Handle, lo, hi)
		if !ok {
			if valid {
				t.Fatalf("validate passed a file whose sequences [%d, %d) do not read", lo, hi)
			}
			return // an error (checked): the data set cannot be read further
		}
		if bufs == nil { // over the budget
			complete = false
			continue
		}
		if got == nil {
			got = make([][]byte, len(bufs))
		}
		for k := range bufs {
			got[k] = append(got[k], bufs[k]...)
		}
	}
	if total == 0 {
		if _, ok := abiRead(t, path, opened.Handle, 0, 0); !ok {
			t.Fatal("a read of no sequences failed")
		}
	}
	if complete && total > 0 && total <= 1<<16 {
		fuzzSource(t, path, opened.Handle, total, 1+int(mode>>2), got)
	}
}

// abiRead reads sequences [lo, hi) of data set h as Python's Dataset.read does, and returns
// the bytes each buffer received; nil buffers when they would take more than fuzzBudget, and
// false when the read failed (its error checked).
func abiRead(t *testing.T, path string, h uint64, lo, hi int64) ([][]byte, bool) {
	var read struct {
		Handle    uint64           `json:"handle"`
		Streams   []inspect.Stream `json:"streams"`
		Sequences int64            `json:"sequences"`
	}
	if !abiCall(t, path, "read", map[string]any{"dataset": h, "start": lo, "stop": hi}, &read) {
		return nil, false
	}
	defer freeHandle(read.Handle)
	if read.Sequences != hi-lo {
		t.Fatalf("read [%d, %d): %d sequences", lo, hi, read.Sequences)
	}
	r, err := value[chunkHolder](uintptr(read.Handle))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := r.current()
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int64, sizesHeader+sizesPerStream*len(read.Streams))
	if err := partsSizes(parts, sizes); err != nil {
		t.Fatalf("sizes: %v", err)
	}
	nb := byteSizes(nil, sizes, len(read.Streams))
	var sum int64
	for _, n := range nb {
		if n < 0 {
			t.Fatalf("sizes %v", sizes)
		}
		sum += n
	}
	if sum > fuzzBudget {
		return nil, true
	}
	bufs, ptrs := abiBuffers(nb)
	if err := fillMapped(parts, ptrs); err != nil {
		checkABIError(t, path, "fill", err)
		return nil, false
	}
	for i := range read.Streams {
		s := sizes[sizesHeader+sizesPerStream*i:]
		seq := unsafe.Slice((*int64)(ptrs[sizesHeader+sizesPerStream*i]), s[0])
		if s[0] != hi-lo+1 || !slices.IsSorted(seq) || seq[0] != 0 {
			t.Fatalf("read [%d, %d): stream %d's sequence offsets %v", lo, hi, i, seq)
		}
	}
	return bufs, true
}

// abiBuffers allocates 8-byte aligned buffers of sizes nb and returns them as bytes and as
// the addresses the ABI takes (nil for an empty one).
func abiBuffers(nb []int64) ([][]byte, []unsafe.Pointer) {
	bufs := make([][]byte, len(nb))
	ptrs := make([]unsafe.Pointer, len(nb))
	for k, n := range nb {
		if n > 0 {
			w := make([]uint64, (n+7)/8)
			ptrs[k] = unsafe.Pointer(&w[0])
			bufs[k] = unsafe.Slice((*byte)(ptrs[k]), n)
		}
	}
	return bufs, ptrs
}

// fuzzSource reads one unrandomized sweep of data set h (total sequences) through a minibatch
// source of minibatches of mbSize samples, and checks that it delivers every sequence once
// with the values the reads gave (got: the read buffers' bytes joined; nil when there were
// none to compare).
func fuzzSource(t *testing.T, path string, h uint64, total int64, mbSize int, got [][]byte) {
	var src struct {
		Handle  uint64           `json:"handle"`
		Streams []inspect.Stream `json:"streams"`
	}
	if !abiCall(t, path, "source", map[string]any{"dataset": h, "minibatch_size": mbSize, "randomize": false,
		"max_sweeps": 1, "threads": 1, "packers": 1}, &src) {
		return
	}
	defer freeHandle(src.Handle)
	nstreams := len(src.Streams)
	meta := make([]int64, metaLen+sizesHeader+sizesPerStream*nstreams)
	var sets [][][]byte
	var seqs int64
	vals := make([][]byte, nstreams)
	for mbs := 0; ; mbs++ {
		rc, err := sourceNext(uintptr(src.Handle), false, -1, meta)
		if err != nil {
			checkABIError(t, path, "next", err)
			return
		}
		if rc == 0 {
			break
		}
		if mbs > int(total)+1 {
			t.Fatalf("%d minibatches for %d sequences", mbs, total)
		}
		seqs += meta[1]
		k := int(meta[7])
		need := byteSizes(nil, meta[metaLen:], nstreams)
		if meta[9] == 0 {
			for len(sets) <= k {
				sets = append(sets, nil)
			}
			bufs, ptrs := abiBuffers(need)
			caps := slices.Clone(need)
			if err := sourceFill(uintptr(src.Handle), k, bufSet{ptrs: ptrs, caps: caps}); err != nil {
				t.Fatalf("fill: %v", err)
			}
			sets[k] = bufs
		}
		for i := range nstreams {
			j := sizesHeader + sizesPerStream*i + 3
			vals[i] = append(vals[i], sets[k][j][:need[j]]...)
		}
	}
	if seqs != total {
		t.Fatalf("a sweep delivered %d sequences of %d", seqs, total)
	}
	if got == nil {
		return
	}
	for i := range nstreams {
		if j := sizesHeader + sizesPerStream*i + 3; !bytes.Equal(vals[i], got[j]) {
			t.Fatalf("stream %d: a sweep's values differ from the reads' (%d and %d bytes)", i, len(vals[i]), len(got[j]))
		}
	}
}

// seedReadPath seeds f with real files of the module's testdata directories (those a
// format's extension names, up to 256 KiB), the single-input corpus entries of the formats'
// FuzzReader targets, and a small data set written by the ABI in every writable format.
func seedReadPath(f *testing.F) {
	root := ".."
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "python" || strings.HasPrefix(n, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return nil
		}
		if dir, file := filepath.Split(p); strings.Contains(dir, string(filepath.Separator)+"fuzz"+string(filepath.Separator)) {
			// A corpus entry of a format's FuzzReader: ../format/NAME/testdata/fuzz/FuzzReader/X.
			parts := strings.Split(filepath.ToSlash(dir), "/")
			if len(parts) >= 6 && parts[1] == "format" && parts[len(parts)-2] == "FuzzReader" {
				if data, ok := corpusBytes(p); ok && len(data) <= 64<<10 {
					if _, known := format.Lookup(parts[2]); known {
						f.Add(data, parts[2], uint8(len(file)))
					}
				}
			}
			return nil
		}
		ft, ok := format.ByExtension(p)
		if info, err := d.Info(); !ok || err != nil || info.Size() > 256<<10 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data, ft.Name, uint8(len(data)))
		}
		return nil
	})
	// A dense, a sparse and a string stream, in sequences of several samples, written in every
	// format that writes (what each can hold of it).
	dir := f.TempDir()
	in := filepath.Join(dir, "in.ctf")
	var text strings.Builder
	for q := range 12 {
		for k := range 1 + q%3 {
			fmt.Fprintf(&text, "%d |d %d %d.5 |s %d:%d |l %d\n", q, q, k, q%5, k+1, q%2)
		}
	}
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		f.Fatal(err)
	}
	for _, ft := range format.All() {
		if ft.Name == "ctf" {
			f.Add([]byte(text.String()), "ctf", uint8(0))
			continue
		}
		if ft.IsDir() {
			continue // a directory (MDS), not one file's bytes: its own fuzz targets cover it
		}
		out := filepath.Join(dir, "out-"+ft.Name+ft.Ext())
		a, _ := json.Marshal(map[string]any{"paths": []string{in}, "inputs": []string{"d:dense:2", "s:sparse:5", "l:dense:1"}, "output": out, "to": ft.Name})
		if _, err := run(context.Background(), "convert", a); err != nil {
			continue // a format that cannot hold these streams (or writes no files)
		}
		if data, err := os.ReadFile(out); err == nil {
			f.Add(data, ft.Name, uint8(5))
		}
	}
}

// corpusBytes returns the []byte value of a corpus file of Go's fuzzing (`go test fuzz v1`)
// that holds a single one.
func corpusBytes(p string) ([]byte, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		return nil, false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		return nil, false
	}
	return []byte(s), true
}
