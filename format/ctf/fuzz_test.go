package ctf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzRead feeds arbitrary text to the indexer and parser (streams inferred, errors
// tolerated or not), checks every decoded chunk against the schema and the chunk table, then
// writes the data and reads it back: the values must survive. Seeded with CNTK's test files.
func FuzzRead(f *testing.F) {
	seedCNTK(f)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := &ReaderOptions{MaxErrors: int(mode & 3), ChunkSize: int64(mode>>2)*97 + 1, SkipSequenceIDs: mode&64 != 0}
		if mode&128 != 0 {
			opts.Precision = mlfeed.Float64
		}
		r, err := newReader("f.ctf", data, nil, opts)
		if err != nil {
			return
		}
		sc := r.Schema()
		if sc.Validate() != nil {
			t.Fatalf("invalid schema %+v", sc)
		}
		var chunks []*mlfeed.Chunk
		for i, info := range r.Chunks() {
			c, err := r.ReadChunk(context.Background(), i)
			if err != nil {
				return
			}
			if err := c.Validate(&sc); err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
			if c.Sequences != info.Sequences {
				t.Fatalf("chunk %d: %d sequences, table says %d", i, c.Sequences, info.Sequences)
			}
			chunks = append(chunks, c)
		}
		r.validate(func(error) bool { return true })
		var buf bytes.Buffer
		// Numbered ids: a file without ids may still hold sequences of several samples (an
		// input twice on a line, tolerated by MaxErrors) after chunks of single samples.
		w, err := NewWriter(&buf, sc, &WriterOptions{IDs: IDsNumber})
		if err != nil {
			return // names CTF cannot write (they come from bytes the parser reads as names)
		}
		for _, c := range chunks {
			if err := w.WriteChunk(c); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r2, err := newReader("back.ctf", buf.Bytes(), nil, &ReaderOptions{Inputs: sc.Streams, Precision: opts.Precision})
		if err != nil {
			t.Fatalf("reading back: %v\n%s", err, buf.String())
		}
		var got []*mlfeed.Chunk
		if err := r2.ReadChunks(context.Background(), func(_ int, c *mlfeed.Chunk) error {
			got = append(got, c)
			return nil
		}); err != nil {
			t.Fatalf("reading back: %v\n%s", err, buf.String())
		}
		a, b := values(r, chunks), values(r2, got)
		if a != b {
			t.Fatalf("round trip differs:\n%s\n--- written:\n%s", firstDiff(b, a), buf.String())
		}
	})
}

// FuzzPieces reads arbitrary text as a file of megabytes is read on several threads: indexed
// and its streams inferred in pieces (ReaderOptions.Context with a scheduler, indexMinParallel
// 0, inferMinPiece 1) and each chunk parsed in two to four pieces from the sequences the index
// kept. The errors, the streams, the chunk table, the kept sequences and every chunk must be
// the sequential reader's. Seeded as FuzzRead is.
func FuzzPieces(f *testing.F) {
	seedCNTK(f)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		defer func(n, m int64) { indexMinParallel, inferMinPiece = n, m }(indexMinParallel, inferMinPiece)
		indexMinParallel, inferMinPiece = 0, 1
		opts := ReaderOptions{MaxErrors: int(mode & 3), ChunkSize: int64(mode>>2&15)*97 + 1, SkipSequenceIDs: mode&64 != 0}
		if mode&128 != 0 {
			opts.Precision = mlfeed.Float64
		}
		r1, err1 := newReader("f.ctf", data, nil, &opts)
		ctx := sched.WithContext(context.Background(), sched.New(3, 0))
		par := opts
		par.Context = ctx
		r2, err2 := newReader("f.ctf", data, nil, &par)
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("opening: error %v, sequentially %v", err2, err1)
		}
		if err1 != nil {
			return
		}
		if !reflect.DeepEqual(r1.schema, r2.schema) || !reflect.DeepEqual(r1.inferred, r2.inferred) {
			t.Fatalf("the streams differ from the sequential reader's:\n%+v\n%+v", r2.schema, r1.schema)
		}
		if !reflect.DeepEqual(r1.chunks, r2.chunks) || !reflect.DeepEqual(r1.seqs, r2.seqs) {
			t.Fatalf("the index differs from the sequential one:\n%+v\n%+v", r2.chunks, r1.chunks)
		}
		n := 2 + int(mode)%3
		for i := range r1.chunks {
			var want, got *mlfeed.Chunk
			if r1.double {
				want, _, _, err1 = parseChunk[float64](context.Background(), r1, i, nil)
				got, _, _, err2 = parsePieces[float64](ctx, r2, i, n, 0, nil)
			} else {
				want, _, _, err1 = parseChunk[float32](context.Background(), r1, i, nil)
				got, _, _, err2 = parsePieces[float32](ctx, r2, i, n, 0, nil)
			}
			if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(got, want) {
				t.Fatalf("chunk %d in %d pieces differs (errors %v / %v)", i, n, err2, err1)
			}
		}
	})
}

// seedCNTK seeds f with CNTK's CTF test files and two lines of every feature.
func seedCNTK(f *testing.F) {
	if d := testutil.SharedDir(); d != "" {
		files, _ := filepath.Glob(filepath.Join(d, "testdata", "cntk", "ctf", "*.txt"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil && len(b) < 64<<10 {
				f.Add(b, uint8(3))
			}
		}
	}
	f.Add([]byte("1 |a 1 2 |b 3:1\n|a 3\n2 |b 1:1.5e3 |a 7|# c\r\n"), uint8(0))
	f.Add([]byte("\xEF\xBB\xBF|x 1.e5 |y -2:1 |z 5. +3\n| |#|# x\n"), uint8(1))
	f.Add([]byte("|x 3:1 3:2 |y 0.07670275135766862 1e39\n|x 5:1 2:1 5:0.25 |y 1e-50 2\n"), uint8(1))
}

// values is flat without the ids, which a file without ids gains when written.
func values(r *Reader, chunks []*mlfeed.Chunk) string {
	var lines []string
	for _, l := range strings.Split(flat(r, chunks), "\n") {
		if i := strings.Index(l, ": "); i >= 0 && !strings.Contains(l[:i], "=") {
			l = l[i+1:]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
