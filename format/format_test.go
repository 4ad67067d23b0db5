package format_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/all"
)

func TestParseInput(t *testing.T) {
	st, err := format.ParseInput("labels:sparse:10:L:float64")
	if err != nil || st.Name != "labels" || st.Storage != mlfeed.Sparse || st.Dim != 10 || st.Alias != "L" || st.Type != mlfeed.Float64 {
		t.Fatalf("%+v %v", st, err)
	}
	st, err = format.ParseInput("x:dense:3")
	if err != nil || st.Type != mlfeed.Float32 || st.Alias != "" {
		t.Fatalf("%+v %v", st, err)
	}
	for _, bad := range []string{"x", "x:dense", "x:dens:3", "x:dense:0", "x:dense:-1", ":dense:3", "x:dense:3:a:float128", "x:dense:3:a:b:c"} {
		if _, err := format.ParseInput(bad); !errors.Is(err, format.ErrUsage) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestDetectByMagicThenName(t *testing.T) {
	dir := t.TempDir()
	// IDX bytes under a misleading name are still IDX.
	f := filepath.Join(dir, "labels.ctf")
	os.WriteFile(f, []byte{0, 0, 8, 1, 0, 0, 0, 1, 7}, 0o644)
	ft, err := format.Detect(f)
	if err != nil || ft.Name != "idx" {
		t.Fatalf("%v %v", ft, err)
	}
	g := filepath.Join(dir, "x.unknown")
	os.WriteFile(g, []byte("hello"), 0o644)
	if _, err := format.Detect(g); !errors.Is(err, mlfeed.ErrUnknownFormat) {
		t.Fatalf("unknown: %v", err)
	}
	if ft, ok := format.ByExtension("a/b/train.IDX.GZ"); !ok || ft.Name != "idx" {
		t.Fatal("extension match is case-insensitive and takes the longest")
	}
}

func TestSeekableFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := format.SeekableFile("x", f); got != f || err != nil {
		t.Fatalf("regular file: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, out := range []io.Writer{w, &bytes.Buffer{}} {
		if _, err := format.SeekableFile("x", out); !errors.Is(err, format.ErrUsage) || !errors.Is(err, format.ErrNeedsSeek) {
			t.Errorf("%T: %v", out, err)
		}
	}
}

// A format is named by its name or by an extension it alone claims; an unknown name gets the
// nearest suggested.
func TestResolve(t *testing.T) {
	for name, want := range map[string]string{"hdf5": "hdf5", "HDF5": "hdf5", "h5": "hdf5", ".h5": "hdf5", "feather": "arrow", ".ctf": "ctf"} {
		if f, err := format.Resolve(name); err != nil || f.Name != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", name, f, err, want)
		}
	}
	for name, hint := range map[string]string{"h55": "did you mean hdf5?", "ctff": "did you mean ctf?", "parket": "did you mean parquet?", "zzzzzz": "known:"} {
		_, err := format.Resolve(name)
		if !errors.Is(err, mlfeed.ErrUnknownFormat) || !strings.Contains(err.Error(), hint) {
			t.Errorf("Resolve(%q): %v; want ErrUnknownFormat saying %q", name, err, hint)
		}
	}
}

// Every registered format is a file format with an extension outputs are named with, or a
// directory format (MDS) whose outputs are directories named as given.
func TestIsDirExt(t *testing.T) {
	for _, ft := range format.All() {
		switch {
		case ft.Name == "mds":
			if !ft.IsDir() || ft.Ext() != "" {
				t.Errorf("mds: IsDir %v, Ext %q; want a directory format with no extension", ft.IsDir(), ft.Ext())
			}
		case ft.IsDir():
			t.Errorf("%s: IsDir; want a file format", ft.Name)
		case ft.Ext() != ft.Extensions[0]:
			t.Errorf("%s: Ext %q; want %q", ft.Name, ft.Ext(), ft.Extensions[0])
		}
	}
	dirOnly := func(string) bool { return true }
	for _, c := range []struct {
		name string
		f    format.Format
		want string // in the panic, or "" for none
	}{
		{"no extension", format.Format{Name: "test-noext"}, "has no Extensions"},
		{"dir with extension", format.Format{Name: "test-dirext", MatchDir: dirOnly, Extensions: []string{".d"}}, "directory format"},
		{"dir with Create", format.Format{Name: "test-dircreate", MatchDir: dirOnly, Create: func(io.Writer, mlfeed.Schema, *format.WriteOptions) (mlfeed.Sink, error) { return nil, nil }}, "directory format"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("Register(%s): panic %v; want one saying %q", c.name, r, c.want)
				}
			}()
			format.Register(c.f)
		}()
	}
}

// NormalizeParams takes declared keys and their aliases (renamed to the key), and refuses
// undeclared keys, a key given under two spellings, and any key where none is declared.
func TestNormalizeParams(t *testing.T) {
	decl := []format.Param{{Name: "chunk_size", Aliases: []string{"chunkSizeInBytes"}}, {Name: "mmap"}}
	got, err := format.NormalizeParams("x", map[string]string{"chunkSizeInBytes": "9", "mmap": "false"}, decl)
	if err != nil || len(got) != 2 || got["chunk_size"] != "9" || got["mmap"] != "false" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []map[string]string{{"chunk": "1"}, {"chunk_size": "1", "chunkSizeInBytes": "2"}} {
		if _, err := format.NormalizeParams("x", bad, decl); !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), "x ") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := format.NormalizeParams("x", map[string]string{"a": "1"}, nil); !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), "takes no format options") {
		t.Errorf("no options declared: %v", err)
	}
	if got, err := format.NormalizeParams("x", nil, decl); got != nil || err != nil {
		t.Errorf("no options given: %v, %v", got, err)
	}
	// A key within two edits of a declared one names it; one farther does not guess.
	for key, want := range map[string]string{"mmpa": `"mmpa"; did you mean mmap?`, "Chunk_Siz": "did you mean chunk_size?", "compression": `no option "compression" (known: chunk_size, mmap)`} {
		if _, err := format.NormalizeParams("x", map[string]string{key: "1"}, decl); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", key, err, want)
		}
	}
}
