package mds

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzShard feeds arbitrary bytes as the one shard of a data set whose index.json is the
// scalars or arrays data set's first entry (the shard's size set to the input's). Whatever
// the reader accepts must decode without panicking and agree with its own chunk table; it
// must never allocate from a count or size the input does not back.
func FuzzShard(f *testing.F) {
	testutil.Seed(f, filepath.Join("testdata", "scalars", "shard.*.mds"))
	for _, name := range []string{"shard.00000.mds.zstd", "shard.00001.mds.zstd"} {
		z, err := os.ReadFile(filepath.Join("testdata", "arrays", name))
		if err != nil {
			f.Fatal(err)
		}
		c, _ := codecOf("zstd")
		raw, err := c.decompress(z, 1<<20)
		if err == nil {
			f.Fatal("decompress took a wrong size")
		}
		ix, _ := ReadIndex(filepath.Join("testdata", "arrays"))
		raw, err = c.decompress(z, ix.Shards[0].RawData.Bytes)
		if err == nil {
			f.Add(raw)
		}
	}
	entries := map[bool]ShardInfo{}
	for _, set := range []string{"scalars", "arrays"} {
		ix, err := ReadIndex(filepath.Join("testdata", set))
		if err != nil {
			f.Fatal(err)
		}
		e := ix.Shards[0]
		e.Compression, e.ZipData = nil, nil
		entries[set == "arrays"] = e
	}
	// One directory, its files rewritten for every input: a worker runs one input at a time.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		for _, arrays := range []bool{false, true} {
			e := entries[arrays]
			e.RawData = &FileInfo{Basename: "shard.00000.mds", Bytes: int64(len(data))}
			if len(data) >= 4 {
				e.Samples = int64(data[0]) | int64(data[1])<<8 // the shard's own count, bounded
			}
			b, _ := json.Marshal(Index{Version: 2, Shards: []ShardInfo{e}})
			os.WriteFile(filepath.Join(dir, IndexName), b, 0o644)
			os.WriteFile(filepath.Join(dir, "shard.00000.mds"), data, 0o644)
			rd, err := Open(dir, &ReaderOptions{ChunkSize: 64})
			if err != nil {
				continue
			}
			for i, ci := range rd.Chunks() {
				c, err := rd.ReadChunk(context.Background(), i)
				if err != nil {
					break
				}
				sc := rd.Schema()
				if err := c.Validate(&sc); err != nil || c.Sequences != ci.Sequences {
					t.Fatalf("chunk %d: %v, %d sequences of %d", i, err, c.Sequences, ci.Sequences)
				}
			}
			rd.Close()
		}
	})
}

// FuzzIndex feeds arbitrary text as index.json: decoding never panics, and what it accepts
// names shard files inside the directory.
func FuzzIndex(f *testing.F) {
	for _, set := range []string{"scalars", "arrays", "pickled"} {
		b, err := os.ReadFile(filepath.Join("testdata", set, IndexName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := DecodeIndex("index.json", b)
		if err != nil {
			return
		}
		for _, s := range ix.Shards {
			if !filepath.IsLocal(s.RawData.Basename) {
				t.Fatalf("accepted %q", s.RawData.Basename)
			}
		}
	})
}
