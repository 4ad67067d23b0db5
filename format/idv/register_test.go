package idv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

func TestRegistryOptions(t *testing.T) {
	ft, ok := format.Lookup("idv")
	if !ok {
		t.Fatal("idv is not registered")
	}
	if !ft.Match([]byte("CML\x00DVB\x00rest")) || ft.Match([]byte("CML\x00DVX\x00")) {
		t.Error("Match")
	}
	if f, ok := format.ByExtension("x.IDV"); !ok || f.Name != "idv" {
		t.Error("extension")
	}
	name := testutil.Testdata(t, "idv", "termlookup-DefaultMap.idv")
	for _, params := range []map[string]string{{"vectors": "diagonal"}, {"blocks_per_chunk": "0"}, {"nope": "1"}} {
		if _, err := ft.Open(name, &format.Options{Params: params}); !errors.Is(err, format.ErrUsage) {
			t.Errorf("%v: got %v, want a usage error", params, err)
		}
	}
	src, err := ft.Open(name, &format.Options{Params: map[string]string{"vectors": "sparse", "blocks_per_chunk": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()

	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}}
	f, err := os.Create(filepath.Join(t.TempDir(), "out.idv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, wo := range []*format.WriteOptions{
		{Compress: "gzip"}, {Compat: "ctf2bin"}, {Params: map[string]string{"level": "12"}},
		{Params: map[string]string{"rows_per_block": "x"}}, {Params: map[string]string{"other": "1"}},
	} {
		if _, err := ft.Create(f, schema, wo); !errors.Is(err, format.ErrUsage) {
			t.Errorf("%+v: got %v, want a usage error", wo, err)
		}
	}
	for _, wo := range []*format.WriteOptions{
		nil, {Compress: "none", ChunkSize: 1 << 20}, {Compress: "deflate", Params: map[string]string{"level": "9", "rows_per_block": "100", "bytes_per_block": "-1"}},
	} {
		if _, err := ft.Create(f, schema, wo); err != nil {
			t.Errorf("%+v: %v", wo, err)
		}
	}
}

func TestColumnsOption(t *testing.T) {
	name := testutil.Testdata(t, "idv", "datatypes.idv")
	r, err := Open(name, &ReaderOptions{Columns: []string{"tx", "i1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eq(t, "schema", schemaStrings(r.Schema()), []string{"i1 dense int8 1", "tx dense string 1"})
	eq(t, "values", columns(t, r), [][]string{{"127", "-127", "-128", "0", "-128"}, {`"foo"`, `"xyz"`, `""`, `""`, `""`}})
	if _, err := Open(name, &ReaderOptions{Columns: []string{"i1", "nope"}}); !errors.Is(err, ErrNoColumn) {
		t.Errorf("got %v, want ErrNoColumn", err)
	}
	ft, _ := format.Lookup("idv")
	if _, err := ft.Open(name, &format.Options{Params: map[string]string{"columns": "nope"}}); !errors.Is(err, format.ErrUsage) {
		t.Errorf("got %v, want a usage error", err)
	}
}
