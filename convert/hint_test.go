package convert_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
)

// A conversion refused for one stream the output cannot hold names the way to convert the
// others (an HDF5 file's bytes stream into .npz), and with those streams it succeeds.
func TestUnsupportedStreamHint(t *testing.T) {
	src, err := dataset.OpenFiles([]string{"../format/hdf5/testdata/strings.h5"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "s.npz")
	err = convert.File(ctx, src, out, nil)
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `stream "ascii"`) || !strings.Contains(err.Error(), "--streams") {
		t.Fatalf("got %v, want unsupported naming the stream and --streams", err)
	}
	if err := convert.File(ctx, src, out, &convert.Options{Streams: []string{"X", "text"}}); err != nil {
		t.Fatal(err)
	}
}
