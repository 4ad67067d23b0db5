//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
)

// TestChunkRoundTrip copies a chunk through the ABI's layout (chunkSizes, byteSizes,
// fillChunk) into fresh buffers and reads it back.
func TestChunkRoundTrip(t *testing.T) {
	vals := mlfeed.NewBuffer(mlfeed.Float32, 5)
	copy(vals.Float32s(), []float32{1, 2, 3, 4, 5})
	c := &mlfeed.Chunk{Sequences: 2, IDs: []string{"a", "bé"}, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 3}, SampleStart: []int64{0, 2, 3, 5}, Indices: []int32{0, 7, 3, 1, 2}, Values: vals},
		{SeqStart: []int64{0, 1, 2}, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: []string{"x", "yz"}}},
	}}
	sizes := make([]int64, sizesHeader+sizesPerStream*2)
	if err := chunkSizes(c, sizes); err != nil {
		t.Fatal(err)
	}
	want := []int64{2, 4, 3, 4, 5, 20, 0, 0, 3, 0, 0, 0, 2, 3}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	nb := byteSizes(sizes, 2)
	bufs := make([][]byte, len(nb))
	ptrs := make([]unsafe.Pointer, len(nb))
	for k, n := range nb {
		bufs[k] = make([]byte, n+8)
		if n > 0 {
			ptrs[k] = unsafe.Pointer(&bufs[k][0])
		}
	}
	if err := fillChunk(c, ptrs); err != nil {
		t.Fatal(err)
	}
	i64 := func(b []byte, n int) []int64 { return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), n) }
	if got := i64(bufs[0], 3); fmt.Sprint(got) != "[0 1 4]" || string(bufs[1][:4]) != "abé" {
		t.Errorf("ids: offsets %v, bytes %q", got, bufs[1][:4])
	}
	if got := i64(bufs[3], 4); fmt.Sprint(got) != "[0 2 3 5]" {
		t.Errorf("sample starts %v", got)
	}
	if got := unsafe.Slice((*int32)(unsafe.Pointer(&bufs[4][0])), 5); fmt.Sprint(got) != "[0 7 3 1 2]" {
		t.Errorf("indices %v", got)
	}
	if got := unsafe.Slice((*float32)(unsafe.Pointer(&bufs[5][0])), 5); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Errorf("values %v", got)
	}
	if got := i64(bufs[12], 3); fmt.Sprint(got) != "[0 1 3]" || string(bufs[13][:3]) != "xyz" {
		t.Errorf("strings: offsets %v, bytes %q", got, bufs[13][:3])
	}
	if err := fillChunk(c, ptrs[:3]); err == nil {
		t.Error("fillChunk with too few buffers: no error")
	}
}

func TestUnitSequences(t *testing.T) {
	for _, c := range []struct {
		seq  []int64
		want bool
	}{{[]int64{0}, true}, {[]int64{0, 1, 2}, true}, {[]int64{0, 0, 2}, false}, {[]int64{0, 2}, false}} {
		if got := unitSequences(c.seq); got != c.want {
			t.Errorf("unitSequences(%v) = %v", c.seq, got)
		}
	}
}

func TestKindOf(t *testing.T) {
	_, errNotExist := os.Open(filepath.Join(t.TempDir(), "missing"))
	for _, c := range []struct {
		err  error
		want int32
	}{
		{nil, kindNone},
		{mlfeed.LineError("f.ctf", 3, 4, mlfeed.ErrFormat), kindData},
		{fmt.Errorf("%w: bad", format.ErrUsage), kindUsage},
		{fmt.Errorf("x: %w", minibatch.ErrState), kindUsage},
		{context.Canceled, kindCanceled},
		{recovered("boom"), kindInternal},
		{errNotExist, kindNotFound},
	} {
		if got := kindOf(c.err); got != c.want {
			t.Errorf("kindOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestRun drives the operations as the Python package does, on a CTF file written here.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.ctf")
	if err := os.WriteFile(in, []byte("|x 1 2\n|x 3 4\n|x 5 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(v any) []byte { b, _ := json.Marshal(v); return b }
	out, err := run(context.Background(), "info", args(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:2"}}))
	if err != nil {
		t.Fatal(err)
	}
	var doc infoDoc
	if err := json.Unmarshal(out, &doc); err != nil || doc.Sequences != 3 || doc.Format != "ctf" {
		t.Fatalf("info: %s (%v)", out, err)
	}
	if _, err := run(context.Background(), "info", args(map[string]any{"paths": []string{in}, "nope": 1})); kindOf(err) != kindUsage {
		t.Errorf("unknown argument: %v", err)
	}
	if _, err := run(context.Background(), "nosuchop", []byte("{}")); kindOf(err) != kindUsage {
		t.Errorf("unknown operation: %v", err)
	}
	conv := filepath.Join(dir, "b.cbf")
	if _, err := run(context.Background(), "convert", args(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:2"}, "output": conv})); err != nil {
		t.Fatal(err)
	}
	out, err = run(context.Background(), "validate", args(map[string]any{"paths": []string{conv}}))
	if err != nil || string(out) != "[]" {
		t.Errorf("validate: %s, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run(ctx, "convert", args(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:2"}, "output": filepath.Join(dir, "c.cbf")})); kindOf(err) != kindCanceled {
		t.Errorf("canceled convert: %v", err)
	}
}
