package cntkconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestShippedConfigs maps every section of CNTK's own reader test configs and checks the
// result against the parameters tests.json lists for each test.
func TestShippedConfigs(t *testing.T) {
	dir := testutil.Testdata(t, "cntk")
	data, err := os.ReadFile(filepath.Join(dir, "tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tests []struct {
			Test, Reader, Section, Input, Precision string
			Config                                  *string
			Streams                                 []struct {
				Name, Alias, Format string
				Dim                 int
			}
			Randomize           bool
			DefinesMBSizeStream string
			ReaderOptions       map[string]any
			DefMBSizeVariants   []bool
		}
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tc := range list.Tests {
		if tc.Config == nil {
			continue
		}
		variants := tc.DefMBSizeVariants
		if len(variants) == 0 {
			variants = []bool{false}
		}
		for _, defMB := range variants {
			cfg, err := ParseFile(filepath.Join(dir, *tc.Config), "defMBSize="+strconv.FormatBool(defMB))
			if err != nil {
				t.Fatalf("%s: %v", tc.Test, err)
			}
			r, err := cfg.Reader(tc.Section)
			if err != nil {
				t.Fatalf("%s: %v", tc.Test, err)
			}
			n++
			if len(r.Deserializers) != 1 {
				t.Fatalf("%s: %d deserializers", tc.Test, len(r.Deserializers))
			}
			d := r.Deserializers[0]
			if d.Format != tc.Reader {
				t.Errorf("%s: format %q, want %q", tc.Test, d.Format, tc.Reader)
			}
			if filepath.Base(d.File) != filepath.Base(tc.Input) {
				t.Errorf("%s: file %q, want %q", tc.Test, d.File, tc.Input)
			}
			if r.Randomize != tc.Randomize {
				t.Errorf("%s: randomize %v", tc.Test, r.Randomize)
			}
			wantType := mlfeed.Float32
			if tc.Precision == "double" {
				wantType = mlfeed.Float64
			}
			if r.Precision != wantType {
				t.Errorf("%s: precision %v", tc.Test, r.Precision)
			}
			wantParam := tc.Precision // "float", CNTK's default, is left to the reader's
			if wantParam == "float" {
				wantParam = ""
			}
			if d.Options.Params["precision"] != wantParam && d.Format == "ctf" {
				t.Errorf("%s: params %v", tc.Test, d.Options.Params)
			}
			for k, v := range tc.ReaderOptions {
				if k == "numberOfWorkers" || k == "workerRank" {
					continue
				}
				if got := d.Options.Params[k]; got != strings.ToLower(jsonScalar(v)) {
					t.Errorf("%s: param %s = %q, want %v", tc.Test, k, got, v)
				}
			}
			wantWindow := int64(128)
			if s, ok := d.Options.Params["chunkSizeInBytes"]; ok {
				cs, _ := strconv.ParseInt(s, 10, 64)
				wantWindow = 4 << 30 / cs
			}
			if r.RandomizationWindow != wantWindow || r.SampleBasedRandomizationWindow {
				t.Errorf("%s: window %d, want %d chunks", tc.Test, r.RandomizationWindow, wantWindow)
			}
			if tc.Streams == nil && d.Options.Inputs != nil {
				t.Errorf("%s: inputs %v for a CBF reader", tc.Test, d.Options.Inputs)
			}
			if len(tc.Streams) != len(d.Options.Inputs) && tc.Streams != nil {
				t.Fatalf("%s: %d inputs, want %d", tc.Test, len(d.Options.Inputs), len(tc.Streams))
			}
			for i, s := range tc.Streams {
				in := d.Options.Inputs[i]
				if in.Name != s.Name || in.FileName() != s.Alias || in.Dim != s.Dim || in.Storage.String() != s.Format || in.Type != wantType {
					t.Errorf("%s: input %d = %+v, want %+v", tc.Test, i, in, s)
				}
				wantDef := defMB && (tc.DefinesMBSizeStream == in.Name || tc.DefinesMBSizeStream == "" && i == 0)
				if in.DefinesMBSize != wantDef {
					t.Errorf("%s (defMBSize=%v): %s.DefinesMBSize = %v", tc.Test, defMB, in.Name, in.DefinesMBSize)
				}
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d configurations checked", n)
	}
}

func jsonScalar(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		if x == "SIZE_MAX" {
			return "18446744073709551615"
		}
		return x
	}
	return ""
}

// TestCompositeShipped reads the composite-reader sections of dense.cntk: `deserializers = (
// [...] )` with one file and with two joined files.
func TestCompositeShipped(t *testing.T) {
	path := testutil.Testdata(t, "cntk", "configs", "CNTKTextFormatReader", "dense.cntk")
	cfg, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Reader("5x10_and_5x5_jagged_composite")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Deserializers) != 2 || r.Deserializers[0].File != "5x10_jagged.txt" || r.Deserializers[1].File != "5x5_jagged.txt" {
		t.Fatalf("deserializers %+v", r.Deserializers)
	}
	if in := r.Deserializers[1].Options.Inputs; len(in) != 1 || in[0].Name != "features2" || in[0].Alias != "F1" || in[0].Dim != 5 || in[0].Type != mlfeed.Float64 {
		t.Fatalf("inputs %+v", in)
	}
	if !r.Randomize || r.RandomizationWindow != 128 {
		t.Fatalf("randomize %v window %d", r.Randomize, r.RandomizationWindow)
	}
	if _, err := cfg.Reader(""); err == nil || !strings.Contains(err.Error(), "several blocks") {
		t.Fatalf("no section: %v", err)
	}
}

// The reader examples of CNTK's documentation, in both forms.
const docClassic = `
# the classic form
deviceId = -1
command = train
DataDir = /data/mnist
train = [
    action = "train"
    SGD = [ epochSize = 60000; minibatchSize = 64 ]
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "c:\mydata\SampleInput.txt"    // a Windows path: backslashes stay
        randomize = true
        randomizationWindow = 30000
        sampleBasedRandomizationWindow = true
        maxErrors = 100
        traceLevel = 2
        # All inputs are grouped within the "input" block.
        input = [
            A = [ dim = 5 ; format = "dense" ]
            B = [ dim = 1000000 ; format = "sparse" ]
            C = [ dim = 1 ; format = "dense" ]
        ]
    ]
]
`

const docComposite = `
precision = "double"
DataDir = "/data/mnist"
reader = {
    verbosity = 0 ; randomize = true
    randomizationSeed = 7
    deserializers = ({
        type = "CNTKTextFormatDeserializer" ; module = "CNTKTextFormatReader"
        file = "$DataDir$/Train-28x28_cntk_text.txt"
        chunkSizeInBytes = 1048576
        input = {
            features = { dim = 784 ; format = "dense" ; alias = "x" }
            labels =   { dim = 10  ; format = "dense" ; alias = "y" ; definesMBSize = true }
        }
    })
}
`

func TestDocExamples(t *testing.T) {
	cfg, err := Parse("classic.cntk", []byte(docClassic))
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Reader("")
	if err != nil {
		t.Fatal(err)
	}
	d := r.Deserializers[0]
	if r.Section != "train.reader" || d.File != `c:\mydata\SampleInput.txt` || d.Format != "ctf" {
		t.Fatalf("%+v", r)
	}
	if r.RandomizationWindow != 30000 || !r.SampleBasedRandomizationWindow || r.TraceLevel != 2 {
		t.Fatalf("engine %+v", r)
	}
	want := map[string]string{"maxErrors": "100", "traceLevel": "2"}
	if !reflect.DeepEqual(d.Options.Params, want) {
		t.Fatalf("params %v", d.Options.Params)
	}
	if in := d.Options.Inputs; len(in) != 3 || in[1].Storage != mlfeed.Sparse || in[1].Dim != 1000000 || in[2].Name != "C" || in[0].Type != mlfeed.Float32 {
		t.Fatalf("inputs %+v", in)
	}

	cfg, err = Parse("composite.cntk", []byte(docComposite))
	if err != nil {
		t.Fatal(err)
	}
	if r, err = cfg.Reader(""); err != nil {
		t.Fatal(err)
	}
	d = r.Deserializers[0]
	if d.File != "/data/mnist/Train-28x28_cntk_text.txt" || r.RandomizationSeed != 7 || r.RandomizationWindow != 4096 {
		t.Fatalf("%+v %+v", r, d)
	}
	if in := d.Options.Inputs; len(in) != 2 || in[0].Alias != "x" || !in[1].DefinesMBSize || in[1].Type != mlfeed.Float64 {
		t.Fatalf("inputs %+v", in)
	}
	if d.Options.Params["precision"] != "double" || d.Options.Params["chunkSizeInBytes"] != "1048576" {
		t.Fatalf("params %v", d.Options.Params)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		sentinel         error
	}{
		{"misspelled", "reader = [\n readerType = CNTKTextFormatReader\n file = x\n randomise = false\n input = [ a = [ dim = 1; format = dense ] ]\n]", `x.cntk:4: unknown key "randomise" in reader section (did you mean "randomize"?)`, ErrConfig},
		{"unknown input key", "reader = [\n readerType = CNTKTextFormatReader\n file = x\n input = [\n a = [ dim = 1; format = dense; shape = 3 ] ]\n]", `x.cntk:5: unknown key "shape" in input a`, ErrConfig},
		{"no dim", "reader = [ readerType = CNTKTextFormatReader; file = x\n input = [ a = [ format = dense ] ] ]", `x.cntk:2: input "a" has no dim`, ErrConfig},
		{"bad format", "reader = [ readerType = CNTKTextFormatReader; file = x\n input = [ a = [ dim = 2; format = dens ] ] ]", `format must be dense or sparse`, ErrConfig},
		{"two definers", "reader = [ readerType = CNTKTextFormatReader; file = x; input = [\n a = [ dim = 2; format = dense; definesMBSize = true ]\n b = [ dim = 2; format = dense; definesMBSize = true ] ] ]", `x.cntk:3: only a single stream`, ErrConfig},
		{"undefined var", "reader = [ readerType = CNTKTextFormatReader\n file = $Nope$/x\n input = [ a = [ dim = 1; format = dense ] ] ]", `x.cntk:2: $Nope$ is not defined`, ErrConfig},
		{"bad bool", "reader = [ readerType = CNTKTextFormatReader; file = x\n randomize = maybe\n input = [ a = [ dim = 1; format = dense ] ] ]", `x.cntk:2: expected a boolean`, ErrConfig},
		{"htk", "reader = [ readerType = HTKMLFReader\n file = x ]", `unsupported reader type "HTKMLFReader"`, ErrUnsupported},
		{"bptt", "reader = [ readerType = CNTKTextFormatReader; file = x\n truncated = true ]", `x.cntk:2: reader section: "truncated"`, ErrUnsupported},
		{"unclosed", "a = 1\nreader = [\n readerType = x\n", `x.cntk:2: '[' opened here is never closed`, ErrSyntax},
		{"no equals", "reader = [\n readerType CNTKTextFormatReader ]", `x.cntk:2: expected '=' after "readerType"`, ErrSyntax},
		{"no equals 2", "reader = [ readerType = CNTKTextFormatReader; file = x\n randomize false\n input = [ a = [ dim = 1; format = dense ] ] ]", `x.cntk:2: expected '=' after "randomize"`, ErrSyntax},
		{"string", "reader = [ file = \"abc ]", `unterminated string`, ErrSyntax},
		{"duplicate alias", "reader = [ readerType = CNTKTextFormatReader; file = x; input = [\n a = [ dim = 2; format = dense; alias = A ]\n b = [ dim = 2; format = dense; alias = A ] ] ]", `alias "A" is already used`, ErrConfig},
	} {
		cfg, err := Parse("x.cntk", []byte(tc.text))
		if err == nil {
			var r *Reader
			if r, err = cfg.Reader(""); err == nil {
				_, err = r.Deserializers[0].DataPath()
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSyntax(t *testing.T) {
	text := `
a = 1 ; b = "two # not a comment" # a comment
// a line comment
c = 'single'
list = (x : "y" : [ k = v ])
nested = { inner = [ ref = $a$-$B$ ] }
command = train:test
url = http://example.com/x
`
	cfg, err := Parse("s.cntk", []byte(text), "b=over", "d=4")
	if err != nil {
		t.Fatal(err)
	}
	str := func(v *Value) string {
		t.Helper()
		s, err := v.String()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	root := cfg.Root
	if str(root.Get("A")) != "1" || str(root.Get("b")) != "over" || str(root.Get("c")) != "single" || str(root.Get("d")) != "4" {
		t.Fatal("scalars")
	}
	l := root.Get("list")
	if l.Kind != Array || len(l.Items()) != 3 || str(l.Items()[1]) != "y" || str(l.Items()[2].Get("k")) != "v" {
		t.Fatalf("list %+v", l)
	}
	if got := str(root.Get("nested").Get("inner").Get("ref")); got != "1-over" {
		t.Fatalf("ref = %q", got)
	}
	if str(root.Get("command")) != "train:test" || str(root.Get("url")) != "http://example.com/x" {
		t.Fatal("bare values")
	}
}
