package tfrecord

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/mmap"
)

var _ mlfeed.RawSampler = (*Reader)(nil)

// checkRawSamples asks RawSamples for every chunk and stream of r and reports how many chunks
// it describes: where it does, the chunk must decode and every sample it describes must be
// the decoded sample, byte for byte (the engine packs from that description instead of
// decoding, so it must not accept what decoding refuses).
func checkRawSamples(t *testing.T, r *Reader) (raw int) {
	t.Helper()
	sc := r.Schema()
	for i := range r.Chunks() {
		var decoded *mlfeed.Chunk
		described := 0
		for k, st := range sc.Streams {
			var b []byte
			var off, stride, swap int
			var ok bool
			if err := mmap.Guard(func() error { b, off, stride, swap, ok = r.RawSamples(i, k); return nil }); err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			described++
			if decoded == nil {
				var err error
				if decoded, err = r.ReadChunk(context.Background(), i); err != nil {
					t.Fatalf("chunk %d: RawSamples describes it, but it does not decode: %v", i, err)
				}
			}
			size := st.Dim * st.Type.Size()
			want := decoded.Streams[k].Values.Bytes
			if swap != 0 || len(want) != decoded.Sequences*size || decoded.Streams[k].Samples() != int64(decoded.Sequences) {
				t.Fatalf("chunk %d stream %d: swap %d, %d bytes decoded for %d sequences", i, k, swap, len(want), decoded.Sequences)
			}
			for q := range decoded.Sequences {
				if off+q*stride+size > len(b) || !bytes.Equal(b[off+q*stride:off+q*stride+size], want[q*size:(q+1)*size]) {
					t.Fatalf("chunk %d stream %d sample %d: RawSamples differs from the decoded sample", i, k, q)
				}
			}
		}
		if described != 0 && described != len(sc.Streams) {
			t.Fatalf("chunk %d: RawSamples describes %d of %d streams", i, described, len(sc.Streams))
		}
		if described > 0 {
			raw++
		}
	}
	return raw
}

// writeTemp writes data to a file and opens it (mapped).
func writeTemp(t *testing.T, data []byte, opts *ReaderOptions) *Reader {
	t.Helper()
	name := filepath.Join(t.TempDir(), "x.tfrecord")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRawSamples: records of one layout (a packed float_list, an int64 label, in either
// order of the map's entries) are described in place, and the label decoded and kept; other
// layouts are left to ReadChunk: records of different lengths, a float_list packed in two
// fields or unpacked, a bytes feature, SequenceExamples, files read with ReadAt.
func TestRawSamples(t *testing.T) {
	mk := func(n int, rec func(q int) []byte) []byte {
		var recs [][]byte
		for q := range n {
			recs = append(recs, rec(q))
		}
		return file(recs...)
	}
	img := func(q int) []byte {
		v := make([]float32, 64)
		for k := range v {
			v[k] = float32(q*64+k) / 3
		}
		return floats(v...)
	}
	opts := &ReaderOptions{ChunkSize: 2000}
	for _, c := range []struct {
		name string
		data []byte
		raw  bool
	}{
		{"image then label", mk(100, func(q int) []byte {
			return exampleBytes(entry("image", 2, img(q)), entry("label", 3, ints(int64(q%10))))
		}), true},
		{"label then image", mk(100, func(q int) []byte {
			return exampleBytes(entry("label", 3, ints(int64(q%10))), entry("image", 2, img(q)))
		}), true},
		{"labels of two lengths", mk(200, func(q int) []byte {
			return exampleBytes(entry("image", 2, img(q)), entry("label", 3, ints(int64(q)))) // 2 bytes from 128
		}), false},
		{"entries in varying order", mk(100, func(q int) []byte {
			if q%2 == 0 {
				return exampleBytes(entry("image", 2, img(q)), entry("label", 3, ints(int64(q%10))))
			}
			return exampleBytes(entry("label", 3, ints(int64(q%10))), entry("image", 2, img(q)))
		}), false},
		{"floats in two packed fields", mk(100, func(q int) []byte {
			return exampleBytes(entry("image", 2, append(floats(1, 2), floats(3, 4, float32(q))...)))
		}), false},
		{"floats unpacked", mk(100, func(q int) []byte {
			return exampleBytes(entry("image", 2, []byte{0x0d, 0, 0, 0x80, 0x3f, 0x0d, 0, 0, 0, byte(q)}))
		}), false},
		{"a bytes feature", mk(100, func(q int) []byte {
			return exampleBytes(entry("image", 2, img(q)), entry("b", 1, []byte{0x0a, 1, 'x'}))
		}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := writeTemp(t, c.data, opts)
			if len(r.Chunks()) < 3 {
				t.Fatalf("%d chunks", len(r.Chunks()))
			}
			raw := checkRawSamples(t, r)
			switch {
			case c.raw && raw != len(r.Chunks()):
				t.Fatalf("%d of %d chunks described", raw, len(r.Chunks()))
			case !c.raw && raw == len(r.Chunks()):
				t.Fatalf("every chunk described")
			}
			if c.raw {
				// Read with ReadAt: never described.
				rd, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), opts)
				if err != nil {
					t.Fatal(err)
				}
				if n := checkRawSamples(t, rd); n != 0 {
					t.Fatalf("read with ReadAt: %d chunks described", n)
				}
			}
		})
	}
	// SequenceExamples and files of real features: whatever is described is right.
	for _, name := range []string{"penguin_eval.tfrecord.gz", "seq_eval.tfrecord.gz"} {
		checkRawSamples(t, writeTemp(t, gunzipFile(t, filepath.Join("testdata", name)), nil))
	}
}
