package idv

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/idx"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func openAny(t *testing.T, name string) mlfeed.Source {
	t.Helper()
	src, err := dataset.OpenFiles([]string{name}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestConvertIDV converts every corpus file to IDV through package convert (the CLI's path)
// and compares.
func TestConvertIDV(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.Dir(t, "idv"), "*.idv"))
	dir := t.TempDir()
	for _, f := range files {
		if strings.Contains(f, "oldkey") {
			continue
		}
		src := openAny(t, f)
		out := filepath.Join(dir, filepath.Base(f))
		if err := convert.File(context.Background(), src, out, nil); err != nil {
			t.Fatal(err)
		}
		sameData(t, filepath.Base(f), src, openAny(t, out))
	}
}

// TestConvertOtherFormats: numeric dense and sparse streams go IDV -> CBF -> IDV and
// IDV -> IDX -> IDV unchanged; text is refused by name.
func TestConvertOtherFormats(t *testing.T) {
	dir := t.TempDir()
	st := []mlfeed.Stream{
		{Name: "features", Type: mlfeed.Float32, Dim: 5},
		{Name: "labels", Type: mlfeed.Float32, Storage: mlfeed.Sparse, Dim: 3},
	}
	feat, lab := dataBuilder{st: st[0]}, dataBuilder{st: st[1]}
	for r := 0; r < 50; r++ {
		x := float64(r)
		feat.add(num(mlfeed.Float32, x, -x, x/2, 0, 1))
		lab.add(num(mlfeed.Float32, 1), int32(r%3))
	}
	src := &memSource{schema: mlfeed.Schema{Streams: st}, chunks: []*mlfeed.Chunk{{Sequences: 50, Streams: []mlfeed.StreamData{feat.d, lab.d}}}}
	orig := filepath.Join(dir, "orig.idv")
	if err := convert.File(context.Background(), src, orig, &convert.Options{Write: format.WriteOptions{Params: map[string]string{"rows_per_block": "16"}}}); err != nil {
		t.Fatal(err)
	}
	in := openAny(t, orig)
	sameData(t, "written", src, in)

	cbfFile := filepath.Join(dir, "x.cbf")
	if err := convert.File(context.Background(), in, cbfFile, nil); err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(dir, "back.idv")
	if err := convert.File(context.Background(), openAny(t, cbfFile), back, nil); err != nil {
		t.Fatal(err)
	}
	eq(t, "IDV -> CBF -> IDV", columns(t, openAny(t, back)), columns(t, src))

	idxFile := filepath.Join(dir, "x.idx")
	dense := &convert.Options{Densify: true}
	only := &memSource{schema: mlfeed.Schema{Streams: st[:1]}, chunks: []*mlfeed.Chunk{{Sequences: 50, Streams: []mlfeed.StreamData{feat.d}}}}
	if err := convert.File(context.Background(), only, filepath.Join(dir, "f.idv"), dense); err != nil {
		t.Fatal(err)
	}
	if err := convert.File(context.Background(), openAny(t, filepath.Join(dir, "f.idv")), idxFile, nil); err != nil {
		t.Fatal(err)
	}
	if err := convert.File(context.Background(), openAny(t, idxFile), filepath.Join(dir, "f2.idv"), nil); err != nil {
		t.Fatal(err)
	}
	eq(t, "IDV -> IDX -> IDV", columns(t, openAny(t, filepath.Join(dir, "f2.idv"))), columns(t, only))

	// Text cannot go to CBF: the error names the column.
	err := convert.File(context.Background(), openAny(t, testutil.Testdata(t, "idv", "termlookup-DefaultMap.idv")), filepath.Join(dir, "t.cbf"), nil)
	if err == nil || !strings.Contains(err.Error(), `"Term"`) {
		t.Errorf("got %v, want an error naming Term", err)
	}
}
