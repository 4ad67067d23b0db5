package cntkconfig

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

var update = flag.Bool("update", false, "rewrite testdata/cntk/readers.txt")

// corpusDefines are set as CNTK's test driver sets them on the command line.
var corpusDefines = map[string]string{"DataDir": "/data", "RunDir": "/run", "DeviceId": "-1"}

// corpusFiles lists the configuration files kept under testdata/cntk.
func corpusFiles(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir(filepath.Join("testdata", "cntk"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".cntk") {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// describe prints what a reader section maps to, one line.
func describe(r *Reader) string {
	var b strings.Builder
	fmt.Fprintf(&b, "randomize=%v window=%d sampleWindow=%v frameMode=%v", r.Randomize, r.RandomizationWindow, r.SampleBasedRandomizationWindow, r.FrameMode)
	for _, d := range r.Deserializers {
		fmt.Fprintf(&b, " | %s %s", d.Format, d.File)
		for _, in := range d.Options.Inputs {
			fmt.Fprintf(&b, " %s:%s:%s:%d", in.Name, in.Storage, in.Type, in.Dim)
			if in.Alias != "" {
				fmt.Fprintf(&b, ":alias=%s", in.Alias)
			}
			if in.DefinesMBSize {
				b.WriteString(":definesMBSize")
			}
		}
		var keys []string
		for k, v := range d.Options.Params {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			fmt.Fprintf(&b, " {%s}", strings.Join(keys, ","))
		}
	}
	return b.String()
}

// TestCNTKCorpus parses every configuration file of CNTK's Examples and end-to-end tests and
// maps every reader section: CTF and CBF sections must yield their streams (checked against
// readers.txt), other readers must fail with ErrUnsupported naming the type, and nothing
// else may fail.
func TestCNTKCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) < 100 {
		t.Fatalf("only %d configuration files in testdata/cntk", len(files))
	}
	var lines []string
	mapped, unsupported := 0, 0
	for _, f := range files {
		cfg, err := Open(f, &Options{Defines: corpusDefines})
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		var sections []string
		if cfg.Root.Get("reader") != nil {
			sections = append(sections, "")
		}
		seen := map[string]bool{}
		for _, e := range cfg.Root.Entries() {
			k := strings.ToLower(e.Key)
			if e.Value.Kind == Dict && !seen[k] && e.Value.Get("reader") != nil && e.Value.Get("reader").resolve().Kind == Dict {
				seen[k] = true
				sections = append(sections, e.Key)
			}
		}
		if len(sections) == 0 {
			lines = append(lines, f+": no reader")
			continue
		}
		for _, s := range sections {
			r, err := cfg.Reader(s)
			switch {
			case err == nil:
				mapped++
				lines = append(lines, fmt.Sprintf("%s:%s: %s", f, s, describe(r)))
				for _, d := range r.Deserializers {
					if d.Format == "ctf" && len(d.Options.Inputs) == 0 {
						t.Errorf("%s:%s: a CTF reader without streams", f, s)
					}
					for _, in := range d.Options.Inputs {
						if in.Dim <= 0 || in.Name == "" || in.Type != mlfeed.Float32 && in.Type != mlfeed.Float64 {
							t.Errorf("%s:%s: stream %+v", f, s, in)
						}
					}
				}
			case errors.Is(err, ErrUnsupported) && strings.Contains(err.Error(), "unsupported reader type"):
				unsupported++
				lines = append(lines, fmt.Sprintf("%s:%s: %v", f, s, err))
			default:
				t.Errorf("%s:%s: %v", f, s, err)
			}
		}
	}
	if mapped < 50 || unsupported < 100 {
		t.Errorf("%d sections mapped, %d unsupported", mapped, unsupported)
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "cntk", "readers.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(g) || i < len(w); i++ {
			var a, b string
			if i < len(g) {
				a = g[i]
			}
			if i < len(w) {
				b = w[i]
			}
			if a != b {
				t.Fatalf("readers.txt line %d:\n got %s\nwant %s", i+1, a, b)
			}
		}
	}
}

// TestCorpusWithoutDefines reads real files as they are: paths from their own variables,
// a reader block reached through a variable, and an undefined variable that only matters
// once the value holding it is read.
func TestCorpusWithoutDefines(t *testing.T) {
	open := func(name string, defines map[string]string) *Config {
		t.Helper()
		cfg, err := Open(filepath.Join("testdata", "cntk", name), &Options{Defines: defines})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	// BrainScriptNetworkBuilder with Sequential, lambdas and /* */ beside the reader.
	cfg := open("Examples/Image/Classification/ConvNet/BrainScript/ConvNet_MNIST.cntk", nil)
	r, err := cfg.Reader("trainNetwork")
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Deserializers[0]; d.File != "../../../DataSets/MNIST/Train-28x28_cntk_text.txt" || len(d.Options.Inputs) != 2 || d.Options.Inputs[0].Dim != 784 {
		t.Fatalf("%+v", d)
	}
	// With no section: the first block of `command` that has a reader.
	if r, err = cfg.Reader(""); err != nil || r.Section != "trainNetwork.reader" {
		t.Fatalf("%v %+v", err, r)
	}
	// input = $cntkReaderInputDef$, a block whose dims are variables.
	cfg = open("Examples/SequenceToSequence/CMUDict/BrainScript/G2P.cntk", nil)
	if r, err = cfg.Reader("train"); err != nil {
		t.Fatal(err)
	}
	in := r.Deserializers[0].Options.Inputs
	if len(in) != 2 || in[0].Name != "rawInput" || in[0].Alias != "S0" || in[0].Dim != 69 || in[0].Storage != mlfeed.Sparse {
		t.Fatalf("%+v", in)
	}
	// $DataDir$ is set by CNTK's test driver: an error only when the data file is asked
	// for; the streams and options map without it.
	cfg = open("Tests/EndToEndTests/ParallelTraining/SimpleMultiGPU.cntk", nil)
	if r, err = cfg.Reader("SimpleMultiGPU"); err != nil || len(r.Deserializers[0].Options.Inputs) != 2 {
		t.Fatalf("%v", err)
	}
	_, err = r.Deserializers[0].DataPath()
	var e *Error
	if !errors.As(err, &e) || e.Line != 48 || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "$DataDir$ is not defined") {
		t.Fatalf("%v", err)
	}
	cfg = open("Tests/EndToEndTests/ParallelTraining/SimpleMultiGPU.cntk", map[string]string{"DataDir": "/d"})
	if r, err = cfg.Reader("SimpleMultiGPU"); err != nil || r.Deserializers[0].File != "/d/SimpleDataTrain_cntk_text.txt" || r.Randomize {
		t.Fatalf("%v %+v", err, r)
	}
	// A define replaces the file's value everywhere it is used.
	cfg = open("Examples/Image/GettingStarted/01_OneHidden.cntk", map[string]string{"RootDir": "/r"})
	if r, err = cfg.Reader("testNetwork"); err != nil || r.Deserializers[0].File != "/r/DataSets/MNIST/Test-28x28_cntk_text.txt" {
		t.Fatalf("%v %+v", err, r)
	}
	// A block define merges into the file's block, as on CNTK's command line.
	cfg = open("Examples/Image/GettingStarted/01_OneHidden.cntk", map[string]string{
		"trainNetwork": "[ reader = [ randomize = false ; file = /x.txt ] ]"})
	if r, err = cfg.Reader("trainNetwork"); err != nil || r.Randomize || r.Deserializers[0].File != "/x.txt" || len(r.Deserializers[0].Options.Inputs) != 2 {
		t.Fatalf("%v %+v", err, r)
	}
	// A command block without a reader uses the top-level one (HTK here: unsupported).
	cfg = open("Tests/EndToEndTests/Speech/SVD/cntk.cntk", nil)
	if _, err = cfg.Reader("SVDTrain"); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `"HTKMLFReader"`) {
		t.Fatalf("%v", err)
	}
}

// TestNetworkDefinitions checks that network definitions of every kind are skipped, however
// odd their text, as long as the brackets match.
func TestNetworkDefinitions(t *testing.T) {
	text := `
# BrainScript, NDL, macros and lambdas around a reader
command = train:test
ConvReLULayer(inp, outMap, inWCount, kW, kH) = [
    convW = Parameter(outMap, inWCount, init="uniform", initValueScale=10)
    conv = Convolution(convW, inp, (kW:kH), mapDims=outMap, autoPadding=false, imageLayout="cudnn")
    out = RectifiedLinear(conv + 1)
]
train = {
    BrainScriptNetworkBuilder = (
        Sequential (
            ConvolutionalLayer {32, (5:5), pad = true} : ReLU :   // a comment with ( and "
            MaxPoolingLayer {(3:3), stride = (2:2)} :
            /* a block comment ] } with brackets */
            DenseLayer {10, activation = x => x}
        )
    )
    NDLNetworkBuilder = [
        ndlMacros = "$NotDefined$/Macros.ndl"
        run = ndlFull
        ndlFull = [
            W0 = Parameter(HDim, SDim) ; B0 = Parameter(HDim)
            CE = CrossEntropyWithSoftmax(labels, Plus1, tag="criterion")
            FeatureNodes = (features)
        ]
    ]
    include "$AlsoNotDefined$/shared.bs"
    f(x) = if x < 0 then -x else x
    message = 'it''s'
    reader = [
        readerType = "CNTKTextFormatReader" ; file = "$DataDir$/train.ctf"
        input = [ x = [ dim = 3 ; format = "dense" ] ; y = [ dim = 5 ; format = "sparse" ] ]
    ]
}
test = [ reader = [ readerType = "CNTKTextFormatReader"; file = "$OutputDir$/t.ctf"; input = [ x = [ dim = 3; format = "dense" ] ] ] ]
`
	cfg, err := Parse("net.cntk", []byte(text), "DataDir=/data")
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Reader("")
	if err != nil {
		t.Fatal(err)
	}
	d := r.Deserializers[0]
	if r.Section != "train.reader" || d.File != "/data/train.ctf" || len(d.Options.Inputs) != 2 || d.Options.Inputs[1].Storage != mlfeed.Sparse || d.Options.Inputs[1].Dim != 5 {
		t.Fatalf("%+v %+v", r, d)
	}
	// The network text is kept as written.
	if bs := cfg.Root.Get("train").Get("BrainScriptNetworkBuilder"); bs.Kind != Array || !strings.Contains(bs.Text, "x => x") {
		t.Fatalf("%+v", bs)
	}
	r, err = cfg.Reader("test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Deserializers[0].DataPath(); err == nil || !strings.Contains(err.Error(), "net.cntk:35: $OutputDir$ is not defined") {
		t.Fatalf("%v", err)
	}
}

func TestDefines(t *testing.T) {
	for _, tc := range []struct {
		arg, name, value string
		ok               bool
	}{
		{"DataDir=/data", "DataDir", "/data", true},
		{"train=[reader=[randomize=false]]", "train", "[reader=[randomize=false]]", true},
		{"a.b_c=x=y", "a.b_c", "x=y", true},
		{"_x=", "_x", "", true},
		{"data.ctf", "", "", false},
		{"./a=b", "", "", false},
		{"1x=2", "", "", false},
		{"=x", "", "", false},
	} {
		n, v, ok := ParseDefine(tc.arg)
		if n != tc.name || v != tc.value || ok != tc.ok {
			t.Errorf("ParseDefine(%q) = %q, %q, %v", tc.arg, n, v, ok)
		}
	}
	if _, err := Parse("x.cntk", []byte("a = 1"), "not a define"); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad define: %v", err)
	}
	if _, err := Parse("x.cntk", []byte("a = 1"), "b=[c=1"); err == nil || !strings.Contains(err.Error(), "define b:1: '[' opened here is never closed") {
		t.Errorf("bad define: %v", err)
	}
	// Later defines win; $...$ that is not a variable stays as written.
	cfg, err := Parse("x.cntk", []byte("a = 1\nb = \"$a$ costs $5 and $$, $a b$\"\n"), "a=2", "a=3")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := cfg.Root.Get("b").String(); err != nil || s != "3 costs $5 and $$, $a b$" {
		t.Fatalf("%q %v", s, err)
	}
}

// TestConfigFileDefine reads a configuration with the globals file CNTK's command line adds
// (`cntk configFile=globals.cntk+TIMIT_TrainSimpleNetwork.cntk`).
func TestConfigFileDefine(t *testing.T) {
	dir := filepath.Join("testdata", "cntk", "Examples", "Speech", "Miscellaneous", "TIMIT", "config")
	cfg, err := Open(filepath.Join(dir, "TIMIT_TrainSimpleNetwork.cntk"), &Options{Defines: map[string]string{"configFile": "globals.cntk"}})
	if err != nil {
		t.Fatal(err)
	}
	scp := cfg.Root.Get("TIMIT_TrainSimple").Get("reader").Get("features").Get("scpFile")
	if s, err := scp.String(); err != nil || s != `D:\src\codeplex\cntk\ExampleSetups\ASR\TIMIT\lib\scp/TIMIT.train.scp.fbank.fullpath.rnn` {
		t.Fatalf("%q %v", s, err)
	}
	if _, err := Open(filepath.Join(dir, "TIMIT_TrainSimpleNetwork.cntk"), &Options{Defines: map[string]string{"configFile": "nope.cntk"}}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v", err)
	}
}

func TestSplitSection(t *testing.T) {
	f := filepath.Join("testdata", "cntk", "Tests", "EndToEndTests", "Simple2d", "OneHidden.cntk")
	for _, tc := range []struct{ arg, file, section string }{
		{f, f, ""},
		{f + ":Simple_Demo_Train", f, "Simple_Demo_Train"},
		{"nope.cntk:x", "nope.cntk:x", ""},
	} {
		if file, section := SplitSection(tc.arg); file != tc.file || section != tc.section {
			t.Errorf("SplitSection(%q) = %q, %q", tc.arg, file, section)
		}
	}
}

// TestScopes checks CNTK's lookup order: the top level first, then the enclosing blocks.
func TestScopes(t *testing.T) {
	cfg, err := Parse("x.cntk", []byte("a = top\nb = [ a = inner ; c = $a$ ; d = $only$ ; only = here\n deviceId = $DeviceId$ ]\n"), "DeviceId=3")
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Root.Get("b")
	for key, want := range map[string]string{"c": "top", "d": "here", "deviceId": "3"} {
		if s, err := b.Get(key).String(); err != nil || s != want {
			t.Errorf("%s = %q, %v; want %q", key, s, err, want)
		}
	}
	cfg, _ = Parse("x.cntk", []byte("b = [ deviceId = $DeviceId$ ]\n"))
	if _, err := cfg.Root.Get("b").Get("deviceId").String(); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("self reference: %v", err)
	}
}

func TestNesting(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := Parse("d.cntk", []byte("a = "+deep), "x=1"); err == nil || !strings.Contains(err.Error(), "nest deeper") {
		t.Fatalf("%v", err)
	}
	ok := strings.Repeat("[ a = ", maxDepth) + "1" + strings.Repeat(" ]", maxDepth)
	cfg, err := Parse("d.cntk", []byte("a = "+ok))
	if err != nil {
		t.Fatal(err)
	}
	v := cfg.Root
	for i := 0; i <= maxDepth; i++ {
		v = v.Get("a")
	}
	if s, err := v.String(); err != nil || s != "1" {
		t.Fatalf("%q %v", s, err)
	}
	for _, bad := range []string{"a = [ b = ( ]", "a = [ x = \"unterminated ]\n", "a = (", "a = { [ } ]"} {
		if _, err := Parse("b.cntk", []byte(bad)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// A stray closing bracket at the top level is text, as to CNTK (ModelExport/0.cntk).
	if _, err := Parse("s.cntk", []byte("a = [ b = 1 ]\n]\n")); err != nil {
		t.Error(err)
	}
}
