package shard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/mlfeed/mlfeed"
)

// memShards returns n in-memory shards of k chunks of 3 one-sample sequences each, the
// values counting up across shards, and an opener for their names.
func memShards(t *testing.T, n, k int) ([]string, Opener, *int) {
	t.Helper()
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Int32, Dim: 1}}}
	srcs := map[string]*mlfeed.MemorySource{}
	var names []string
	v := int32(0)
	for s := 0; s < n; s++ {
		var chunks []*mlfeed.Chunk
		for c := 0; c < k; c++ {
			b := mlfeed.NewBuffer(mlfeed.Int32, 3)
			for q := 0; q < 3; q++ {
				b.Int32s()[q] = v
				v++
			}
			chunks = append(chunks, &mlfeed.Chunk{Sequences: 3, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2, 3}, Values: b}}})
		}
		m, err := mlfeed.NewMemorySource(schema, chunks...)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join("mem", ShardName(s, ".x"))
		srcs[name] = m
		names = append(names, name)
	}
	opens := 0
	open := func(name string) (mlfeed.Source, error) {
		opens++
		m, ok := srcs[name]
		if !ok {
			return nil, os.ErrNotExist
		}
		return m, nil
	}
	return names, open, &opens
}

func TestSourceSpansShards(t *testing.T) {
	names, open, _ := memShards(t, 3, 2)
	src, err := NewSource(names, nil, open)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if n := len(src.Chunks()); n != 6 {
		t.Fatalf("%d chunks, want 6", n)
	}
	want := int32(0)
	for i := range src.Chunks() {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.Streams[0].Values.Int32s() {
			if v != want {
				t.Fatalf("chunk %d: value %d, want %d", i, v, want)
			}
			want++
		}
		l, err := src.SequenceLengths(i)
		if err != nil || len(l) != 3 || l[0] != 1 {
			t.Fatalf("chunk %d lengths %v, %v", i, l, err)
		}
	}
	if _, err := src.ReadChunk(context.Background(), 6); err == nil {
		t.Fatal("chunk 6 of 6 read")
	}
}

func TestManifestOpensOnlyWhatIsRead(t *testing.T) {
	names, open, opens := memShards(t, 4, 2)
	full, err := NewSource(names, nil, open)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Version: Version, Format: "x", Schema: full.Schema()}
	for i, n := range names {
		s, _ := open(n)
		e := Entry{Path: filepath.Base(n), Index: i, ChunkTable: ChunkTable(s.Chunks())}
		e.Chunks = len(e.ChunkTable)
		e.Sequences, e.Samples = mlfeed.Totals(s.Chunks())
		m.Shards = append(m.Shards, e)
		m.Sequences += e.Sequences
		m.Samples += e.Samples
	}
	if err := m.check(); err != nil {
		t.Fatal(err)
	}
	*opens = 0
	src, err := NewSource(names, m, open)
	if err != nil {
		t.Fatal(err)
	}
	if *opens != 0 {
		t.Fatalf("%d shards opened before any chunk was read", *opens)
	}
	c, err := src.ReadChunk(context.Background(), 5) // shard 2, chunk 1
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Streams[0].Values.Int32s()[0]; v != 15 || *opens != 1 {
		t.Fatalf("chunk 5 starts with %d after %d opens, want 15 after 1", v, *opens)
	}
	// A shard that disagrees with its entry is an error naming it.
	m.Shards[3].ChunkTable[0][0] = 2
	m.Shards[3].ChunkTable[1][0] = 4
	src, _ = NewSource(names, m, open)
	if _, err := src.ReadChunk(context.Background(), 7); err == nil || !strings.Contains(err.Error(), names[3]) {
		t.Fatalf("mismatched entry: %v", err)
	}
}

func TestShardsMustAgree(t *testing.T) {
	names, open, _ := memShards(t, 3, 1)
	other := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}}
	b := mlfeed.NewBuffer(mlfeed.Float32, 1)
	odd, _ := mlfeed.NewMemorySource(other, &mlfeed.Chunk{Sequences: 1, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1}, Values: b}}})
	_, err := NewSource(names, nil, func(n string) (mlfeed.Source, error) {
		if n == names[2] {
			return odd, nil
		}
		return open(n)
	})
	if err == nil || !errors.Is(err, mlfeed.ErrFormat) || !strings.Contains(err.Error(), names[2]) || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("disagreeing shard: %v", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.cbf", "a.cbf", ".a.cbf.mlfeed-tmp-1", "c.ctf", "b.cbf.mlfeed-index"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	paths, m, sharded, err := Resolve(dir)
	if err != nil || m != nil || !sharded || strings.Join(rel(dir, paths), ",") != "a.cbf,b.cbf,c.ctf" {
		t.Fatalf("directory: %v %v %v %v", paths, m, sharded, err)
	}
	paths, _, sharded, err = Resolve(filepath.Join(dir, "*.cbf*"))
	if err != nil || !sharded || strings.Join(rel(dir, paths), ",") != "a.cbf,b.cbf" {
		t.Fatalf("glob: %v %v", paths, err)
	}
	if _, _, _, err := Resolve(filepath.Join(dir, "*.npy")); err == nil {
		t.Fatal("a glob that matches nothing is no error")
	}
	paths, _, sharded, err = Resolve(filepath.Join(dir, "a.cbf"))
	if err != nil || sharded || len(paths) != 1 {
		t.Fatalf("file: %v %v %v", paths, sharded, err)
	}
	// A manifest names the shards, relative to its directory, and must stay inside it.
	m = &Manifest{Version: Version, Format: "cbf", Schema: mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}},
		Shards: []Entry{{Path: "b.cbf", ChunkTable: [][2]int64{}}}}
	if err := WriteManifest(filepath.Join(dir, ManifestName), m); err != nil {
		t.Fatal(err)
	}
	paths, got, _, err := Resolve(dir)
	if err != nil || got == nil || strings.Join(rel(dir, paths), ",") != "b.cbf" {
		t.Fatalf("manifest: %v %v", paths, err)
	}
	m.Shards[0].Path = "../etc/passwd"
	WriteManifest(filepath.Join(dir, ManifestName), m)
	if _, _, _, err := Resolve(dir); err == nil || !errors.Is(err, ErrManifest) {
		t.Fatalf("manifest path outside the data set: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"mlfeed_manifest": 1, "format": `), 0o644)
	if _, _, _, err := Resolve(dir); err == nil || !strings.Contains(err.Error(), ManifestName) {
		t.Fatalf("truncated manifest: %v", err)
	}
}

func rel(dir string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i], _ = filepath.Rel(dir, p)
	}
	return out
}

func TestTaskFromEnv(t *testing.T) {
	cases := []struct {
		env      map[string]string
		count    int
		i, n     int
		ok, fail bool
	}{
		{env: nil, ok: false},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, count: 4, i: 2, n: 4, ok: true},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, fail: true},           // count unknown
		{env: map[string]string{"JOB_COMPLETION_INDEX": "4"}, count: 4, fail: true}, // out of range
		{env: map[string]string{"JOB_COMPLETION_INDEX": "x"}, count: 4, fail: true},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"}, i: 2, n: 3, ok: true},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "3"}, count: 8, i: 0, n: 8, ok: true},
		{env: map[string]string{"AWS_BATCH_JOB_ARRAY_INDEX": "1"}, count: 2, i: 1, n: 2, ok: true},
	}
	for _, c := range cases {
		i, n, ok, err := TaskFromEnv(func(k string) string { return c.env[k] }, c.count)
		if (err != nil) != c.fail || !c.fail && (i != c.i || n != c.n || ok != c.ok) {
			t.Errorf("%v count %d: %d %d %v %v", c.env, c.count, i, n, ok, err)
		}
	}
}

func TestMergeNeedsEveryTask(t *testing.T) {
	dir := t.TempDir()
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}}
	part := func(task int) {
		m := &Manifest{Version: Version, Format: "cbf", Schema: schema, Task: &Task{Index: task, Count: 3},
			Shards:    []Entry{{Path: ShardName(task, ".cbf"), Index: task, Sequences: 2, Samples: 2, Chunks: 1, ChunkTable: [][2]int64{{2, 2}}}},
			Sequences: 2, Samples: 2}
		if err := WriteManifest(filepath.Join(dir, TaskManifestName(task, 3)), m); err != nil {
			t.Fatal(err)
		}
	}
	part(0)
	part(2)
	if _, err := Merge(dir); err == nil || !strings.Contains(err.Error(), "tasks 1 of 3") {
		t.Fatalf("merge with task 1 missing: %v", err)
	}
	part(1)
	m, err := Merge(dir)
	if err != nil || len(m.Shards) != 3 || m.Sequences != 6 {
		t.Fatalf("merge: %+v %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(dir, TaskManifestName(1, 3))); !os.IsNotExist(err) {
		t.Fatal("partial manifests left after merge")
	}
	if _, err := ReadManifest(filepath.Join(dir, ManifestName)); err != nil {
		t.Fatal(err)
	}
}

// copySource decodes every chunk of a MemorySource into fresh memory, as a file's reader
// does, so that what keeps a chunk alive is the caller's business.
type copySource struct{ *mlfeed.MemorySource }

func (s copySource) ReadChunk(ctx context.Context, i int) (*mlfeed.Chunk, error) {
	c, err := s.MemorySource.ReadChunk(ctx, i)
	if err != nil {
		return nil, err
	}
	d := c.Streams[0]
	d.Values = mlfeed.NewBuffer(d.Values.Type, d.Values.Len())
	copy(d.Values.Bytes, c.Streams[0].Values.Bytes)
	return &mlfeed.Chunk{Sequences: c.Sequences, Streams: []mlfeed.StreamData{d}}, nil
}

func (s copySource) ReadChunkReuse(ctx context.Context, i int, _ *mlfeed.Chunk) (*mlfeed.Chunk, error) {
	return s.ReadChunk(ctx, i)
}

// TestReuseKeepsNoChunkAlive: the chunks ReadChunkReuse hands out, once the caller drops them
// or hands them back for a chunk of another shard, are garbage. (The shard that decoded each
// was once recorded with the chunk as a map key, which kept a randomized sweep's every chunk,
// the whole data set, in memory.)
func TestReuseKeepsNoChunkAlive(t *testing.T) {
	names, open, _ := memShards(t, 4, 8)
	src, err := NewSource(names, nil, func(name string) (mlfeed.Source, error) {
		s, err := open(name)
		if err != nil {
			return nil, err
		}
		return copySource{s.(*mlfeed.MemorySource)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var handed []weak.Pointer[mlfeed.Chunk]
	var prev *mlfeed.Chunk
	n := len(src.Chunks())
	for k := 0; k < 4*n; k++ {
		i := (k * 7) % n // jump between shards, as a randomized sweep does
		c, err := src.ReadChunkReuse(context.Background(), i, prev)
		if err != nil {
			t.Fatal(err)
		}
		handed = append(handed, weak.Make(c))
		if k%2 == 0 {
			prev = c // handed back on the next call
		} else {
			prev = nil // dropped
		}
	}
	prev = nil
	runtime.GC()
	runtime.GC()
	alive := 0
	for _, w := range handed {
		if w.Value() != nil {
			alive++
		}
	}
	if alive > 0 {
		t.Errorf("%d of the %d chunks handed out and dropped are still reachable", alive, len(handed))
	}
}
