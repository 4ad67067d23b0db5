package cntkconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/cntkconfig"
	_ "github.com/mlfeed/mlfeed/format/all"
)

// totals returns the sequences of a source and the samples of each of its streams.

// TestFormatFor reads a file whose format detection cannot tell as the reader type says, and
// leaves every other choice alone.
func TestFormatFor(t *testing.T) {
	dir := t.TempDir()
	sparse, idx := filepath.Join(dir, "d.cntk.sparse"), filepath.Join(dir, "t.idx")
	os.WriteFile(sparse, []byte("0 |S0 1:1\n"), 0o644)
	os.WriteFile(idx, []byte{0, 0, 8, 1, 0, 0, 0, 1, 7}, 0o644)
	text := filepath.Join(dir, "a.cntk")
	os.WriteFile(text, []byte(`reader = [ readerType = "CNTKTextFormatReader" ; file = "d.cntk.sparse"
    input = [ a = [ alias = "S0" ; dim = 5 ; format = "sparse" ] ] ]`), 0o644)
	cfg, err := cntkconfig.Open(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Reader("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names       []string
		given, want string
	}{
		{[]string{sparse}, "", "ctf"},
		{[]string{sparse}, "libsvm", "libsvm"},
		{[]string{idx}, "", ""},
	} {
		if got := r.FormatFor(c.names, c.given); got != c.want {
			t.Errorf("FormatFor(%v, %q) = %q, want %q", c.names, c.given, got, c.want)
		}
	}
	var none *cntkconfig.Reader
	if got := none.FormatFor([]string{sparse}, ""); got != "" {
		t.Errorf("no reader section: %q", got)
	}
}
