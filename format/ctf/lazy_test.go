package ctf

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// readLazy reads data as an ordinary reader (indexed) and as a sequential one opened
// without an index (lazyMin 0), both with opts, every chunk in order: it returns each one's
// content (flat), log lines (sorted: a lazy reader warns of repeated ids after its last
// chunk) and error (at opening or reading).
func readLazy(t testing.TB, data []byte, opts ReaderOptions) (lazy *Reader, got, want [3]string) {
	t.Helper()
	defer func(n int64) { lazyMin = n }(lazyMin)
	lazyMin = 0
	read := func(seq bool) (*Reader, [3]string) {
		var log bytes.Buffer
		o := opts
		o.Sequential, o.Log = seq, &log
		if o.TraceLevel == 0 {
			o.TraceLevel = 1
		}
		r, err := newReader("f.ctf", data, nil, &o)
		var res [3]string
		if err == nil {
			var chunks []*mlfeed.Chunk
			for i := range mlfeed.NumChunks(r) {
				var c *mlfeed.Chunk
				if c, err = r.ReadChunk(o.Context, i); err != nil {
					break
				}
				chunks = append(chunks, c)
			}
			if err == nil {
				res[0] = flat(r, chunks)
			}
		}
		lines := strings.Split(log.String(), "\n")
		slices.Sort(lines)
		res[1], res[2] = strings.Join(lines, "\n"), fmt.Sprint(err)
		return r, res
	}
	_, want = read(false)
	lazy, got = read(true)
	return lazy, got, want
}

// FuzzLazy reads arbitrary text as a conversion reads a large file, without an index (see
// lazy.go), and as an ordinary reader does: both fail, or both give the same sequences, the
// same messages and, once the lazy reader counts them, the same totals. Seeded as FuzzRead is.
func FuzzLazy(f *testing.F) {
	seedCNTK(f)
	f.Add([]byte("1 |a 1\n|a 2\n1 |a 3\n2 |a 4\n\n3 |a 5\n2 |a 6\n"), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := ReaderOptions{MaxErrors: int(mode & 3), ChunkSize: int64(mode>>2&15)*13 + 1, FrameMode: mode&64 != 0}
		if mode&128 != 0 {
			opts.Context = sched.WithContext(context.Background(), sched.New(2, 0))
		}
		r, got, want := readLazy(t, data, opts)
		if (got[2] == "<nil>") != (want[2] == "<nil>") {
			t.Fatalf("error %s, indexed %s", got[2], want[2])
		}
		if want[2] != "<nil>" {
			return
		}
		if got != want {
			t.Fatalf("lazy read differs:\n%s\n--- log:\n%s\n--- indexed:\n%s\n--- log:\n%s", got[0], got[1], want[0], want[1])
		}
		if r.lazy {
			ir, err := newReader("f.ctf", data, nil, &ReaderOptions{MaxErrors: opts.MaxErrors, FrameMode: opts.FrameMode})
			if err != nil {
				t.Fatal(err)
			}
			s1, n1 := mlfeed.Totals(r.Chunks())
			s2, n2 := mlfeed.Totals(ir.Chunks())
			if s1 != s2 || n1 != n2 || len(r.Chunks()) != r.NumChunks() {
				t.Fatalf("lazy chunk table: %d sequences, %d samples in %d chunks (NumChunks %d); indexed: %d, %d", s1, n1, len(r.Chunks()), r.NumChunks(), s2, n2)
			}
		}
	})
}

// TestLazyCNTKFiles reads CNTK's test files with sequence ids without an index, in chunks of
// a few sequences: the sequences, the messages and the counts are an indexed reader's.
func TestLazyCNTKFiles(t *testing.T) {
	names := []string{testutil.Local(t, "cntk", "ctf", "10x1_MI_dense.txt")}
	if d := testutil.SharedDir(); d != "" {
		more, _ := filepath.Glob(filepath.Join(d, "testdata", "cntk", "ctf", "*.txt"))
		names = append(names, more...)
	}
	files := map[string][]byte{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(name)] = data
	}
	// CNTK's files in the repository have no sequence ids, which the lazy path needs: one
	// that has them (sequences of one to three samples, a sparse and a dense stream), so
	// that a bare clone, without the shared corpus, tests the lazy path too.
	var gen strings.Builder
	for i := range 300 {
		for k := range 1 + i%3 {
			fmt.Fprintf(&gen, "%d |x %d:%d |y %d %d\n", i, (i+k)%7, k+1, i, k)
		}
	}
	files["generated-with-ids.ctf"] = []byte(gen.String())
	lazily := 0
	for name, data := range files {
		for _, size := range []int64{1, 300, 4096} {
			r, got, want := readLazy(t, data, ReaderOptions{ChunkSize: size})
			if got != want {
				t.Errorf("%s, chunk size %d: the lazy read differs:\n%s", name, size, firstDiff(got[0]+got[1]+got[2], want[0]+want[1]+want[2]))
			}
			if r != nil && r.lazy {
				lazily++
			}
		}
	}
	if lazily == 0 {
		t.Fatal("no file was read without an index")
	}
}

// TestLazyCut cuts generated files of multi-line sequences, with lines that carry no id and ids
// that come back, at sequence starts only; a sequence longer than the chunk size makes a chunk
// of its own.
func TestLazyCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for q := range 2000 {
		id := q % 7 // ids come back, but never twice in a row
		lines := 1 + rng.IntN(5)
		if q == 1000 {
			lines = 400 // longer than a chunk
		}
		for l := range lines {
			if l == 0 || rng.IntN(3) > 0 {
				fmt.Fprintf(&b, "%d", id)
			}
			fmt.Fprintf(&b, " |a %d |b %d:1\n", q, l%3)
		}
	}
	data := []byte(b.String())
	r, got, want := readLazy(t, data, ReaderOptions{ChunkSize: 2048, Inputs: []mlfeed.Stream{dense("a", 1), sparse("b", 3)}})
	if got != want || !r.lazy {
		t.Fatalf("lazy %v: the read differs:\n%s", r.lazy, firstDiff(got[0]+got[2], want[0]+want[2]))
	}
	big := false
	for i, c := range r.chunks {
		if i > 0 && (c.start == 0 || data[c.start-1] != '\n' || data[c.start] == ' ') {
			t.Fatalf("chunk %d starts at %d, not at a line with an id", i, c.start)
		}
		big = big || c.end-c.start > 6000
	}
	if len(r.chunks) < 10 || !big {
		t.Fatalf("%d chunks, one larger than a chunk's size: %v", len(r.chunks), big)
	}
	if s, _ := mlfeed.Totals(r.Chunks()); s != 2000 {
		t.Fatalf("%d sequences counted", s)
	}
}

// TestLazyErrors: what the index refuses at opening, a lazy reader refuses when it reads the
// chunk, with the same message and position.
func TestLazyErrors(t *testing.T) {
	for _, tc := range []struct {
		text  string
		frame bool
	}{
		{"1 |a 1\n1 |a 2\n2 |a 3\n", true},                        // a sequence of two samples in frame mode
		{"1 |a 1\n2 |a 2\n99999999999999999999999 |a 3\n", false}, // an id over 64 bits
	} {
		var text strings.Builder
		for range 50 {
			text.WriteString("0 |a 0\n7 |a 7\n")
		}
		text.WriteString(tc.text)
		opts := ReaderOptions{ChunkSize: 64, FrameMode: tc.frame, Inputs: []mlfeed.Stream{dense("a", 1)}}
		r, got, want := readLazy(t, []byte(text.String()), opts)
		if !r.lazy || got[2] != want[2] || !strings.HasPrefix(got[2], "f.ctf:10") {
			t.Errorf("lazy %v: error %s, indexed %s", r.lazy, got[2], want[2])
		}
	}
}

// TestLazyApplies: only a sequential read of enough data with ids, no index cache and no
// kept chunks skips the index.
func TestLazyApplies(t *testing.T) {
	defer func(n int64) { lazyMin = n }(lazyMin)
	lazyMin = 16
	ids, lines := []byte("1 |a 1\n2 |a 2\n3 |a 3\n"), []byte("|a 1\n|a 2\n|a 3\n")
	for _, tc := range []struct {
		data []byte
		opts ReaderOptions
		lazy bool
	}{
		{ids, ReaderOptions{Sequential: true}, true},
		{ids, ReaderOptions{}, false},
		{lines, ReaderOptions{Sequential: true}, false},
		{ids[:14], ReaderOptions{Sequential: true}, false},
		{ids, ReaderOptions{Sequential: true, KeepDataInMemory: true}, false},
		{ids, ReaderOptions{Sequential: true, SkipSequenceIDs: true}, false},
	} {
		r, err := newReader("f.ctf", tc.data, nil, &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.lazy != tc.lazy {
			t.Errorf("%q with %+v: lazy %v", tc.data, tc.opts, r.lazy)
		}
	}
}
