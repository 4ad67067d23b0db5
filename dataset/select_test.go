package dataset_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
)

// TestSelectingOptionWithManifest: an option that picks streams (Parquet's columns) on a data
// set of shards with a manifest reads the streams picked, each shard opened to learn them; it
// was "invalid data: its streams do not match the data set's" (the manifest lists every
// stream). validate with it checks the shards as written.
func TestSelectingOptionWithManifest(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shards")
	pq, err := format.Resolve("parquet")
	if err != nil {
		t.Skip("no parquet in this build")
	}
	if _, err := convert.Shards(ctx, demo.Source(300, 5), dir, &convert.ShardOptions{Options: convert.Options{Format: pq}, Shards: 3}); err != nil {
		t.Fatal(err)
	}
	all, err := dataset.OpenFiles([]string{dir}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	last := all.Schema().Streams[len(all.Schema().Streams)-1].Name
	opts := &format.Options{Params: map[string]string{"columns": last}}
	src, err := dataset.OpenFiles([]string{dir}, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if st := src.Schema().Streams; len(st) != 1 || st[0].Name != last {
		t.Fatalf("streams %+v, want %s alone", st, last)
	}
	n := 0
	for i := range src.Chunks() {
		c, err := src.ReadChunk(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		n += c.Sequences
	}
	if total, _ := mlfeed.Totals(all.Chunks()); int64(n) != total {
		t.Errorf("%d sequences, the data set has %d", n, total)
	}
	var problems []string
	if _, err := dataset.CheckShards(dir, "", opts, func(e error) { problems = append(problems, e.Error()) }); err != nil || len(problems) > 0 {
		t.Errorf("validate with columns: %v %s", err, strings.Join(problems, "; "))
	}
}
