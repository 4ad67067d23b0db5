package idx

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sniff"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader feeds arbitrary bytes to the reader. Whatever it accepts must decode without
// panicking and re-encode to exactly the input bytes (the png fuzz test's round trip); it must
// never allocate from a header claim the input does not back.
func FuzzReader(f *testing.F) {
	for _, et := range []mlfeed.ElemType{mlfeed.Uint8, mlfeed.Int16, mlfeed.Float64} {
		file, _ := randomFile(f, et, []int{3, 2, 2}, false)
		f.Add(file)
		gz, _ := randomFile(f, et, []int{2, 3}, true)
		f.Add(gz)
	}
	if d := testutil.SharedDir(); d != "" {
		labels, err := os.ReadFile(filepath.Join(d, "testdata", "mnist", "t10k-labels-idx1-ubyte"))
		if err == nil {
			f.Add(labels)
		}
		if gz, err := os.ReadFile(filepath.Join(d, "testdata", "mnist", "t10k-labels-idx1-ubyte.gz")); err == nil {
			f.Add(gz)
		}
		if img, err := os.ReadFile(filepath.Join(d, "testdata", "mnist", "t10k-images-idx3-ubyte")); err == nil {
			// The real header and three records, with the count patched to 3.
			seed := append([]byte{}, img[:16+3*784]...)
			seed[4], seed[5], seed[6], seed[7] = 0, 0, 0, 3
			f.Add(seed)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r *Reader
		var err error
		gz := sniff.IsGzip(data)
		if gz {
			r, err = NewGzipReader(bytes.NewReader(data), int64(len(data)), &ReaderOptions{FileName: "fuzz", MaxMemory: 1 << 20}, nil)
		} else {
			r, err = NewReader(bytes.NewReader(data), int64(len(data)), &ReaderOptions{FileName: "fuzz", ChunkSize: 64})
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		sink, err := NewSink(&out, r.Schema(), r.Header().Records(), nil)
		if err != nil {
			t.Fatalf("reader accepted a file the writer refuses: %v", err)
		}
		var prev *mlfeed.Chunk // for ReadChunkReuse: decoding into it must give ReadChunk's values
		for i := range r.Chunks() {
			c, err := r.ReadChunk(ctx, i)
			if err != nil {
				if gz {
					return // a corrupt compressed payload is found when it is read
				}
				t.Fatal(err)
			}
			if prev, err = r.ReadChunkReuse(ctx, i, prev); err != nil || !bytes.Equal(prev.Streams[0].Values.Bytes, c.Streams[0].Values.Bytes) {
				t.Fatalf("chunk %d: ReadChunkReuse differs from ReadChunk (%v)", i, err)
			}
			// Where RawSamples describes the chunk (gzip payloads held in memory), each
			// record it describes is the decoded record in the file's byte order.
			if b, off, stride, swap, ok := r.RawSamples(i, 0); ok {
				size := r.Header().RecordBytes()
				want := c.Streams[0].Values.Bytes
				for q := range c.Sequences {
					got := b[off+q*stride : off+q*stride+size]
					for e := 0; e < size; e++ {
						if swap > 1 && got[e] != want[q*size+e-e%swap+swap-1-e%swap] || swap <= 1 && got[e] != want[q*size+e] {
							t.Fatalf("chunk %d record %d: RawSamples differs from the decoded record", i, q)
						}
					}
				}
			}
			if err := sink.WriteChunk(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		if !gz && !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("round trip changed the bytes")
		}
	})
}
