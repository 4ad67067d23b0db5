package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigDefines runs a real CNTK configuration (network definitions included) with its
// $DataDir$ set on the command line, as `cntk configFile=... DataDir=...` does.
func TestConfigDefines(t *testing.T) {
	dir := t.TempDir()
	data := "|F 0.1 0.2 |L 1 0\n|F 0.3 0.4 |L 0 1\n|F 0.5 0.6 |L 1 0\n"
	if err := os.WriteFile(filepath.Join(dir, "SimpleDataTrain_cntk_text.txt"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join("..", "..", "cntkconfig", "testdata", "cntk", "Tests", "EndToEndTests", "ParallelTraining", "SimpleMultiGPU.cntk")
	out, stderr, code := run(t, "batches", "--config", cfg, "DataDir="+dir, "--dump", "--mb-size", "2")
	want := `{"sweep":0,"sequences":2,"features":[[[0.1,0.2]],[[0.3,0.4]]],"labels":[[[1,0]],[[0,1]]]}` + "\n" +
		`{"sweep":0,"sequences":1,"features":[[[0.5,0.6]]],"labels":[[[1,0]]]}` + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// Without the define the variable is undefined: reading the configuration's own files
	// fails naming it, as wrong usage.
	_, stderr, code = run(t, "batches", "--config", cfg, "--mb-size", "2")
	if code != 2 || !strings.Contains(stderr, "$DataDir$ is not defined") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Files given on the command line need no $DataDir$: it is resolved only where used.
	out, stderr, code = run(t, "cat", "--config", cfg, "-n", "1", filepath.Join(dir, "SimpleDataTrain_cntk_text.txt"))
	if code != 0 || out != "|F 0.1 0.2 |L 1 0\n" {
		t.Fatalf("undefined $DataDir$, file given: exit %d\n%s\n%s", code, out, stderr)
	}
	// The data file's format comes from the reader type, not its name (ATIS.cntk reads
	// ATIS.train.cntk.sparse), beside a BrainScript model.
	if err := os.WriteFile(filepath.Join(dir, "d.cntk.sparse"), []byte("0 |S0 1:1\n1 |S0 3:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bs := filepath.Join(dir, "atis.cntk")
	text := `Train = [
    BrainScriptNetworkBuilder = (Sequential (EmbeddingLayer {150} : RecurrentLSTMLayer {300} : DenseLayer {10}))
    reader = [ readerType = "CNTKTextFormatReader" ; file = "$DataDir$/d.cntk.sparse"
        input = [ a = [ alias = "S0" ; dim = 5 ; format = "sparse" ] ] ]
]`
	if err := os.WriteFile(bs, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = run(t, "batches", "--config", bs, "DataDir="+dir, "--dump", "--no-randomize")
	if code != 0 || out != `{"sweep":0,"sequences":2,"a":[[{"indices":[1],"values":[1]}],[{"indices":[3],"values":[2]}]]}`+"\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// The other commands read the configuration's files when given none, and read a file
	// given whose format detection cannot tell as the reader type says.
	sparse := filepath.Join(dir, "d.cntk.sparse")
	for _, args := range [][]string{{"cat", "--config", bs, "DataDir=" + dir}, {"cat", "--config", bs, "DataDir=" + dir, sparse}} {
		out, stderr, code = run(t, args...)
		if code != 0 || out != "0 |S0 1:1\n1 |S0 3:2\n" {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	out, stderr, code = run(t, "info", "--config", bs, "DataDir="+dir)
	if code != 0 || !strings.Contains(out, "format:    ctf") || !strings.Contains(out, "sequences: 2") {
		t.Fatalf("info: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, "validate", "--config", bs, "DataDir="+dir, sparse)
	if code != 0 || !strings.Contains(out, "d.cntk.sparse: ok") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out, stderr)
	}
	cbfOut := filepath.Join(dir, "d.cbf")
	if _, stderr, code = run(t, "convert", "-q", "--config", bs, "DataDir="+dir, cbfOut); code != 0 {
		t.Fatalf("convert: exit %d\n%s", code, stderr)
	}
	out, stderr, code = run(t, "cat", cbfOut)
	if code != 0 || out != "|a 1:1\n|a 3:2\n" { // CBF keeps no ids
		t.Fatalf("cat of the converted file: exit %d\n%q\n%s", code, out, stderr)
	}
	if _, _, code = run(t, "cat", sparse); code == 0 {
		t.Error("a file of no known format was read without --config")
	}
	// Other commands take defines beside their files.
	out, stderr, code = run(t, "cat", "--config", cfg, "DataDir="+dir, "-n", "1", filepath.Join(dir, "SimpleDataTrain_cntk_text.txt"))
	if code != 0 || out != "|F 0.1 0.2 |L 1 0\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// validate honours --config as the other commands do: the reader section's streams and
// options (here precision = "double") apply to the files checked.
func TestValidateConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.ctf")
	os.WriteFile(data, []byte("|x 0.123456789123\n"), 0o644)
	cfg := `Train = [ reader = [ readerType = "CNTKTextFormatReader" ; file = "p.ctf" %s
    input = [ x = [ dim = 1 ; format = "dense" ] ] ] ]`
	for prec, warn := range map[string]bool{`; precision = "double"`: false, "": true} {
		c := filepath.Join(dir, "r.cntk")
		os.WriteFile(c, []byte(strings.Replace(cfg, "%s", prec, 1)), 0o644)
		out, stderr, code := run(t, "validate", "--config", c, data)
		if code != 0 || !strings.Contains(out, "ok") || strings.Contains(stderr, "warning") != warn {
			t.Errorf("config %q: exit %d\n%s%s", prec, code, out, stderr)
		}
	}
}
