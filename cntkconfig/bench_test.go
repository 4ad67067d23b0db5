package cntkconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReader parses a large real configuration (a sequence-to-sequence BrainScript
// network beside its readers) and maps its training reader.
func BenchmarkReader(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "cntk", "Examples", "SequenceToSequence", "CMUDict", "BrainScript", "G2P.cntk"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		cfg, err := Parse("G2P.cntk", data, "DataDir=/data")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cfg.Reader("train"); err != nil {
			b.Fatal(err)
		}
	}
}
