package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/minibatch"
)

// writeCTF writes n sequences of one sample "|x V" (V from base) to dir/name.
func writeCTF(t *testing.T, dir, name string, base, n, dim int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "|x %d", base+i)
		for range dim - 1 {
			b.WriteString(" 0")
		}
		b.WriteString("\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMixSpec(t *testing.T) {
	dir := t.TempDir()
	writeCTF(t, dir, "a.ctf", 0, 300, 1)
	writeCTF(t, dir, "b.ctf", 1000, 100, 1)
	mixJSON := `{"sources": [{"weight": 3, "path": "a.ctf", "name": "wiki"},
	                         {"weight": 1, "paths": ["b.ctf"], "format": "ctf", "options": {"precision": "float64"}}],
	             "stop": "all_exhausted", "schedule": [{"at": 200, "weights": [1, 1]}]}`
	m, err := dataset.ParseMix([]byte(mixJSON), "mix.json", dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Stop != minibatch.AllExhausted || len(m.Sources) != 2 || m.Sources[0].Paths[0] != filepath.Join(dir, "a.ctf") ||
		m.Sources[1].Params["precision"] != "float64" || len(m.Schedule) != 1 || m.Schedule[0].At != 200 {
		t.Fatalf("parsed %+v", m)
	}
	m.Sources[1].Params = nil
	spec := dataset.Spec{Mix: m}
	src, err := spec.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok := src.(*minibatch.Mixed); !ok {
		t.Fatalf("a mixture opens as %T", src)
	}
	if n, _ := mlfeed.Totals(src.Chunks()); n != 400 {
		t.Fatalf("%d sequences, want 400", n)
	}
	r, err := minibatch.New(src, minibatch.Config{MinibatchSize: 10, MaxSweeps: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[int]bool{}
	for r.Next() {
		b := r.Batch()
		for _, v := range b.Data.Streams[0].Values.Float32s() {
			seen[int(v)] = true
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(seen) != 400 {
		t.Fatalf("all_exhausted: %d distinct sequences of 400", len(seen))
	}
}

func TestMixSpecErrors(t *testing.T) {
	dir := t.TempDir()
	writeCTF(t, dir, "a.ctf", 0, 10, 1)
	writeCTF(t, dir, "wide.ctf", 0, 10, 3)
	for _, c := range []struct{ json, want string }{
		{`{"sources": [{"weight": 1, "path": "a.ctf"}], "stop": "sometimes"}`, "sometimes"},
		{`{"sources": [{"path": "a.ctf"}]}`, "mix.json: source 0 has no weight"},
		{`{"sources": [{"weight": 1}]}`, "source 0 has no path"},
		{`{"sources": []}`, "no sources"},
		{"{\"sources\": [\n  {\"weight\": \"x\", \"path\": \"a.ctf\"}]}", "mix.json:2:"},
		{`{"sources": [{"weight": 1, "path": "a.ctf", "wieght": 2}]}`, "wieght"},
		{`{"sources": [{"weight": 1, "path": "a.ctf", "inputs": ["x:nonsense"]}]}`, "inputs"},
		{`{"sources": [{"weight": 1, "path": "a.ctf"}], "schedule": [{"weights": [1]}]}`, "no \"at\""},
		{`{"sources": [{"weight": 1, "path": "a.ctf"}]} {}`, "after"},
	} {
		_, err := dataset.ParseMix([]byte(c.json), "mix.json", dir)
		if !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
	}
	in := func(w float64, p string) dataset.MixInput {
		return dataset.MixInput{Weight: w, Paths: []string{filepath.Join(dir, p)}}
	}
	spec := dataset.Spec{Mix: &dataset.Mix{Sources: []dataset.MixInput{in(1, "a.ctf"), in(1, "wide.ctf")}}}
	_, err := spec.Open(context.Background())
	if !errors.Is(err, format.ErrUsage) || !strings.Contains(err.Error(), "wide.ctf") || !strings.Contains(err.Error(), `stream "x"`) {
		t.Fatalf("streams that differ: %v", err)
	}
	t.Log(err)
	spec = dataset.Spec{Paths: []string{"a.ctf"}, Mix: &dataset.Mix{Sources: []dataset.MixInput{in(1, "a.ctf")}}}
	if _, err := spec.Open(context.Background()); !errors.Is(err, format.ErrUsage) {
		t.Fatalf("paths and a mixture: %v", err)
	}
	if _, err := dataset.ParseMixArg("0.5"); !errors.Is(err, format.ErrUsage) {
		t.Fatal(err)
	}
	if _, err := dataset.ParseMixArg("half=a"); !errors.Is(err, format.ErrUsage) {
		t.Fatal(err)
	}
	if in, err := dataset.ParseMixArg("0.25=s3://b/x=y/"); err != nil || in.Weight != 0.25 || in.Paths[0] != "s3://b/x=y/" {
		t.Fatal(in, err)
	}
}

// FuzzParseMix: a mixture file never panics the parser, and what it accepts has sources with
// paths and weights.
func FuzzParseMix(f *testing.F) {
	f.Add([]byte(`{"sources": [{"weight": 0.7, "path": "wiki/"}, {"weight": 0.3, "paths": ["a", "b"], "format": "ctf", "inputs": ["x:dense:3"], "options": {"k": 1, "b": true, "s": "v"}, "name": "code"}], "stop": "never", "schedule": [{"at": 100, "weights": [1, 2]}]}`))
	f.Add([]byte(`{"sources": [{"weight": 1, "path": "s3://bucket/x/"}], "stop": "all_exhausted"}`))
	f.Add([]byte(`{"sources": [{"weight": "1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := dataset.ParseMix(data, "mix.json", "dir")
		if err != nil {
			if !errors.Is(err, format.ErrUsage) {
				t.Fatalf("an error that is no usage error: %v", err)
			}
			return
		}
		for _, in := range m.Sources {
			if len(in.Paths) == 0 {
				t.Fatal("a source without paths accepted")
			}
		}
	})
}
