package dataset_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/demo"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/internal/testutil"
	_ "github.com/mlfeed/mlfeed/storage/s3"
)

// Objects in an S3-compatible server read as the same files do locally: CBF by byte ranges
// (reading one chunk fetches a small part of the object), IDX.gz and CTF through a copy, a
// prefix of shards through its manifest; writing an object makes it appear only when complete.
func TestObjectStorage(t *testing.T) {
	bucket, dir := testutil.S3Server(t)
	ctx := context.Background()
	data := demo.Source(2000, 5)
	local := t.TempDir()
	cbf := filepath.Join(local, "digits.cbf")
	if err := convert.File(ctx, data, cbf, &convert.Options{Type: mlfeed.Float32, Write: format.WriteOptions{ChunkSize: 64 << 10}}); err != nil {
		t.Fatal(err)
	}
	// Upload through mlfeed itself, then compare what the server holds with the local file.
	src, err := dataset.OpenFiles([]string{cbf}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := convert.File(ctx, src, bucket+"/sets/digits.cbf", &convert.Options{Write: format.WriteOptions{ChunkSize: 64 << 10}}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(cbf)
	b, err := os.ReadFile(filepath.Join(dir, "sets", "digits.cbf"))
	if err != nil || string(a) != string(b) {
		t.Fatalf("uploaded object differs from the file (%d vs %d bytes): %v", len(b), len(a), err)
	}
	obj, err := dataset.OpenFiles([]string{bucket + "/sets/digits.cbf"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if err := mlfeed.Diff(ctx, src, obj); err != nil {
		t.Fatal(err)
	}
	// One chunk of a fresh reader fetches far less than the object.
	one, err := dataset.OpenFiles([]string{bucket + "/sets/digits.cbf"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.ReadChunk(ctx, 0); err != nil {
		t.Fatal(err)
	}
	d := one.(mlfeed.Detailer).Details()
	fetched, size := d["fetched_bytes"].(int64), d["object_bytes"].(int64)
	if fetched <= 0 || fetched > size/4 {
		t.Errorf("reading one chunk fetched %d of %d bytes", fetched, size)
	}
	one.Close()

	// A format without random access (IDX.gz) is read through a copy; errors name the URL.
	gz := filepath.Join(local, "images.idx.gz")
	if err := convert.File(ctx, data, gz, &convert.Options{Streams: []string{"features"}}); err != nil {
		t.Fatal(err)
	}
	g, _ := dataset.OpenFiles([]string{gz}, "", nil)
	if err := convert.File(ctx, g, bucket+"/images.idx.gz", nil); err != nil {
		t.Fatal(err)
	}
	g.Close()
	rg, err := dataset.OpenFiles([]string{bucket + "/images.idx.gz"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := mlfeed.Select(data, "features")
	if err := mlfeed.Diff(ctx, want, rg); err != nil {
		t.Fatal(err)
	}
	rg.Close()
	os.WriteFile(filepath.Join(dir, "bad.cbf"), []byte("not a cbf file at all"), 0o644)
	if _, err := dataset.OpenFiles([]string{bucket + "/bad.cbf"}, "cbf", nil); err == nil || !errors.Is(err, mlfeed.ErrFormat) && !errors.Is(err, mlfeed.ErrTruncated) {
		t.Errorf("bad object: %v", err)
	}
	if _, err := dataset.OpenFiles([]string{bucket + "/missing.cbf"}, "", nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing object: %v", err)
	}

	// A prefix of shards with a manifest reads as the data set.
	shards := filepath.Join(local, "shards")
	cbfFmt, _ := format.Lookup("cbf")
	if _, err := convert.Shards(ctx, data, shards, &convert.ShardOptions{Options: convert.Options{Format: cbfFmt, Type: mlfeed.Float32}, Shards: 4}); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "shards"), 0o755)
	ents, _ := os.ReadDir(shards)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(shards, e.Name()))
		os.WriteFile(filepath.Join(dir, "shards", e.Name()), b, 0o644)
	}
	loc, err := dataset.OpenFiles([]string{shards}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer loc.Close()
	rem, err := dataset.OpenFiles([]string{bucket + "/shards/"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	if err := mlfeed.Diff(ctx, loc, rem); err != nil {
		t.Fatal(err)
	}
	// info names the format of every input kind: an object, a prefix with a manifest.
	for _, in := range []string{bucket + "/shards/", bucket + "/sets/digits.cbf"} {
		if f := dataset.FormatOf([]string{in}); f != "cbf" {
			t.Errorf("format of %s: %q, want cbf", in, f)
		}
	}
}
