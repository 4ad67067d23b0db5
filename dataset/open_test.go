package dataset_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func TestOpenCombinesAndRenames(t *testing.T) {
	lab := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte")
	gz := testutil.Testdata(t, "mnist", "t10k-labels-idx1-ubyte.gz")
	src, err := dataset.OpenFiles([]string{lab, gz}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sc := src.Schema()
	if len(sc.Streams) != 2 || sc.Streams[0].Name != "labels" || sc.Streams[1].Name != "labels_2" {
		t.Fatalf("streams %+v", sc.Streams)
	}
	img := testutil.Testdata(t, "mnist", "train-labels-idx1-ubyte.gz")
	if _, err := dataset.OpenFiles([]string{lab, img}, "", nil); !errors.Is(err, mlfeed.ErrFormat) || !strings.Contains(err.Error(), lab) || !strings.Contains(err.Error(), img) {
		t.Fatalf("10000 and 60000 records combined: %v; want ErrFormat naming both files", err)
	}
	if _, err := dataset.OpenFiles([]string{lab}, "nosuch", nil); !errors.Is(err, mlfeed.ErrUnknownFormat) {
		t.Fatalf("unknown --format: %v", err)
	}
	if f := dataset.FormatOf([]string{lab, gz}); f != "idx" {
		t.Errorf("format of two IDX files: %q", f)
	}
}
