package ctf

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// TestSplitMatchesSequential parses chunks in 2 to 7 pieces and requires the result of a
// sequential parse, for id mode, line mode, definesMBSize and files with errors (where the
// pieces give up and the chunk is parsed again in one piece, log included).
func TestSplitMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var ids, lines, dropped, bad strings.Builder
	for q := 0; q < 3000; q++ {
		for l := rng.IntN(4); l >= 0; l-- {
			id := ""
			if l == 0 || rng.IntN(2) == 0 {
				id = fmt.Sprint(q % 700)
			}
			fmt.Fprintf(&ids, "%s |a %d %d |b %d:%d\n", id, q, l, rng.IntN(9), l)
		}
		fmt.Fprintf(&lines, "|b %d:1 |a %d.5 -%d\n", q%9, q, l2(q))
		if q%3 == 0 {
			fmt.Fprintf(&dropped, "|a %d 0\n", q)
		} else {
			fmt.Fprintf(&dropped, "|a %d 1 |b 1:%d\n", q, q)
		}
		if q == 2100 {
			bad.WriteString("|a 1 x |b 1:1\n")
		} else {
			fmt.Fprintf(&bad, "|a %d 2 |b 2:2\n", q)
		}
	}
	defining := []mlfeed.Stream{dense("a", 2), sparse("b", 9)}
	defining[1].DefinesMBSize = true
	for _, tc := range []struct {
		name string
		text string
		in   []mlfeed.Stream
		max  int
	}{
		{"ids", ids.String(), []mlfeed.Stream{dense("a", 2), sparse("b", 9)}, 0},
		{"lines", lines.String(), []mlfeed.Stream{dense("a", 2), sparse("b", 9)}, 0},
		{"definesMBSize", dropped.String(), defining, 0},
		{"errors", bad.String(), []mlfeed.Stream{dense("a", 2), sparse("b", 9)}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log1, log2 bytes.Buffer
			r1, err := newReader("x.ctf", []byte(tc.text), nil, &ReaderOptions{Inputs: tc.in, MaxErrors: tc.max, TraceLevel: 1, Log: &log1})
			if err != nil {
				t.Fatal(err)
			}
			r2, _ := newReader("x.ctf", []byte(tc.text), nil, &ReaderOptions{Inputs: tc.in, MaxErrors: tc.max, TraceLevel: 1, Log: &log2})
			// The reference scans for its sequences; r2 parses the ones its index kept.
			if r1.seqs == nil || r2.seqs == nil {
				t.Fatal("the index kept no sequences")
			}
			r1.seqs = nil
			want, _, _, err1 := parseChunk[float32](context.Background(), r1, 0, nil)
			for n := 2; n <= 7; n++ {
				log2.Reset()
				ctx := sched.WithContext(context.Background(), sched.New(4, 0))
				got, _, _, err2 := parsePieces[float32](ctx, r2, 0, n, 0, nil)
				if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%d pieces: result differs (errors %v / %v)", n, err1, err2)
				}
				if log1.String() != log2.String() {
					t.Fatalf("%d pieces: log differs:\n%s\n---\n%s", n, log2.String(), log1.String())
				}
			}
			if tc.name != "errors" {
				// The pieces themselves must succeed, not fall back.
				pts := r2.splits(0, 5)
				if len(pts) < 5 {
					t.Fatalf("splits %v", pts)
				}
				first := int64(0)
				for k := 0; k+1 < len(pts); k++ {
					if !r2.layout.ids {
						first = int64(bytes.Count(r2.data[:pts[k]], []byte{'\n'}))
					}
					if pc := parsePiece[float32](r2, 0, pts[k], pts[k+1], first); pc.err != nil {
						t.Fatalf("piece %d [%d, %d): %v", k, pts[k], pts[k+1], pc.err)
					}
				}
			}
			if tc.name == "errors" && log1.Len() == 0 {
				t.Fatal("no warnings logged for the malformed line")
			}
		})
	}
}

func l2(q int) int { return q % 4 }

// indexCorpus returns n sequences as CTF text in id mode (sequences of 1 to 4 lines, the id
// of line l of sequence q from id), in line mode, and with a stream "b" that defines the
// minibatch size and is missing from every third line (with the streams to declare for it).
// Every line ends in a comment of pad bytes.
func indexCorpus(n int, id func(q, l int) string, rng *rand.Rand, pad int) (ids, lines, dropped string, defining []mlfeed.Stream) {
	var bi, bl, bd strings.Builder
	comment := " |#" + strings.Repeat("-", pad)
	for q := 0; q < n; q++ {
		for l := rng.IntN(4); l >= 0; l-- {
			fmt.Fprintf(&bi, "%s |a %d %d%s\n", id(q, l), q, l, comment)
		}
		fmt.Fprintf(&bl, "|a %d.5 -%d%s\n", q, l2(q), comment)
		if q%3 == 0 {
			fmt.Fprintf(&bd, "|a %d 0%s\n", q, comment)
		} else {
			fmt.Fprintf(&bd, "|a %d 1 |b 1:%d%s\n", q, q, comment)
		}
	}
	defining = []mlfeed.Stream{dense("a", 2), sparse("b", 9)}
	defining[1].DefinesMBSize = true
	return bi.String(), bl.String(), bd.String(), defining
}

// TestKeptSequences checks the sequences the index keeps against those a scan of each chunk
// finds, in id mode, line mode and with definesMBSize, for several chunk sizes.
func TestKeptSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	ids, lines, dropped, defining := indexCorpus(2000, func(q, l int) string { return fmt.Sprint(q % 500) }, rng, 0)
	for _, tc := range []struct {
		text string
		in   []mlfeed.Stream
	}{
		{ids, []mlfeed.Stream{dense("a", 2)}},
		{lines, []mlfeed.Stream{dense("a", 2)}},
		{dropped, defining},
	} {
		for _, size := range []int64{0, 997, 4096} {
			r, err := newReader("x.ctf", []byte(tc.text), nil, &ReaderOptions{Inputs: tc.in, ChunkSize: size})
			if err != nil {
				t.Fatal(err)
			}
			kept := r.seqs
			if kept == nil {
				t.Fatal("the index kept no sequences")
			}
			r.seqs = nil
			for i := range r.chunks {
				var scanned []seqInfo
				if err := r.scanChunk(i, func(q seqInfo) bool { scanned = append(scanned, q); return true }); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(scanned, kept[i]) {
					t.Fatalf("chunk size %d, chunk %d: kept %v, scanned %v", size, i, kept[i], scanned)
				}
			}
		}
	}
}

// TestIndexParallel indexes files in pieces on 2 to 5 threads and requires the sequential
// index: the same chunks, kept sequences, id warnings and errors, in id mode, line mode, with
// definesMBSize, and with errors (frameMode) in later pieces.
func TestIndexParallel(t *testing.T) {
	defer func(n int64) { indexMinParallel = n }(indexMinParallel)
	indexMinParallel = 0
	rng := rand.New(rand.NewPCG(5, 3))
	// Lines long enough for the pieces to hold their sequences (an eighth of their bytes): the
	// index is then built in parallel, which the test checks.
	ids, lines, dropped, defining := indexCorpus(3000, func(q, l int) string {
		if l == 0 || rng.IntN(2) == 0 {
			return fmt.Sprint(q % 700) // ids repeat: a warning
		}
		return ""
	}, rng, 400)
	for _, tc := range []struct {
		name  string
		text  string
		in    []mlfeed.Stream
		frame bool
	}{
		{"ids", ids, []mlfeed.Stream{dense("a", 2)}, false},
		{"frame", ids, []mlfeed.Stream{dense("a", 2)}, true},
		{"lines", "# comment\n" + lines, []mlfeed.Stream{dense("a", 2)}, false},
		{"definesMBSize", dropped, defining, false},
	} {
		for _, size := range []int64{0, 997, 8192} {
			var log1 bytes.Buffer
			r1, err1 := newReader("x.ctf", []byte(tc.text), nil, &ReaderOptions{Inputs: tc.in, ChunkSize: size, FrameMode: tc.frame, Log: &log1, TraceLevel: 1})
			for threads := 2; threads <= 5; threads++ {
				var log2 bytes.Buffer
				ctx := sched.WithContext(context.Background(), sched.New(threads, 0))
				r2, err2 := newReader("x.ctf", []byte(tc.text), nil, &ReaderOptions{Inputs: tc.in, ChunkSize: size, FrameMode: tc.frame, Log: &log2, TraceLevel: 1, Context: ctx})
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s, chunk size %d, %d threads: error %v, sequentially %v", tc.name, size, threads, err2, err1)
				}
				if log1.String() != log2.String() {
					t.Fatalf("%s, chunk size %d, %d threads: log %q, sequentially %q", tc.name, size, threads, log2.String(), log1.String())
				}
				if err1 != nil {
					continue
				}
				if !reflect.DeepEqual(r1.chunks, r2.chunks) || !reflect.DeepEqual(r1.seqs, r2.seqs) || r2.seqs == nil {
					t.Fatalf("%s, chunk size %d, %d threads: the index differs from the sequential one", tc.name, size, threads)
				}
				if chunks, err := r2.indexParallel(r2.sp.main, func(seqInfo) {}, nil, &seqKeeper{}); chunks == nil || err != nil {
					t.Fatalf("%s, chunk size %d, %d threads: the index was not built in parallel (%v)", tc.name, size, threads, err)
				}
			}
		}
	}
}
