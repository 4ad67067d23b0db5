package cbf

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader feeds arbitrary bytes to the reader. It must never panic, never allocate more
// than the input's size justifies (a header's claims are checked before allocating), and
// whatever it decodes must survive a round trip through the writer.
func FuzzReader(f *testing.F) {
	// Seeds: every real CBF file of the corpus cut down to its first two sequences (written
	// again with the same streams, types and values), and a small file with a dense and a
	// sparse stream over several chunks. Whole files would be valid seeds too, but the fuzzer
	// minimizes each new input in time quadratic in its size, which for files of kilobytes
	// takes all of a short fuzzing run.
	addCorpusSeeds(f, 2, "cbf", filepath.Join("generated", "ctf2bin"))
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{
		{Name: "d", Storage: mlfeed.Dense, Type: mlfeed.Float64, Dim: 2},
		{Name: "s", Storage: mlfeed.Sparse, Type: mlfeed.Float32, Dim: 5},
	}}
	c := &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{
		{SeqStart: []int64{0, 1, 1, 3}, Values: mlfeed.NewBuffer(mlfeed.Float64, 6)},
		sparseChunk([][][2]float32{{{1, 2}}}, [][][2]float32{{{0, 1}, {4, 2}}, {}}, [][][2]float32{}).Streams[0],
	}}
	f.Add(writeChunks(f, schema, &WriterOptions{ChunkSize: 40}, c))

	f.Fuzz(func(t *testing.T, data []byte) {
		limit := 64*uint64(len(data)) + 1<<20
		before := allocated()
		decoded, schema, ok := fuzzRead(data)
		if used := allocated() - before; used > limit {
			// The count is the process's: measure again, in case another goroutine (a
			// test's leftover) allocated meanwhile.
			before = allocated()
			fuzzRead(data)
			if used = allocated() - before; used > limit {
				t.Fatalf("reading %d bytes allocated %d bytes", len(data), used)
			}
		}
		if !ok {
			return
		}
		// The writer writes no chunk for a chunk of no sequences, so a data set of none reads
		// back with no chunks at all: nothing to compare.
		if decoded.Sequences == 0 {
			return
		}
		// Round trip: the writer sorts sparse indices, so compare only sorted data.
		for k := range decoded.Streams {
			sd := &decoded.Streams[k]
			for s := 0; s+1 < len(sd.SampleStart); s++ {
				if !slices.IsSorted(sd.Indices[sd.SampleStart[s]:sd.SampleStart[s+1]]) {
					return
				}
			}
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, schema, nil)
		if err != nil {
			t.Fatalf("the writer refuses a schema the reader accepted: %v", err)
		}
		if err := w.WriteChunk(decoded); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, _, ok := fuzzRead(out.Bytes())
		if !ok {
			t.Fatal("the writer's output does not read back")
		}
		if !chunksEqual(decoded, again) {
			t.Fatal("the data changed in a round trip")
		}
	})
}

// checkInPlace panics unless c and err, chunk i of data as rd read it, are what the decoder
// that copies each stream's values to new memory makes of it, when rd decoded it in place.
func checkInPlace(rd *Reader, data []byte, i int, c *mlfeed.Chunk, err error) {
	if !rd.inPlace {
		return
	}
	off, end := rd.header.Chunks[i].Offset, rd.ends[i]
	if end > int64(len(data)) {
		return // ReadAt fails: no bytes to decode
	}
	d := decoder{rd: rd, chunk: i, b: bytes.Clone(data[off:end]), base: off}
	want, werr := d.decode()
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() || err == nil && !chunksEqual(c, want) {
		panic(fmt.Sprintf("chunk %d: decoded in place: %v; copied: %v (equal %v)", i, err, werr, err == nil && werr == nil && chunksEqual(c, want)))
	}
}

// firstSequences returns the CBF file name cut down to its first n sequences, or nil when
// it cannot be read.
func firstSequences(t testing.TB, name string, n int) []byte {
	rd, err := Open(name, nil)
	if err != nil {
		return nil
	}
	defer rd.Close()
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		return nil
	}
	return writeChunks(t, rd.Schema(), nil, c.Slice(0, min(n, c.Sequences)))
}

// allocated returns the bytes allocated on the heap so far, without stopping the world as
// runtime.ReadMemStats does.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// fuzzRead decodes every chunk of data, reporting whether all of it decoded.
func fuzzRead(data []byte) (*mlfeed.Chunk, mlfeed.Schema, bool) {
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		return nil, mlfeed.Schema{}, false
	}
	var parts []*mlfeed.Chunk
	var prev *mlfeed.Chunk
	for i := range rd.Chunks() {
		c, err := rd.ReadChunk(context.Background(), i)
		checkInPlace(rd, data, i, c, err)
		if err != nil {
			return nil, mlfeed.Schema{}, false
		}
		parts = append(parts, c)
		// The same chunk decoded into the previous chunk's memory must be the same.
		if prev, err = rd.ReadChunkReuse(context.Background(), i, prev); err != nil || !chunksEqual(prev, c) {
			panic(fmt.Sprintf("chunk %d: ReadChunkReuse differs from ReadChunk (%v)", i, err))
		}
	}
	if len(parts) == 0 {
		return nil, mlfeed.Schema{}, false
	}
	return mlfeed.ConcatChunks(parts), rd.Schema(), true
}

// addCorpusSeeds adds as seeds the real CBF files of the shared corpus under
// testdata/cntk/DIR, each cut down to its first n sequences (firstSequences).
func addCorpusSeeds(f *testing.F, n int, dirs ...string) {
	d := testutil.SharedDir()
	if d == "" {
		return
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "testdata", "cntk", dir, "*.bin"))
		for _, name := range files {
			if b := firstSequences(f, name, n); b != nil {
				f.Add(b)
			}
		}
	}
}
