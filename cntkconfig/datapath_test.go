package cntkconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataPath: the data file is resolved only when asked for. An undefined variable in
// `file` does not stop the section from mapping; a file in none of the places CNTK looks is
// an error listing every place tried, at the `file` line.
func TestDataPath(t *testing.T) {
	dir := t.TempDir()
	text := "precision = \"float\"\ntest = [\n  reader = [\n    readerType = \"CNTKTextFormatReader\"\n    file = \"%s\"\n" +
		"    input = [ features = [ dim = 2 ; format = \"dense\" ] ]\n  ]\n]\n"
	write := func(file string) *Reader {
		t.Helper()
		cfg := filepath.Join(dir, "cntk.cntk")
		os.WriteFile(cfg, []byte(strings.Replace(text, "%s", file, 1)), 0o644)
		c, err := Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Reader("test")
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return r
	}
	r := write("$DataDir$/Test_cntk_text.txt")
	if d := r.Deserializers[0]; len(d.Options.Inputs) != 1 || d.Path != d.File || d.File != "$DataDir$/Test_cntk_text.txt" {
		t.Fatalf("%+v", d)
	}
	if _, err := r.Deserializers[0].DataPath(); err == nil || !strings.Contains(err.Error(), "cntk.cntk:5: $DataDir$ is not defined") {
		t.Fatalf("undefined: %v", err)
	}
	r = write("missing.txt")
	_, err := r.Deserializers[0].DataPath()
	want := `cntk.cntk:5: data file "missing.txt" not found; tried "missing.txt" (from the working directory) and "` + filepath.Join(dir, "missing.txt") + `" (beside the configuration file)`
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("not found: %v\nwant %s", err, want)
	}
	os.WriteFile(filepath.Join(dir, "here.txt"), []byte("|features 1 2\n"), 0o644)
	r = write("here.txt")
	if p, err := r.Deserializers[0].DataPath(); err != nil || p != filepath.Join(dir, "here.txt") {
		t.Fatalf("beside the config: %q, %v", p, err)
	}
	abs := filepath.Join(dir, "nope", "abs.txt")
	r = write(abs)
	if _, err := r.Deserializers[0].DataPath(); !errors.Is(err, fs.ErrNotExist) || !strings.HasSuffix(err.Error(), `not found; tried "`+abs+`"`) {
		t.Fatalf("absolute: %v", err)
	}
}
