package convert_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/mds"
	"github.com/mlfeed/mlfeed/shard"
)

func cbfFormat(t *testing.T) *format.Format {
	ft, ok := format.Lookup("cbf")
	if !ok {
		t.Fatal("cbf not registered")
	}
	return ft
}

// A data set written as shards reads back, through its directory, equal to the original, and
// its manifest matches the shards.
func TestShardsRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	data := demo.Source(1000, 7)
	opts := &convert.ShardOptions{Options: convert.Options{Format: cbfFormat(t), Type: mlfeed.Float32, Threads: 3}, Shards: 5}
	m, err := convert.Shards(ctx, data, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Shards) != 5 || m.Sequences != 1000 {
		t.Fatalf("manifest: %d shards, %d sequences", len(m.Shards), m.Sequences)
	}
	for _, e := range m.Shards {
		if e.Sequences != 200 {
			t.Errorf("%s holds %d sequences, want 200", e.Path, e.Sequences)
		}
	}
	got, err := dataset.OpenFiles([]string{dir}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	want, _ := convert.TargetSchema(data.Schema(), &opts.Options)
	_ = want
	f32 := filepath.Join(t.TempDir(), "all.cbf")
	if err := convert.File(ctx, data, f32, &convert.Options{Type: mlfeed.Float32}); err != nil {
		t.Fatal(err)
	}
	one, err := dataset.OpenFiles([]string{f32}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if err := mlfeed.Diff(ctx, one, got); err != nil {
		t.Fatal(err)
	}
	var problems []error
	if shard.Verify(dir, m, func(e error) { problems = append(problems, e) }); len(problems) != 0 {
		t.Fatal(problems)
	}
	// A changed shard no longer matches its checksum.
	p := filepath.Join(dir, m.Shards[3].Path)
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	if shard.Verify(dir, m, func(e error) { problems = append(problems, e) }); len(problems) != 1 || !errors.Is(problems[0], shard.ErrManifest) {
		t.Fatalf("corrupted shard: %v", problems)
	}
}

// Tasks write disjoint shards and partial manifests; merged, they equal one conversion.
func TestShardTasksMerge(t *testing.T) {
	dir := t.TempDir()
	data := demo.Source(500, 3)
	base := convert.ShardOptions{Options: convert.Options{Format: cbfFormat(t), Type: mlfeed.Float32}, Shards: 7}
	for task := 2; task >= 0; task-- { // any order
		o := base
		o.Task, o.Tasks = task, 3
		m, err := convert.Shards(ctx, data, dir, &o)
		if err != nil {
			t.Fatal(err)
		}
		if m.Task == nil || m.Task.Index != task {
			t.Fatalf("task %d wrote %+v", task, m.Task)
		}
		if task == 0 {
			if _, err := os.Stat(filepath.Join(dir, shard.ManifestName)); !os.IsNotExist(err) {
				t.Fatal("a task wrote the data set's manifest")
			}
		}
	}
	m, err := shard.Merge(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Shards) != 7 || m.Sequences != 500 {
		t.Fatalf("merged: %d shards, %d sequences", len(m.Shards), m.Sequences)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if _, err := convert.Shards(ctx, data, whole, &base); err != nil {
		t.Fatal(err)
	}
	a, err := dataset.OpenFiles([]string{dir}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := dataset.OpenFiles([]string{filepath.Join(whole, shard.ManifestName)}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := mlfeed.Diff(ctx, a, b); err != nil {
		t.Fatal(err)
	}
}

// Re-sharding a sharded data set keeps the input shards' boundaries; a shard size cuts shards
// by bytes.
func TestReshardAndShardSize(t *testing.T) {
	tmp := t.TempDir()
	data := demo.Source(600, 5)
	in := filepath.Join(tmp, "in")
	base := convert.ShardOptions{Options: convert.Options{Format: cbfFormat(t), Type: mlfeed.Float32}, Shards: 3}
	if _, err := convert.Shards(ctx, data, in, &base); err != nil {
		t.Fatal(err)
	}
	src, err := dataset.OpenFiles([]string{in}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	again := base
	again.Shards = 0
	m, err := convert.Shards(ctx, src, filepath.Join(tmp, "again"), &again)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Shards) != 3 || m.Shards[1].Sequences != 200 {
		t.Fatalf("resharded into %d shards", len(m.Shards))
	}
	sized := base
	sized.Shards, sized.ShardSize = 0, 200*784*4
	sized.Write.ChunkSize = 50 * 784 * 4
	m, err = convert.Shards(ctx, data, filepath.Join(tmp, "sized"), &sized)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Shards) < 3 || m.Sequences != 600 {
		t.Fatalf("by size: %d shards, %d sequences", len(m.Shards), m.Sequences)
	}
	bad := base
	bad.Shards = 601
	if _, err := convert.Shards(ctx, data, filepath.Join(tmp, "bad"), &bad); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("more shards than sequences: %v", err)
	}
}

// A directory format (MDS) writes its own shards: a sharded conversion to it is a usage
// error that leaves nothing behind, not shards of a name with no extension.
func TestShardsDirFormat(t *testing.T) {
	ft, ok := format.Lookup("mds")
	if !ok || !ft.IsDir() {
		t.Fatal("mds is not registered as a directory format")
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err := convert.Shards(t.Context(), demo.Source(10, 1), out, &convert.ShardOptions{Options: convert.Options{Format: ft}, Shards: 2})
	if !errors.Is(err, format.ErrUsage) {
		t.Fatalf("sharded MDS: %v; want a usage error", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sharded MDS left %s: %v", out, err)
	}
}
