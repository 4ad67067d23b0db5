package convert_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
)

// A conversion refused for one stream the output cannot hold is marked with the way to
// convert the others (an HDF5 file's bytes stream into .npz: format.ErrNeedsStreams, which
// the CLI and Python name in their words), and with those streams it succeeds.
func TestUnsupportedStreamHint(t *testing.T) {
	src, err := dataset.OpenFiles([]string{"../format/hdf5/testdata/strings.h5"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "s.npz")
	err = convert.File(ctx, src, out, nil)
	if !errors.Is(err, mlfeed.ErrUnsupported) || !strings.Contains(err.Error(), `stream "ascii"`) || !errors.Is(err, format.ErrNeedsStreams) {
		t.Fatalf("got %v, want unsupported naming the stream, marked for the option streams", err)
	}
	if err := convert.File(ctx, src, out, &convert.Options{Streams: []string{"X", "text"}}); err != nil {
		t.Fatal(err)
	}
}
