package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigVariableResolvedWhereUsed: `mlfeed info --config cntk.cntk:test Test.txt` with a
// configuration whose data file is "$DataDir$/Test_cntk_text.txt", as CNTK's tutorials write
// it, reads the file given with the section's streams: $DataDir$, which only the section's own
// file needs, is not resolved.
func TestConfigVariableResolvedWhereUsed(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cntk.cntk")
	os.WriteFile(cfg, []byte(`precision = "float"
command = train:test
deviceId = $DeviceId$
test = [
    action = "test"
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "$DataDir$/Test_cntk_text.txt"
        input = [
            features = [ dim = 3 ; format = "dense" ]
            labels = [ dim = 2 ; format = "dense" ]
        ]
    ]
]
`), 0o644)
	data := filepath.Join(dir, "Test.txt")
	os.WriteFile(data, []byte("|features 0.07670275135766862 1 2 |labels 1 0\n|features 3 4 5 |labels 0 1\n"), 0o644)
	out, stderr, code := run(t, "info", "--config", cfg+":test", data)
	if code != 0 || !strings.Contains(out, "sequences: 2") || !strings.Contains(out, "features") {
		t.Fatalf("info: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, "batches", "--config", cfg+":test", "--mb-size", "2", "--dump", "--no-randomize", data)
	if code != 0 || !strings.Contains(out, `"features":[[[0.07670275,1,2]],[[3,4,5]]]`) || !strings.Contains(stderr, `1 value of input "features" rounded to float32`) {
		t.Fatalf("batches: exit %d\n%s\n%s", code, out, stderr)
	}
}
