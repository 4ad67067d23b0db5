package cntkconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzParse checks that no input makes the parser or the reader mapping panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(docClassic))
	f.Add([]byte(docComposite))
	if d := testutil.SharedDir(); d != "" {
		files, _ := filepath.Glob(filepath.Join(d, "testdata", "cntk", "configs", "*", "*.cntk"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.cntk", data, "defMBSize=true")
		if err != nil {
			return
		}
		for _, e := range cfg.Root.Entries() {
			cfg.Reader(e.Key)
		}
		cfg.Reader("")
	})
}
