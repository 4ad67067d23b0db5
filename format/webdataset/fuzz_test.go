package webdataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzReader feeds arbitrary bytes to the reader, seeded with the real shards (the plain ones
// cut to their first members, the compressed ones whole). Whatever it accepts must decode
// without panicking, in chunks of a sample or two and into reused chunks alike, agree with its
// own index, and, where every member decodes, write back and read again to the same values;
// it must never allocate from a size field the input does not back.
func FuzzReader(f *testing.F) {
	testutil.Seed(f, filepath.Join("testdata", "*.tgz"))
	testutil.Seed(f, filepath.Join("testdata", "*.tar.gz"))
	for _, name := range []string{"compressed.tar", "mpdata-20.tar", "testgz-16.tar", "written.tar"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 12<<10)])
	}
	f.Add(tarOf(f, "a.cls", "1", "a.txt", "x", "b.npy", npyBytes("<f4", []int{2}, make([]byte, 8)), "b.jpg", "\x00"))
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, data []byte) {
	if len(data) > 64<<10 {
		return // the seeds are smaller; larger inputs only slow the search
	}
	ctx := context.Background()
	opts := &ReaderOptions{FileName: "fuzz", ChunkSize: 700, MaxMemory: 1 << 20, MaxMember: 1 << 20}
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return
	}
	defer r.Close()
	var prev *mlfeed.Chunk
	var chunks []*mlfeed.Chunk
	decoded := true
	for i := range r.Chunks() {
		c, err := r.ReadChunk(ctx, i)
		if err != nil {
			decoded = false // a member its extension does not describe
			continue
		}
		if err := c.Validate(&r.schema); err != nil {
			t.Fatal(err)
		}
		if c.Sequences != r.Chunks()[i].Sequences || len(c.IDs) != c.Sequences {
			t.Fatalf("chunk %d: %d sequences, %d ids, the table says %d", i, c.Sequences, len(c.IDs), r.Chunks()[i].Sequences)
		}
		if prev, err = r.ReadChunkReuse(ctx, i, prev); err != nil {
			t.Fatalf("reuse of chunk %d: %v", i, err)
		}
		chunks = append(chunks, c)
	}
	if !decoded || len(chunks) == 0 {
		return
	}
	var out bytes.Buffer
	w, err := NewWriter(&out, r.Schema(), nil)
	if err != nil {
		return // stream names that are not lowercase extensions, ...
	}
	for _, c := range chunks {
		if err := w.WriteChunk(c); err != nil {
			return // keys that do not read back as keys
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()), &ReaderOptions{FileName: "back"})
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if err := mlfeed.Diff(ctx, r, back); err != nil {
		t.Fatalf("written back: %v", err)
	}
}
