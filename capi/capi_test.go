//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mlfeed/mlfeed/inspect"
	"os"
	"path/filepath"
	"runtime/cgo"
	"strings"
	"testing"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/minibatch"
)

// TestChunkRoundTrip copies a chunk through the ABI's layout (chunkSizes, byteSizes,
// fillParts) into fresh buffers and reads it back.
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
	nb := byteSizes(nil, sizes, 2)
	bufs := make([][]byte, len(nb))
	ptrs := make([]unsafe.Pointer, len(nb))
	for k, n := range nb {
		bufs[k] = make([]byte, n+8)
		if n > 0 {
			ptrs[k] = unsafe.Pointer(&bufs[k][0])
		}
	}
	if err := fillParts([]*mlfeed.Chunk{c}, ptrs); err != nil {
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
	if err := fillParts([]*mlfeed.Chunk{c}, ptrs[:3]); err == nil {
		t.Error("fillParts with too few buffers: no error")
	}
}

// TestPartsAsConcat checks that a read result's parts cross the ABI (partsSizes, fillParts)
// exactly as their join by mlfeed.ConcatChunks does (chunkSizes, fillParts): sparse offsets,
// indices, values, strings and ids rebased and laid end to end.
func TestPartsAsConcat(t *testing.T) {
	part := func(seq, samp []int64, idx []int32, vals []float32, strs, ids []string) *mlfeed.Chunk {
		v := mlfeed.NewBuffer(mlfeed.Float32, len(vals))
		copy(v.Float32s(), vals)
		return &mlfeed.Chunk{Sequences: len(seq) - 1, IDs: ids, Streams: []mlfeed.StreamData{
			{SeqStart: seq, SampleStart: samp, Indices: idx, Values: v},
			{SeqStart: seq, Values: mlfeed.Buffer{Type: mlfeed.String, Strings: strs}},
		}}
	}
	parts := []*mlfeed.Chunk{
		part([]int64{0, 1, 3}, []int64{0, 2, 3, 5}, []int32{0, 7, 3, 1, 2}, []float32{1, 2, 3, 4, 5}, []string{"x", "yz", "w"}, []string{"a", "bé"}),
		part([]int64{0}, []int64{0}, nil, nil, nil, nil),
		part([]int64{0, 2}, []int64{0, 1, 1}, []int32{4}, []float32{6}, []string{"", "uv"}, []string{"c"}),
	}
	// fill copies c (parts, or their join) into fresh buffers and returns their bytes.
	fill := func(parts []*mlfeed.Chunk) [][]byte {
		sizes := make([]int64, sizesHeader+sizesPerStream*2)
		if err := partsSizes(parts, sizes); err != nil {
			t.Fatal(err)
		}
		nb := byteSizes(nil, sizes, 2)
		bufs := make([][]byte, len(nb))
		ptrs := make([]unsafe.Pointer, len(nb))
		for k, n := range nb {
			bufs[k] = make([]byte, n)
			if n > 0 {
				ptrs[k] = unsafe.Pointer(&bufs[k][0])
			}
		}
		if err := fillParts(parts, ptrs); err != nil {
			t.Fatal(err)
		}
		return bufs
	}
	got, want := fill(parts), fill([]*mlfeed.Chunk{mlfeed.ConcatChunks(parts)})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parts cross as\n%v\ntheir join as\n%v", got, want)
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
		{fmt.Errorf("cbf: %w: uint8", mlfeed.ErrUnsupported), kindUsage}, // as the CLI: exit 2
		{&mlfeed.PosError{File: "a.npy", Offset: 9, Err: mmap.ErrChanged}, kindData},
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
	var res struct {
		Value    inspect.Info `json:"value"`
		Warnings []string     `json:"warnings"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Value.Sequences != 3 || res.Value.Format != "ctf" || len(res.Warnings) != 0 {
		t.Fatalf("info: %s (%v)", out, err)
	}
	// What the formats log comes back with the result: here CTF's notice of values rounded to
	// float32 (as Python writes 0.07670275135766862, which float32 holds as 0.07670275).
	py := filepath.Join(dir, "py.ctf")
	if err := os.WriteFile(py, []byte("|x 0.07670275135766862 0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(context.Background(), "open", args(map[string]any{"paths": []string{py}, "inputs": []string{"x:dense:2"}}))
	if err != nil {
		t.Fatal(err)
	}
	var opened struct {
		Value struct {
			Handle uint64 `json:"handle"`
		} `json:"value"`
	}
	if err := json.Unmarshal(out, &opened); err != nil {
		t.Fatal(err)
	}
	out, err = run(context.Background(), "read", args(map[string]any{"dataset": opened.Value.Handle, "stop": 1}))
	if err != nil || !strings.Contains(string(out), "rounded to float32") {
		t.Errorf("read of values float32 rounds: %s (%v), want the rounding notice among the warnings", out, err)
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
	if err != nil || string(out) != `{"value":[]}` {
		t.Errorf("validate: %s, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run(ctx, "convert", args(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:2"}, "output": filepath.Join(dir, "c.cbf")})); kindOf(err) != kindCanceled {
		t.Errorf("canceled convert: %v", err)
	}
}

// TestSourceZeroCopy drives a minibatch source as the Python package does: it registers a
// buffer set when a minibatch waits for one, and checks that the minibatches, read from the
// sets, are the engine's, and that the packers write most of them into the sets themselves.
func TestSourceZeroCopy(t *testing.T) {
	in := filepath.Join(t.TempDir(), "a.ctf")
	var text []byte
	for q := range 400 {
		n := 1 + q%3
		if q%97 == 5 {
			n = 60 // outgrows the sets registered for shorter minibatches
		}
		for k := range n {
			text = fmt.Appendf(text, "%d |x %d %d %d\n", q, q, k, q+k)
		}
	}
	if err := os.WriteFile(in, text, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() mlfeed.Source {
		src, err := dataset.OpenFiles([]string{in}, "", &format.Options{Inputs: []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 3}}})
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	cfg := minibatch.Config{MinibatchSize: 20, MaxSweeps: 2, RandomizationWindow: 2, Threads: 3, Packers: 2}
	ref, err := minibatch.New(open(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	src := open()
	s, err := newSource(context.Background(), src, closer.Stack{src.Close}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := uintptr(cgo.NewHandle(s))
	defer func() { cgo.Handle(h).Delete(); s.close() }()

	meta := make([]int64, len(s.meta))
	var sets [][][]uint64 // per set, per buffer: 8-byte aligned memory
	var mbs, fills int
	for {
		rc, err := sourceNext(h, false, -1, meta)
		if err != nil || rc == 0 {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if !ref.Next() {
			t.Fatalf("minibatch %d: the engine alone has ended", mbs)
		}
		mbs++
		k := int(meta[7])
		need := byteSizes(nil, meta[metaLen:], 1)
		if meta[9] == 0 {
			fills++
			for len(sets) <= k {
				sets = append(sets, nil)
			}
			if sets[k] == nil {
				sets[k] = make([][]uint64, len(need))
			}
			set := bufSet{}
			for j, n := range need {
				if int64(8*len(sets[k][j])) < n || sets[k][j] == nil {
					sets[k][j] = make([]uint64, n/8+2) // the old one stays alive until replaced
				}
				set.ptrs = append(set.ptrs, unsafe.Pointer(&sets[k][j][0]))
				set.caps = append(set.caps, int64(8*len(sets[k][j])))
			}
			if err := sourceFill(h, k, set); err != nil {
				t.Fatal(err)
			}
			if err := sourceFill(h, k, set); err == nil {
				t.Fatal("a second fill of the same minibatch: no error")
			}
		}
		want := ref.Batch().Data.Streams[0]
		buf := sets[k][sizesHeader:]
		seq := unsafe.Slice((*int64)(unsafe.Pointer(&buf[0][0])), need[sizesHeader]/8)
		vals := unsafe.Slice((*byte)(unsafe.Pointer(&buf[3][0])), need[sizesHeader+3])
		if fmt.Sprint(seq) != fmt.Sprint(want.SeqStart) || string(vals) != string(want.Values.Bytes) {
			t.Fatalf("minibatch %d (set %d, filled %v) differs from the engine's", mbs, k, meta[9] == 0)
		}
	}
	if ref.Next() {
		t.Fatal("the source ended before the engine alone")
	}
	if mbs < 50 || fills > mbs/4 || fills < len(sets)+1 {
		t.Errorf("%d minibatches, %d sets, %d registered by a fill: want most packed in place, some outgrown", mbs, len(sets), fills)
	}
}

// TestStreamsOf: a stream of single values has the shape [] for Python, so that its arrays are
// (N,) as numpy has them; a stream whose samples are N x 1 keeps [1].
func TestStreamsOf(t *testing.T) {
	sc := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "labels", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 1},
		{Name: "column", Storage: mlfeed.Dense, Type: mlfeed.Int32, Dim: 1, Shape: []int{1}},
		{Name: "image", Storage: mlfeed.Dense, Type: mlfeed.Uint8, Dim: 6, Shape: []int{2, 3}},
		{Name: "vector", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 4},
		{Name: "sparse", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 1},
	}}
	b, err := json.Marshal(streamsOf(&sc))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct{ Shape []int }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(got); s != "[{[]} {[1]} {[2 3]} {[4]} {[1]}]" || !strings.Contains(string(b), `"shape":[]`) {
		t.Errorf("shapes %s (%s)", s, b)
	}
}

// TestFillMappedTruncated: a read result that aliases a mapped file, copied out after the
// file was truncated underneath, gives an error naming the file, not SIGBUS.
func TestFillMappedTruncated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.idx")
	const n, dim = 1 << 14, 256
	data := make([]byte, 4+4+4+n*dim)
	copy(data, []byte{0, 0, 0x08, 2, 0, 0, n >> 8, n & 0xff, 0, 0, dim >> 8, dim & 0xff})
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := dataset.OpenFiles([]string{p}, "", &format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	last := len(src.Chunks()) - 1
	c, err := src.ReadChunk(context.Background(), last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	sizes := make([]int64, sizesHeader+sizesPerStream)
	if err := chunkSizes(c, sizes); err != nil {
		t.Fatal(err)
	}
	nb := byteSizes(nil, sizes, 1)
	ptrs := make([]unsafe.Pointer, len(nb))
	for k, m := range nb {
		if m > 0 {
			ptrs[k] = unsafe.Pointer(&make([]byte, m)[0])
		}
	}
	err = fillMapped([]*mlfeed.Chunk{c}, ptrs)
	var pe *mlfeed.PosError
	if !errors.As(err, &pe) || pe.File != p || !errors.Is(err, mlfeed.ErrTruncated) || kindOf(err) != kindData {
		t.Fatalf("fill after truncation: %v", err)
	}
}

// TestValidateSharded: Python's validate of a sharded data set checks the manifest against
// its shards as the CLI's does (a chunk table the shard does not have, a size the shard does
// not have), not only each shard on its own.
func TestValidateSharded(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.ctf")
	if err := os.WriteFile(in, []byte("|x 1 2\n|x 3 4\n|x 5 6\n|x 7 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(v any) []byte { b, _ := json.Marshal(v); return b }
	ds := filepath.Join(dir, "ds")
	if _, err := run(context.Background(), "convert", args(map[string]any{"paths": []string{in}, "inputs": []string{"x:dense:2"}, "output": ds, "to": "cbf", "shards": 2})); err != nil {
		t.Fatal(err)
	}
	validate := func() []problem {
		t.Helper()
		out, err := run(context.Background(), "validate", args(map[string]any{"paths": []string{ds}}))
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Value []problem }
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res.Value
	}
	if p := validate(); len(p) != 0 {
		t.Fatalf("a valid data set: %+v", p)
	}
	mp := filepath.Join(ds, "mlfeed.json")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	e := m["shards"].([]any)[0].(map[string]any)
	e["chunks"], e["chunk_table"] = 2, [][2]int{{1, 1}, {1, 1}}
	if err := os.WriteFile(mp, args(m), 0o644); err != nil {
		t.Fatal(err)
	}
	p := validate()
	if len(p) == 0 || p[0].Kind != kindData || !strings.Contains(p[0].Message, "the manifest says") {
		t.Fatalf("a chunk table the shard does not have: %+v", p)
	}
	if err := os.WriteFile(filepath.Join(ds, "part-00001.cbf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := validate(); len(p) == 0 || !strings.Contains(p[0].Message, "bytes, the manifest says") {
		t.Fatalf("a shard of another size: %+v", p)
	}
}
