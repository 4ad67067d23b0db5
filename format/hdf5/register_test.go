package hdf5_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/hdf5"
)

func paramNames(ps []format.Param) []string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return n
}

// The registry declares the options the format takes (`mlfeed formats` lists them), and the
// format takes those and refuses others.
func TestRegisteredParams(t *testing.T) {
	ft, ok := format.Lookup("hdf5")
	if !ok {
		t.Fatal("hdf5 not registered")
	}
	if got := paramNames(ft.ReadParams); !slices.Equal(got, []string{"datasets", "chunk_rows"}) {
		t.Errorf("read params %v", got)
	}
	if got := paramNames(ft.WriteParams); !slices.Equal(got, []string{"level", "shuffle", "chunk_rows"}) {
		t.Errorf("write params %v", got)
	}
	src, err := ft.Open("testdata/keras_xy.h5", &format.Options{Params: map[string]string{"chunk_rows": "7", "datasets": "X"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := src.Chunks()[0].Sequences; n != 7 {
		t.Errorf("chunk_rows=7 gave chunks of %d rows", n)
	}
	src.Close()
	if _, err := ft.Open("testdata/keras_xy.h5", &format.Options{Params: map[string]string{"level": "1"}}); !errors.Is(err, format.ErrUsage) {
		t.Errorf("a write option given to the reader: %v", err)
	}
}
