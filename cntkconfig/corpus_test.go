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
