package ctf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/mmap"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// writeTemp writes content to a file in a temporary directory and returns its path.
func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func dense(name string, dim int) mlfeed.Stream {
	return mlfeed.Stream{Name: name, Storage: mlfeed.Dense, Dim: dim}
}

func sparse(name string, dim int) mlfeed.Stream {
	return mlfeed.Stream{Name: name, Storage: mlfeed.Sparse, Dim: dim}
}

// readAll opens content with opts and returns every chunk.
func readAll(t testing.TB, content string, opts *ReaderOptions) (*Reader, []*mlfeed.Chunk, error) {
	t.Helper()
	r, err := Open(writeTemp(t, "data.ctf", content), opts)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { r.Close() })
	var out []*mlfeed.Chunk
	err = r.ReadChunks(context.Background(), func(_ int, c *mlfeed.Chunk) error {
		out = append(out, c)
		return nil
	})
	return r, out, err
}

// flat describes a read file compactly: per sequence, its id and per stream its samples.
func flat(r *Reader, chunks []*mlfeed.Chunk) string {
	var b strings.Builder
	sc := r.Schema()
	for _, c := range chunks {
		for q := 0; q < c.Sequences; q++ {
			if c.IDs != nil {
				b.WriteString(c.IDs[q] + ":")
			}
			for i := range sc.Streams {
				st, d := &sc.Streams[i], &c.Streams[i]
				b.WriteString(" " + st.Name + "=")
				for s := d.SeqStart[q]; s < d.SeqStart[q+1]; s++ {
					from, to := d.SampleRange(st, s)
					b.WriteString("[")
					for k := from; k < to; k++ {
						if k > from {
							b.WriteString(" ")
						}
						if st.Storage == mlfeed.Sparse {
							b.WriteString(itoa(int(d.Indices[k])) + ":")
						}
						b.WriteString(ftoa(d.Values.Float64At(k)))
					}
					b.WriteString("]")
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestGrammar(t *testing.T) {
	in := []mlfeed.Stream{dense("a", 2), sparse("b", 5)}
	for _, tc := range []struct{ name, text, want string }{
		{"ids and continuation", "1 |a 1 2 |b 3:1\n|a 3 4\n1\t|a 5 6|b\n2 |b 0:-1 |a +5 5.\n",
			"1: a=[1 2][3 4][5 6] b=[3:1][]\n2: a=[5 5] b=[0:-1]\n"},
		{"order free, tabs", "|b 1:2\t|a 1e+05 -1.5e-3\n", " a=[100000 -0.0015] b=[1:2]\n"},
		{"crlf", "|a 1 2 |b 1:1\r\n|a 3 4 |b\r\n", " a=[1 2] b=[1:1]\n a=[3 4] b=[]\n"},
		{"no final newline", "|a 1 2 |b 4:1", " a=[1 2] b=[4:1]\n"},
		{"bom", "\xEF\xBB\xBF|a 1 2 |b 1:1\n", " a=[1 2] b=[1:1]\n"},
		{"comments", "|# head |a 1 2 |# mid |# |#x|b 2:3 |# tail\n|a 7|#c|b\n", " a=[1 2] b=[2:3]\n a=[7 0] b=[]\n"},
		{"leading zeros in ids", "007 |a 1 1 |b\n7 |a 2 2 |b\n8 |a 3 3 |b\n", "7: a=[1 1][2 2] b=[][]\n8: a=[3 3] b=[]\n"},
		{"repeated id is a new sequence", "1 |a 1 1 |b\n2 |a 2 2 |b\n1 |a 3 3 |b\n", "1: a=[1 1] b=[]\n2: a=[2 2] b=[]\n1: a=[3 3] b=[]\n"},
		{"unknown input skipped", "|c 1 2 3 |a 1 2 |b 1:1\n", " a=[1 2] b=[1:1]\n"},
		{"leading white space", "\n\n  |a 1 2 |b\n", " a=[1 2] b=[]\n"},
		{"negative zero", "|a -0 0 |b 1:-0.0\n", " a=[-0 0] b=[1:-0]\n"},
		{"room for the eight-byte paths", "1 |b 1:1 2:7 3:1.5 4:2e1 0:9|a 1 2 |# padding, padding\n2 |a 0 0 |b 00000003:1\t1:5\r\n2 |a -0.25 3 |# more padding\n",
			"1: a=[1 2] b=[1:1 2:7 3:1.5 4:20 0:9]\n2: a=[0 0][-0.25 3] b=[3:1 1:5]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, chunks, err := readAll(t, tc.text, &ReaderOptions{Inputs: in, Precision: mlfeed.Float64})
			if err != nil {
				t.Fatal(err)
			}
			if got := flat(r, chunks); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRepeatedIDWarning(t *testing.T) {
	var log bytes.Buffer
	_, _, err := readAll(t, "1 |a 1\n2 |a 2\n1 |a 3\n", &ReaderOptions{Inputs: []mlfeed.Stream{dense("a", 1)}, TraceLevel: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "WARNING: sequence id 1 starts 2 separate sequences") {
		t.Fatalf("log %q", log.String())
	}
}

func TestSkipSequenceIDs(t *testing.T) {
	r, chunks, err := readAll(t, "1 |a 1\n1 |a 2\n", &ReaderOptions{Inputs: []mlfeed.Stream{dense("a", 1)}, SkipSequenceIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema().HasIDs || chunks[0].Sequences != 2 || chunks[0].IDs != nil {
		t.Fatalf("line mode expected: %+v", chunks[0])
	}
}

func TestDefinesMBSize(t *testing.T) {
	in := []mlfeed.Stream{dense("a", 1), dense("b", 1)}
	in[1].DefinesMBSize = true
	// Line mode: lines without |b are not sequences at all.
	r, chunks, err := readAll(t, "|a 1 |b 1\n|a 2\n|b 3 |a 3\n", &ReaderOptions{Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); got != " a=[1] b=[1]\n a=[3] b=[3]\n" {
		t.Fatalf("got %q", got)
	}
	// Id mode: the sample count is the number of lines mentioning |b; "|bb" and "|b" inside
	// "|#" text both count as CNTK's search does only for the exact name.
	r, err = Open(writeTemp(t, "x.ctf", "1 |a 1 |b 1\n1 |a 2\n1 |a 3 |# |b\n2 |a 1 |bb 1 |b 2\n"), &ReaderOptions{Inputs: in, MaxErrors: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ch := r.Chunks(); len(ch) != 1 || ch[0].Sequences != 2 || ch[0].Samples != 3 {
		t.Fatalf("chunk table %+v, want 2 sequences of 2+1 samples", ch)
	}
	seqs, err := r.Sequences(0)
	if err != nil || len(seqs) != 2 || seqs[0].Samples != 2 || seqs[1].Samples != 1 || seqs[1].Key != 2 {
		t.Fatalf("sequences %+v, %v", seqs, err)
	}
	if ls, err := r.SequenceLengths(0); err != nil || !reflect.DeepEqual(ls, []int64{2, 1}) {
		t.Fatalf("SequenceLengths %v, %v", ls, err)
	}
}

func TestErrors(t *testing.T) {
	in := []mlfeed.Stream{dense("a", 2), sparse("b", 5)}
	for _, tc := range []struct{ name, text, want string }{
		{"bad number", "|a 1 2 |b\n|a 1 2,5 |b\n", "data.ctf:2:7: ctf: invalid data: bad number: expected a digit or a sign, found ','"},
		{"dot first", "|a .5 1 |b\n", "data.ctf:1:4: ctf: invalid data: bad number: expected a digit or a sign, found '.'"},
		{"dense too long", "|a 1 2 3 |b\n", "data.ctf:1:1: ctf: invalid data: dense sample has 3 values, more than the dimension 2"},
		{"sparse index", "|a 1 2 |b 5:1\n", "data.ctf:1:12: ctf: invalid data: sparse index 5 is not below the dimension 5"},
		{"sparse sign", "|a 1 2 |b -1:1\n", "data.ctf:1:11: ctf: invalid data: expected a sparse index (digits), found '-'"},
		{"sparse delimiter", "|a 1 2 |b 1 :1\n", "data.ctf:1:12: ctf: invalid data: expected ':' after the sparse index 1, found ' '"},
		{"duplicate input", "|a 1 2 |a 3 4 |b\n", "data.ctf:1:1: ctf: invalid data: input \"a\" has 2 samples in sequence 0, which spans 1 lines"},
		{"space after pipe", "|a 1 2 | b |b\n", "data.ctf:1:9: ctf: invalid data: '|' is followed by ' ', not an input name"},
		{"empty input in sequence", "1 |a 1 2\n", "data.ctf:1:1: ctf: invalid data: input \"b\" has no sample in sequence 1"},
		{"utf16", "\xFF\xFE|\x00", "data.ctf: ctf: invalid data: found a UTF-16 BOM"},
		{"empty", "", "data.ctf: ctf: invalid data: Input file is empty"},
		{"blank", " \n\t\n", "data.ctf: ctf: invalid data: Input file is empty"},
		{"bad first byte", "\n a |a 1 2\n", "data.ctf:2:2: ctf: invalid data: expected a sequence id (digits) or '|', found 'a'"},
		{"id overflow", "1 |a 1 2 |b\n99999999999999999999 |a 1 2 |b\n", "data.ctf:2:1: ctf: invalid data: sequence id overflows 64 bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readAll(t, tc.text, &ReaderOptions{Inputs: in})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			if !errors.Is(err, ErrFormat) || !errors.Is(err, mlfeed.ErrFormat) {
				t.Fatalf("%v does not wrap ErrFormat", err)
			}
		})
	}
}

func TestMaxErrors(t *testing.T) {
	in := []mlfeed.Stream{dense("a", 1)}
	text := "|a 1\n|a x\n|a 3\n|a 4 4\n|a 5\n"
	if _, _, err := readAll(t, text, &ReaderOptions{Inputs: in, MaxErrors: 1}); err == nil || !strings.Contains(err.Error(), "Reached the maximum number of allowed errors") {
		t.Fatalf("maxErrors=1: %v", err)
	}
	// Line mode: a line whose only sample is bad is an empty sequence, which CNTK never
	// forgives; use ids so the bad lines belong to good sequences.
	text = "1 |a 1\n1 |a x\n2 |a 3\n2 |a 4 4\n3 |a 5\n"
	var log bytes.Buffer
	r, chunks, err := readAll(t, text, &ReaderOptions{Inputs: in, MaxErrors: 6, TraceLevel: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(r, chunks); got != "1: a=[1]\n2: a=[3]\n3: a=[5]\n" {
		t.Fatalf("got %q", got)
	}
	if !strings.Contains(log.String(), "WARNING: Unexpected character ('x') in a floating point value at offset 12") {
		t.Fatalf("log:\n%s", log.String())
	}
	// The budget is per pass: reading again does not count the chunk's errors twice.
	if _, err := r.ReadChunk(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// TestMaxErrorsAcrossChunks checks that the budget covers the whole file, not each chunk.
func TestMaxErrorsAcrossChunks(t *testing.T) {
	text := "1 |a 1\n1 |a x\n2 |a 3\n3 |a 4\n3 |a y\n4 |a 5\n"
	in := []mlfeed.Stream{dense("a", 1)}
	// Each bad line costs 3 errors (the value, the empty row, the short sequence).
	if _, _, err := readAll(t, text, &ReaderOptions{Inputs: in, MaxErrors: 5, ChunkSize: 20}); err == nil || !strings.Contains(err.Error(), "data.ctf:4:1: ctf: invalid data: sequence 3 has 1 samples but spans 2 lines; 6 errors in the file so far, more than maxErrors=5") {
		t.Fatalf("two chunks of 3 errors each with maxErrors=5: %v", err)
	}
	r, _, err := readAll(t, text, &ReaderOptions{Inputs: in, MaxErrors: 6, ChunkSize: 20})
	if err != nil || len(r.Chunks()) < 2 {
		t.Fatalf("maxErrors=6: %v, %d chunks", err, len(r.Chunks()))
	}
}

func TestWarningNotice(t *testing.T) {
	var log bytes.Buffer
	_, _, err := readAll(t, "|a 1 2\n", &ReaderOptions{Inputs: []mlfeed.Stream{dense("a", 1)}, Log: &log})
	if err == nil || !strings.Contains(log.String(), "A number of warnings were generated") {
		t.Fatalf("err %v, log %q", err, log.String())
	}
}

func TestFrameMode(t *testing.T) {
	_, err := Open(writeTemp(t, "f.ctf", "1 |a 1\n1 |a 2\n"), &ReaderOptions{Inputs: []mlfeed.Stream{dense("a", 1)}, FrameMode: true})
	if err == nil || !strings.Contains(err.Error(), "frameMode") {
		t.Fatalf("got %v", err)
	}
}

func TestChunking(t *testing.T) {
	p := testutil.Testdata(t, "cntk", "ctf", "MNIST_dense.txt")
	r, err := Open(p, &ReaderOptions{Inputs: []mlfeed.Stream{dense("features", 784), dense("labels", 10)}, ChunkSize: 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch := r.Chunks()
	if len(ch) != 200 {
		t.Fatalf("%d chunks, want 200", len(ch))
	}
	for i, c := range ch {
		if c.Sequences != 5 || c.Samples != 5 {
			t.Fatalf("chunk %d: %+v", i, c)
		}
	}
	in := []mlfeed.Stream{dense("F1", 1), dense("F2", 10), dense("F3", 100), dense("F4", 1000), dense("L1", 1), dense("L2", 10), dense("L3", 100)}
	r2, err := Open(testutil.Testdata(t, "cntk", "ctf", "10x1_MI_dense.txt"), &ReaderOptions{Inputs: in, ChunkSize: 50000})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var got []int
	for _, c := range r2.Chunks() {
		got = append(got, c.Sequences)
	}
	if !reflect.DeepEqual(got, []int{4, 4, 2}) {
		t.Fatalf("chunks %v, want [4 4 2]", got)
	}
}

func TestCacheIndex(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "data.ctf")
	content := "1 |a 1\n1 |a 2\n2 |a 3\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	in := []mlfeed.Stream{dense("a", 1)}
	r, err := Open(p, &ReaderOptions{Inputs: in, CacheIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cache := p + "._.0.0.0.v1.cache"
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) != 32+2*32 || le.Uint64(b) != 0x636e746b5f696478 || le.Uint64(b[16:]) != 2 || le.Uint64(b[32+32:]) != 2 || le.Uint32(b[32+32+8:]) != 1 || le.Uint64(b[32+32+16:]) != 14 {
		t.Fatalf("cache bytes % x", b)
	}
	r, err = Open(p, &ReaderOptions{Inputs: in, CacheIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Details()["index_cache"] != cache {
		t.Fatalf("cache not used: %v", r.Details())
	}
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil || c.Sequences != 2 || c.IDs[1] != "2" {
		t.Fatalf("%v %+v", err, c)
	}
	r.Close()
	// A cache that does not fit the file is not used, even when newer.
	if err := os.WriteFile(p, []byte(content+"3 |a 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(p, past, past)
	r, err = Open(p, &ReaderOptions{Inputs: in, CacheIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Details()["index_cache"] != nil || r.Chunks()[0].Sequences != 3 {
		t.Fatalf("cache of another file used: %v %+v", r.Details(), r.Chunks())
	}
	r.Close()
	// A newer input makes the cache stale.
	if err := os.WriteFile(p, []byte(content+"3 |a 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(p, future, future)
	r, err = Open(p, &ReaderOptions{Inputs: in, CacheIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Details()["index_cache"] != nil || r.Chunks()[0].Sequences != 3 {
		t.Fatalf("stale cache used: %v %+v", r.Details(), r.Chunks())
	}
}

func TestInfer(t *testing.T) {
	var log bytes.Buffer
	r, err := Open(writeTemp(t, "i.ctf", "|x 1 2 3 |y 4:1\n|y 7:2 |x 1 |z\n"), &ReaderOptions{Log: &log, TraceLevel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := r.Details()["inferred_inputs"]
	want := []string{"x:dense:3", "y:sparse:8", "z:dense:1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inferred %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), "--input x:dense:3 --input y:sparse:8 --input z:dense:1") {
		t.Fatalf("log %q", log.String())
	}
	// Details' keys are lower snake_case, as the option keys.
	for k := range r.Details() {
		if strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Errorf("details key %q is not snake_case", k)
		}
	}
}

// TestInferPieces infers the streams of CNTK's test files with a scheduler of three threads
// and pieces of at least 1 KiB: the pieces cover the chunks exactly, each after a newline,
// and the streams, their order and the precision are the sequential scan's.
func TestInferPieces(t *testing.T) {
	defer func(n int64) { inferMinPiece = n }(inferMinPiece)
	inferMinPiece = 1 << 10
	ctx := sched.WithContext(context.Background(), sched.New(3, 0))
	for _, name := range []string{"10x1_MI_dense.txt", "MNIST_dense.txt"} {
		p := testutil.Testdata(t, "cntk", "ctf", name)
		seq, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		par, err := Open(p, &ReaderOptions{Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		pieces := par.inferPieces(3)
		if len(pieces) <= len(par.chunks) {
			t.Errorf("%s: %d pieces for %d chunks", name, len(pieces), len(par.chunks))
		}
		at, k := par.chunks[0].start, 0
		for _, pc := range pieces {
			if pc[0] != at || pc[1] <= pc[0] || pc[0] > par.layout.dataStart && par.data[pc[0]-1] != '\n' {
				t.Fatalf("%s: piece %v after offset %d", name, pc, at)
			}
			at = pc[1]
			if at == par.chunks[k].end && k+1 < len(par.chunks) {
				k++
				at = par.chunks[k].start
			}
		}
		if at != par.chunks[len(par.chunks)-1].end {
			t.Fatalf("%s: the pieces end at %d, the data at %d", name, at, par.chunks[len(par.chunks)-1].end)
		}
		if !reflect.DeepEqual(par.Schema(), seq.Schema()) || !reflect.DeepEqual(par.inferred, seq.inferred) {
			t.Fatalf("%s: inferred in pieces %v, sequentially %v", name, par.inferred, seq.inferred)
		}
		seq.Close()
		par.Close()
	}
}

func TestConcurrentReadChunk(t *testing.T) {
	p := testutil.Testdata(t, "cntk", "ctf", "MNIST_dense.txt")
	r, err := Open(p, &ReaderOptions{Inputs: []mlfeed.Stream{dense("F", 784), dense("L", 10)}, ChunkSize: 100000, Precision: mlfeed.Float64})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := len(r.Chunks())
	want := make([]*mlfeed.Chunk, n)
	for i := range want {
		if want[i], err = r.ReadChunk(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < n; k++ {
				i := (k*7 + g) % n
				c, err := r.ReadChunk(context.Background(), i)
				if err != nil || !reflect.DeepEqual(c, want[i]) {
					t.Errorf("chunk %d differs under concurrency: %v", i, err)
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestKeepDataInMemory(t *testing.T) {
	r, err := Open(writeTemp(t, "k.ctf", "|a 1\n|a 2\n"), &ReaderOptions{Inputs: []mlfeed.Stream{dense("a", 1)}, KeepDataInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c1, _ := r.ReadChunk(context.Background(), 0)
	c2, _ := r.ReadChunk(context.Background(), 0)
	if c1 != c2 {
		t.Fatal("chunk parsed twice with KeepDataInMemory")
	}
}

// TestAllInputs decodes every CTF file of the CNTK corpus, LF and CRLF, with declared or
// inferred streams, and checks the values against a plain reference decoder.
func TestAllInputs(t *testing.T) {
	dir := testutil.Testdata(t, "cntk", "ctf")
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	malformed := map[string]bool{"invalid_inputs.txt": true, "contains_blank_lines.txt": true, "duplicate_inputs.txt": true, "empty_samples.txt": true}
	for _, f := range files {
		base := filepath.Base(f)
		if malformed[base] {
			continue
		}
		t.Run(base, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range []string{string(raw), strings.ReplaceAll(string(raw), "\n", "\r\n")} {
				r, chunks, err := readAll(t, text, &ReaderOptions{Precision: mlfeed.Float64, ChunkSize: 4096})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := flat(r, chunks), reference(t, r.Schema(), text); got != want {
					t.Fatalf("decoded values differ from the reference decoder:\n%s", firstDiff(got, want))
				}
			}
		})
	}
}

// reference decodes well-formed CTF naively: split lines and fields, group by id.
func reference(t *testing.T, sc mlfeed.Schema, text string) string {
	text = strings.TrimPrefix(text, "\xEF\xBB\xBF")
	var b strings.Builder
	type seq struct {
		id      string
		samples [][]string
	}
	var seqs []*seq
	prev := ""
	for _, line := range strings.Split(strings.TrimRight(strings.ReplaceAll(text, "\r", ""), "\n"), "\n") {
		id := line[:len(line)-len(strings.TrimLeft(line, "0123456789"))]
		var cur *seq
		if !sc.HasIDs || id == "" && len(seqs) > 0 || id == prev {
			if sc.HasIDs && len(seqs) > 0 {
				cur = seqs[len(seqs)-1]
			}
		}
		if cur == nil {
			cur = &seq{id: strings.TrimLeft(id, "0"), samples: make([][]string, len(sc.Streams))}
			if cur.id == "" && sc.HasIDs {
				cur.id = "0"
			}
			seqs = append(seqs, cur)
		}
		if id != "" {
			prev = id
		}
		for _, item := range strings.Split(line, "|")[1:] {
			if strings.HasPrefix(item, "#") {
				continue
			}
			fields := strings.Fields(item)
			i := sc.Index(fields[0])
			if i < 0 {
				t.Fatalf("reference: unknown input %q", fields[0])
			}
			st := &sc.Streams[i]
			var vals []string
			for _, f := range fields[1:] {
				if st.Storage == mlfeed.Sparse {
					ix, v, _ := strings.Cut(f, ":")
					vals = append(vals, ix+":"+ftoa(parseF(t, v)))
				} else {
					vals = append(vals, ftoa(parseF(t, f)))
				}
			}
			for st.Storage == mlfeed.Dense && len(vals) < st.Dim {
				vals = append(vals, "0")
			}
			cur.samples[i] = append(cur.samples[i], "["+strings.Join(vals, " ")+"]")
		}
	}
	for _, s := range seqs {
		if sc.HasIDs {
			b.WriteString(s.id + ":")
		}
		for i := range sc.Streams {
			b.WriteString(" " + sc.Streams[i].Name + "=" + strings.Join(s.samples[i], ""))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n got: " + al[i] + "\nwant: " + bl[i]
		}
	}
	return "lengths differ"
}

func TestRegistry(t *testing.T) {
	ft, ok := format.Lookup("ctf")
	if !ok {
		t.Fatal("ctf not registered")
	}
	p := writeTemp(t, "r.ctf", "|a 1 2\n")
	src, err := ft.Open(p, &format.Options{Params: map[string]string{"precision": "double", "maxErrors": "3", "traceLevel": "2", "chunkSizeInBytes": "100", "skipSequenceIds": "true", "keepDataInMemory": "1", "frameMode": "f", "cacheIndex": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if sc := src.Schema(); sc.Streams[0].Type != mlfeed.Float64 || sc.Streams[0].Dim != 2 {
		t.Fatalf("schema %+v", sc)
	}
	var o ReaderOptions
	if err := ParseParams(&o, map[string]string{"precision": "double", "max_errors": "3", "trace_level": "2", "chunk_size": "100",
		"skip_sequence_ids": "true", "keep_in_memory": "1", "frame_mode": "t", "cache_index": "false"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, ReaderOptions{Precision: mlfeed.Float64, MaxErrors: 3, TraceLevel: 2, ChunkSize: 100, SkipSequenceIDs: true, KeepDataInMemory: true, FrameMode: true}) {
		t.Fatalf("snake_case keys: %+v", o)
	}
	if err := ParseParams(&o, map[string]string{"chunk_size": "1", "chunkSizeInBytes": "2"}); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("a key under two spellings: %v", err)
	}
	if _, err := ft.Open(p, &format.Options{Params: map[string]string{"bogus": "1"}}); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("unknown param: %v", err)
	}
	if _, err := ft.Open(p, &format.Options{Params: map[string]string{"precision": "half"}}); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("bad precision: %v", err)
	}
	two := []mlfeed.Stream{dense("a", 2), dense("b", 1)}
	two[0].DefinesMBSize, two[1].DefinesMBSize = true, true
	if _, err := ft.Open(p, &format.Options{Inputs: two}); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("two definesMBSize: %v", err)
	}
	// A declaration out of the supported range is a usage error naming the limit.
	huge := []mlfeed.Stream{dense("a", 1_000_000_000)}
	if _, err := ft.Open(p, &format.Options{Inputs: huge}); !errors.Is(err, format.ErrUsage) || !errors.Is(err, mlfeed.ErrTooLarge) || !strings.Contains(err.Error(), "268435456 (2^28)") {
		t.Fatalf("dense dimension 1e9: %v", err)
	}
}

func parseF(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("reference: %q: %v", s, err)
	}
	return f
}

func testdataPath(t *testing.T, name string) string {
	return testutil.Testdata(t, "cntk", "ctf", name)
}

// TestParseCancel: a parse stops when its context ends, between sequences.
func TestParseCancel(t *testing.T) {
	text := strings.Repeat("|x 1 2\n", 3*cancelCheck)
	r, err := newReader("c.ctf", []byte(text), nil, &ReaderOptions{Inputs: []mlfeed.Stream{dense("x", 2)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := parseChunk[float32](ctx, r, 0, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if c, _, _, err := parseChunk[float32](context.Background(), r, 0, nil); err != nil || c.Sequences != 3*cancelCheck {
		t.Fatalf("uncancelled: %v", err)
	}
}

// TestNewReader: CTF text from an io.ReaderAt reads as the same file opened by name.
func TestNewReader(t *testing.T) {
	text := "0 |a 1 2 |b 3:1\n0 |a 3 4\n1 |a 5 6 |b 0:2\n"
	in := []mlfeed.Stream{dense("a", 2), sparse("b", 4)}
	r, err := NewReader(strings.NewReader(text), int64(len(text)), &ReaderOptions{FileName: "mem.ctf", Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	var got []*mlfeed.Chunk
	for i := range r.Chunks() {
		c, err := r.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	byName, want, err := readAll(t, text, &ReaderOptions{Inputs: in})
	if err != nil {
		t.Fatal(err)
	}
	if flat(r, got) != flat(byName, want) {
		t.Fatalf("NewReader read\n%s\nOpen read\n%s", flat(r, got), flat(byName, want))
	}
	if _, err := NewReader(strings.NewReader(text), int64(len(text))+5, &ReaderOptions{FileName: "short.ctf", Inputs: in}); err == nil || !strings.Contains(err.Error(), "short.ctf") {
		t.Fatalf("a short reader: %v", err)
	}
	if _, err := NewReader(strings.NewReader(text), -1, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a negative size: %v", err)
	}
}

// The repeated-id check keeps no memory while ids count up, stays within maxIDCheck bytes
// whatever the ids, and finds repeats within the increasing prefix and after it.
func TestRepeatedIDCheckBounded(t *testing.T) {
	var c idCheck
	for k := uint64(0); k < 50_000_000; k++ {
		c.add(k)
	}
	if len(c.runs) != 1 || len(c.keys) != 0 || c.full {
		t.Fatalf("ids 0, 1, 2, ... kept %d runs and %d ids", len(c.runs), len(c.keys))
	}
	var gaps idCheck
	for k := uint64(0); k < 4*maxIDCheck/8; k++ {
		gaps.add(2 * k) // increasing, never consecutive
	}
	if gaps.size() > maxIDCheck || !gaps.full {
		t.Fatalf("ids with gaps: %d bytes kept, full %v", gaps.size(), gaps.full)
	}
	var shuffled idCheck
	for k := uint64(0); k < 4*maxIDCheck/8; k++ {
		shuffled.add((k * 7919) % (4 * maxIDCheck / 8))
	}
	if shuffled.size() > maxIDCheck || !shuffled.full {
		t.Fatalf("shuffled ids: %d bytes kept, full %v", shuffled.size(), shuffled.full)
	}

	var d idCheck
	for _, k := range []uint64{1, 2, 3, 7, 9, 10, 3, 20, 20, 8, 9, 9, 1<<64 - 1, 0} {
		d.add(k)
	}
	var log bytes.Buffer
	d.warn(&log, "f.ctf")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var id, n uint64
		if _, err := fmt.Sscanf(l, "WARNING: sequence id %d starts %d", &id, &n); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, fmt.Sprint(id, "x", n))
	}
	if want := []string{"3x2", "9x3", "20x2"}; !slices.Equal(got, want) {
		t.Fatalf("repeats %v, want %v\n%s", got, want, log.String())
	}
}

// TestReadChunkReuse reads every chunk into the memory of the one before it, split into
// pieces and not, and checks each against a chunk read into fresh memory.
func TestReadChunkReuse(t *testing.T) {
	var sb strings.Builder
	x := uint64(7)
	for q := 0; sb.Len() < 5<<20; q++ {
		for l := 0; l < 1+q%3; l++ {
			fmt.Fprintf(&sb, "%d |a", q)
			for k := 0; k < 4+q%5; k++ {
				x = x*6364136223846793005 + 1442695040888963407
				fmt.Fprintf(&sb, " %d.%03d", x>>60, x>>50&1023%1000)
			}
			sb.WriteString(" |b")
			for k := 0; k < (q*7)%11; k++ {
				fmt.Fprintf(&sb, " %d:%d", (k*13+q)%50, k)
			}
			sb.WriteString("\n")
		}
	}
	p := writeTemp(t, "reuse.ctf", sb.String())
	in := []mlfeed.Stream{dense("a", 8), sparse("b", 50)}
	for _, threads := range []int{1, 2} {
		ctx := sched.WithContext(context.Background(), sched.New(threads, 0))
		r, err := Open(p, &ReaderOptions{Inputs: in, ChunkSize: 1500 << 10, MaxErrors: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := Open(p, &ReaderOptions{Inputs: in, ChunkSize: 1500 << 10, MaxErrors: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Chunks()) < 3 {
			t.Fatalf("%d chunks", len(r.Chunks()))
		}
		var prev *mlfeed.Chunk
		reused := 0
		for i := range r.Chunks() {
			var mem *byte
			if prev != nil {
				mem = unsafe.SliceData(prev.Streams[0].Values.Bytes)
			}
			got, err := r.ReadChunkReuse(ctx, i, prev)
			if mem != nil && unsafe.SliceData(got.Streams[0].Values.Bytes) == mem {
				reused++
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.ReadChunk(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("threads %d: chunk %d read into the memory of the one before differs", threads, i)
			}
			prev = got
		}
		if reused == 0 {
			t.Errorf("threads %d: no chunk was read into the memory of the one before", threads)
		}
		r.Close()
		fresh.Close()
	}
}

// TestMappedOnce: the pages the indexer mapped in are not mapped in again by the first parse of
// their chunk, but by later ones, when they may have been reclaimed meanwhile.
func TestMappedOnce(t *testing.T) {
	p := writeTemp(t, "m.ctf", "1 |a 1 2\n2 |a 3 4\n3 |a 5 6\n")
	r, err := Open(p, &ReaderOptions{Inputs: []mlfeed.Stream{{Name: "a", Storage: mlfeed.Dense, Dim: 2}}, ChunkSize: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.region == nil || !mmap.CanPopulate {
		t.Skip("no mapped file here")
	}
	if len(r.mapped) != len(r.chunks) || len(r.chunks) != 3 {
		t.Fatalf("%d chunks, %d mapped flags", len(r.chunks), len(r.mapped))
	}
	for pass := 0; pass < 2; pass++ {
		c, err := r.ReadChunk(context.Background(), 1)
		if err != nil || c.Sequences != 1 || c.Streams[0].Values.Float32s()[0] != 3 {
			t.Fatalf("pass %d: %v, %v", pass, c, err)
		}
		if !r.mapped[0].Load() || r.mapped[1].Load() || !r.mapped[2].Load() {
			t.Fatalf("pass %d: mapped %v %v %v", pass, r.mapped[0].Load(), r.mapped[1].Load(), r.mapped[2].Load())
		}
	}
}

// TestSequentialRealFiles reads CNTK's dense test files chunk by chunk, in order, as a
// conversion does (Sequential: each chunk's pages unmapped once it is parsed, the first parse
// not mapping in again what the indexer mapped): every chunk is the one an ordinary read gives.
func TestSequentialRealFiles(t *testing.T) {
	for _, name := range []string{"100x1_dense.txt", "10x1_MI_dense.txt"} {
		p := testutil.Local(t, "cntk", "ctf", name)
		read := func(seq bool) []*mlfeed.Chunk {
			r, err := Open(p, &ReaderOptions{ChunkSize: 16 << 10, Sequential: seq})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var cs []*mlfeed.Chunk
			for i := range r.Chunks() {
				c, err := r.ReadChunk(context.Background(), i)
				if err != nil {
					t.Fatalf("%s, sequential %v, chunk %d: %v", name, seq, i, err)
				}
				cs = append(cs, c)
			}
			return cs
		}
		want, got := read(false), read(true)
		if len(want) < 3 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d chunks read sequentially differ from the %d of an ordinary read", name, len(got), len(want))
		}
	}
}
