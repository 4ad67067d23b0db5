package cbf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestCorrupt damages real files one field at a time and checks that reading fails with the
// right sentinel, at the right byte offset, naming the field.
func TestCorrupt(t *testing.T) {
	sparse, err := os.ReadFile(testutil.Testdata(t, "cntk", "cbf", "10x10_sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	two, err := os.ReadFile(testutil.Testdata(t, "cntk", "cbf", "Simple_dense.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// 10x10_sparse.bin: one sparse float64 stream "features" (dim 100), one chunk of 10
	// sequences of 10 samples with 5 values each. The header is at 6532: stream 0 at 6548
	// (encoding, name length 6549, name 6553, element type 6561, dim 6562), the chunk table
	// at 6566. In the chunk (offset 12): lengths at 12, then sequence 0 of the stream:
	// nSamples 52, nnz 56, values 60, indices 460, per-sample counts 660.
	const hoff = 6532
	put32 := func(b []byte, off int, v uint32) { le.PutUint32(b[off:], v) }
	cases := []struct {
		name   string
		base   []byte
		damage func(b []byte) []byte
		kind   error
		offset int64
		field  string
		onRead bool // the error comes from ReadChunk, not from opening
	}{
		{"magic", sparse, func(b []byte) []byte { b[0] = 'x'; return b }, ErrFormat, 0, "magic", false},
		{"short magic", sparse, func(b []byte) []byte { return b[:5] }, ErrTruncated, 5, "magic", false},
		{"short junk", sparse, func(b []byte) []byte { return []byte("hi") }, ErrFormat, 0, "magic", false},
		{"version", sparse, func(b []byte) []byte { put32(b, 8, 2); return b }, ErrUnsupported, 8, "version", false},
		{"no header", sparse, func(b []byte) []byte { return b[:20] }, ErrTruncated, 20, "header", false},
		{"header offset", sparse, func(b []byte) []byte { le.PutUint64(b[len(b)-8:], 3); return b }, ErrFormat, 6582, "header offset", false},
		{"header offset past end", sparse, func(b []byte) []byte { le.PutUint64(b[len(b)-8:], 1<<62); return b }, ErrFormat, 6582, "header offset", false},
		{"header magic", sparse, func(b []byte) []byte { b[hoff] ^= 1; return b }, ErrFormat, hoff, "header magic", false},
		{"no streams", sparse, func(b []byte) []byte { put32(b, hoff+12, 0); return b }, ErrFormat, hoff + 12, "numStreams", false},
		{"too many streams", sparse, func(b []byte) []byte { put32(b, hoff+12, 1<<31); return b }, ErrTooLarge, hoff + 12, "numStreams", false},
		{"encoding", sparse, func(b []byte) []byte { b[hoff+16] = 2; return b }, ErrFormat, hoff + 16, "stream 0 encoding", false},
		{"name length", sparse, func(b []byte) []byte { put32(b, hoff+17, 1<<30); return b }, ErrTooLarge, hoff + 17, "stream 0 name length", false},
		{"empty name", sparse, func(b []byte) []byte {
			put32(b, hoff+17, 0)
			return append(b[:hoff+21], b[hoff+29:]...) // still claims the old header offset
		}, ErrFormat, hoff + 21, "stream 0 name", false},
		{"control character in name", sparse, func(b []byte) []byte { b[hoff+21] = '\n'; return b }, ErrFormat, hoff + 21, "stream 0 name", false},
		{"element type", sparse, func(b []byte) []byte { b[hoff+29] = 2; return b }, ErrFormat, hoff + 29, "stream 0 element type", false},
		{"dim 0", sparse, func(b []byte) []byte { put32(b, hoff+30, 0); return b }, ErrFormat, hoff + 30, "stream 0 dim", false},
		{"sparse dim beyond int32", sparse, func(b []byte) []byte { put32(b, hoff+30, 1<<31); return b }, ErrFormat, hoff + 30, "stream 0 dim", false},
		{"too many chunks", sparse, func(b []byte) []byte { put32(b, hoff+8, 1000); return b }, ErrTooLarge, hoff + 8, "numChunks", false},
		{"chunk offset before the data", sparse, func(b []byte) []byte { le.PutUint64(b[hoff+34:], 4); return b }, ErrFormat, hoff + 34, "chunk table entry 0", false},
		{"chunk offset in the header", sparse, func(b []byte) []byte { le.PutUint64(b[hoff+34:], hoff+1); return b }, ErrFormat, hoff + 34, "chunk table entry 0", false},
		{"too many sequences", sparse, func(b []byte) []byte { put32(b, hoff+42, 1<<30); return b }, ErrTooLarge, hoff + 42, "chunk table entry 0 numSequences", false},
		{"too many samples", sparse, func(b []byte) []byte { put32(b, hoff+46, 1<<30); return b }, ErrTooLarge, hoff + 46, "chunk table entry 0 numSamples", false},
		{"samples without sequences", sparse, func(b []byte) []byte { put32(b, hoff+42, 0); return b }, ErrFormat, hoff + 46, "chunk table entry 0 numSamples", false},
		{"lengths disagree with the table", sparse, func(b []byte) []byte { put32(b, hoff+46, 99); return b }, ErrFormat, 12, "chunk 0 sequence lengths", true},
		{"length disagrees with the streams", sparse, func(b []byte) []byte { put32(b, 12, 9); put32(b, 16, 11); return b }, ErrFormat, 12, "chunk 0 sequence 0 length", true},
		{"nSamples too large", sparse, func(b []byte) []byte { put32(b, 52, 1<<31); return b }, ErrTooLarge, 52, `stream "features" sequence 0 nSamples`, true},
		{"negative nnz", sparse, func(b []byte) []byte { put32(b, 56, 0xffffffff); return b }, ErrFormat, 56, `stream "features" sequence 0 nnz`, true},
		{"nnz too large", sparse, func(b []byte) []byte { put32(b, 56, 1<<30); return b }, ErrTooLarge, 56, `stream "features" sequence 0 nnz`, true},
		{"index = dim", sparse, func(b []byte) []byte { put32(b, 460+8, 100); return b }, ErrFormat, 468, `stream "features" sequence 0 index`, true},
		{"negative index", sparse, func(b []byte) []byte { put32(b, 460, 0xfffffffe); return b }, ErrFormat, 460, `stream "features" sequence 0 index`, true},
		{"sample nnz beyond the sequence's", sparse, func(b []byte) []byte { put32(b, 660, 6); put32(b, 664, 50); return b }, ErrFormat, 664, `stream "features" sequence 0 sample nnz`, true},
		{"sample nnz short of nnz", sparse, func(b []byte) []byte { put32(b, 696, 4); return b }, ErrFormat, 660, `stream "features" sequence 0 sample nnz`, true},
		{"negative sample nnz", sparse, func(b []byte) []byte { put32(b, 660, 0xffffffff); return b }, ErrFormat, 660, `stream "features" sequence 0 sample nnz`, true},
		{"duplicate stream name", two, func(b []byte) []byte {
			// Simple_dense.bin's header is at 280012; its first stream's name ("features")
			// becomes "labels", the second stream's name.
			const h = 280012
			return append(append(b[:h+17:h+17], 6, 0, 0, 0, 'l', 'a', 'b', 'e', 'l', 's'), b[h+29:]...)
		}, ErrFormat, 280012 + 37, "stream 1 name", false},
		{"dense nSamples too large", two, func(b []byte) []byte { put32(b, 12+4*10000, 1<<20); return b }, ErrTooLarge, 40012, `stream "features" sequence 0 nSamples`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.damage(bytes.Clone(tc.base))
			rd, err := NewReader(bytes.NewReader(b), int64(len(b)), &ReaderOptions{FileName: "x.bin"})
			if err == nil {
				if !tc.onRead {
					t.Fatal("opened")
				}
				_, err = rd.ReadChunk(context.Background(), 0)
			} else if tc.onRead {
				t.Fatalf("failed to open: %v", err)
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			var pe *mlfeed.PosError
			if !errors.As(err, &pe) || pe.File != "x.bin" || pe.Offset != tc.offset || !strings.Contains(pe.Field, tc.field) {
				t.Fatalf("error %q: want offset %d, field %q", err, tc.offset, tc.field)
			}
		})
	}
}

// TestStrict checks what only Validate reports.
func TestStrict(t *testing.T) {
	good, err := os.ReadFile(testutil.Testdata(t, "cntk", "cbf", "10x10_sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const hoff = 6532
	cases := []struct {
		name   string
		damage func(b []byte) []byte
		field  string
	}{
		{"unsorted indices", func(b []byte) []byte {
			x, y := bytes.Clone(b[460:464]), bytes.Clone(b[464:468])
			copy(b[460:], y)
			copy(b[464:], x)
			return b
		}, "index"},
		{"bytes after the table", func(b []byte) []byte {
			tr := bytes.Clone(b[len(b)-8:])
			return append(append(b[:len(b)-8], 0, 0, 0, 0), tr...)
		}, "trailer"},
		{"bytes after a chunk", func(b []byte) []byte {
			// Move the header 4 bytes on, leaving 4 stray bytes at the end of the chunk.
			h := bytes.Clone(b[hoff:])
			b = append(append(b[:hoff], 0, 0, 0, 0), h...)
			le.PutUint64(b[len(b)-8:], hoff+4)
			return b
		}, "chunk 0 end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.damage(bytes.Clone(good))
			path := t.TempDir() + "/x.bin"
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var problems []error
			if err := Validate(path, nil, func(err error) bool { problems = append(problems, err); return true }); err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || !strings.Contains(problems[0].Error(), tc.field) {
				t.Fatalf("problems %v, want one about %q", problems, tc.field)
			}
			// Reading tolerates it.
			rd, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			readAll(t, rd)
		})
	}
}

// sparseFile is a ReaderAt of size bytes that reads as zeros except for the given bytes at
// their offsets; it counts the bytes read.
type sparseFile struct {
	size  int64
	parts map[int64][]byte
	read  int64
}

func (f *sparseFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := len(p)
	if int64(n) > f.size-off {
		n = int(f.size - off)
	}
	clear(p[:n])
	for at, b := range f.parts {
		for i, c := range b {
			if j := at + int64(i) - off; j >= 0 && j < int64(n) {
				p[j] = c
			}
		}
	}
	f.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestHugeHeaderRegion checks that a header offset far from the end does not make the reader
// read everything up to the trailer.
func TestHugeHeaderRegion(t *testing.T) {
	const size = 1 << 40
	hdr := le.AppendUint64(nil, Magic)
	hdr = le.AppendUint32(hdr, 0) // chunks
	hdr = le.AppendUint32(hdr, 1) // streams
	hdr = append(hdr, encDense, 1, 0, 0, 0, 'x', elemFloat, 1, 0, 0, 0)
	f := &sparseFile{size: size, parts: map[int64][]byte{
		0:        prefix(),
		12:       hdr,
		size - 8: le.AppendUint64(nil, 12),
	}}
	rd, err := NewReader(f, size, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Chunks()) != 0 || f.read > 1<<16 {
		t.Fatalf("%d chunks; read %d bytes", len(rd.Chunks()), f.read)
	}
	if _, err := NewReader(f, size, &ReaderOptions{strict: true}); !errors.Is(err, ErrFormat) {
		t.Fatalf("strict: %v, want trailing bytes reported", err)
	}
}
