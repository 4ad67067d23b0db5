package tfrecord

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader feeds arbitrary bytes to the reader (auto compression and records). Whatever it
// accepts must decode without panicking, in chunks of a few records and into reused chunks
// alike, agree with its own index (sequence lengths), describe to the engine (RawSamples,
// the file mapped) only what decodes so, and, read as Examples, write back and
// read again to the same values; it must never allocate from a length field the input does
// not back.
func FuzzReader(f *testing.F) {
	testutil.Seed(f, filepath.Join("testdata", "penguin_*.tfrecord.gz"))
	for _, name := range []string{"penguin_eval.tfrecord.gz", "seq_eval.tfrecord.gz"} {
		plain := gunzipFile(f, filepath.Join("testdata", name))
		// The first four records, plain.
		end := 0
		for k := 0; k < 4 && end < len(plain); k++ {
			end += 16 + int(binary.LittleEndian.Uint64(plain[end:]))
		}
		f.Add(plain[:end])
	}
	f.Add(file(exampleBytes(entry("dense", 2, floats(1, 2)), entry("b", 1, []byte{0x0a, 1, 'x'})), exampleBytes(entry("dense", 2, floats(3, 4)), entry("v", 3, ints(-1, 2)))))
	f.Add(file(exampleBytes(entry("x", 2, floats(1, 2, 3, 4, 5, 6, 7, 8)), entry("y", 3, ints(1))),
		exampleBytes(entry("x", 2, floats(9, 10, 11, 12, 13, 14, 15, 16)), entry("y", 3, ints(2)))))
	f.Fuzz(fuzzOne)
}

// fuzzOne is FuzzReader's check of one input.
func fuzzOne(t *testing.T, data []byte) {
	ctx := context.Background()
	{
		if len(data) > 64<<10 {
			return // the seeds are smaller; larger inputs only slow the search
		}
		opts := &ReaderOptions{FileName: "fuzz", ChunkSize: 200, MaxMemory: 1 << 20, MaxRecord: 1 << 20}
		r, err := NewReader(bytes.NewReader(data), int64(len(data)), opts)
		if err != nil {
			return
		}
		defer r.Close()
		// Mapped, the same bytes may be described to the engine (RawSamples): only as they
		// decode.
		dir := t.TempDir()
		name := filepath.Join(dir, "fuzz.tfrecord")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if m, err := Open(name, opts); err == nil {
			checkRawSamples(t, m)
			m.Close()
		}
		var prev *mlfeed.Chunk
		var chunks []*mlfeed.Chunk
		for i := range r.Chunks() {
			c, err := r.ReadChunk(ctx, i)
			if err != nil {
				t.Fatalf("chunk %d of a file the scan accepted: %v", i, err)
			}
			if err := c.Validate(&r.schema); err != nil {
				t.Fatal(err)
			}
			l, _ := r.SequenceLengths(i)
			var sum int64
			for q, n := range mlfeed.LengthsOf(c) {
				if n != l[q] {
					t.Fatalf("chunk %d sequence %d: index length %d, decoded %d", i, q, l[q], n)
				}
				sum += n
			}
			if sum != r.Chunks()[i].Samples || c.Sequences != r.Chunks()[i].Sequences {
				t.Fatalf("chunk %d: table %+v, decoded %d sequences %d samples", i, r.Chunks()[i], c.Sequences, sum)
			}
			reused, err := r.ReadChunkReuse(ctx, i, prev)
			if err != nil {
				t.Fatal(err)
			}
			one, _ := mlfeed.NewMemorySource(r.schema, c)
			two, _ := mlfeed.NewMemorySource(r.schema, reused)
			if err := mlfeed.Diff(ctx, one, two); err != nil {
				t.Fatalf("chunk %d reused: %v", i, err)
			}
			prev = reused
			chunks = append(chunks, c)
		}
		if r.Mode() != RecordsExample {
			return
		}
		for i := range r.streams {
			if r.streams[i].seq && totalSamples(chunks, i) == 0 {
				return // written back, present everywhere and empty: read as dim 0, not as no samples
			}
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, r.schema, nil)
		if err != nil {
			t.Fatalf("the writer refuses the schema %v read from Examples: %v", r.schema, err)
		}
		for _, c := range chunks {
			if err := w.WriteChunk(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		back, err := NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()), nil)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if err := mlfeed.Diff(ctx, r, back); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	}
}

func totalSamples(chunks []*mlfeed.Chunk, s int) int64 {
	var n int64
	for _, c := range chunks {
		n += c.Streams[s].Samples()
	}
	return n
}
