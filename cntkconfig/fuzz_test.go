package cntkconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// FuzzParse checks that no input makes the parser or the reader mapping panic or hang,
// seeded with every CNTK configuration file kept in testdata (network definitions included)
// and CNTK's reader test configurations. Deep nesting is bounded by maxDepth.
func FuzzParse(f *testing.F) {
	f.Add([]byte(docClassic))
	f.Add([]byte(docComposite))
	for _, name := range corpusFiles(f) {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	if d := testutil.SharedDir(); d != "" {
		files, _ := filepath.Glob(filepath.Join(d, "testdata", "cntk", "configs", "*", "*.cntk"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.cntk", data, "defMBSize=true", "DataDir=/data", "train=[reader=[randomize=false]]")
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range cfg.Root.Entries() {
			if !seen[e.Key] {
				seen[e.Key] = true
				cfg.Reader(e.Key)
			}
			for _, w := range e.Value.Entries() {
				w.Value.String()
				w.Value.Items()
			}
		}
		cfg.Reader("")
	})
}
