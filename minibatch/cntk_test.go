package minibatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	"github.com/mlfeed/mlfeed/internal/testutil"
	"github.com/mlfeed/mlfeed/minibatch"
)

// cntkTest is one entry of ../shared/testdata/cntk/tests.json.
type cntkTest struct {
	Test, Reader, Input, Precision, Status string
	Config, Section                        *string
	Streams                                []struct {
		Name, Alias, Format string
		Dim                 int
	}
	EpochSize, MinibatchSize, Epochs *int64
	PrintedStreams                   []string
	Expected                         map[string]any
	DefMBSizeVariants                []bool
	ReaderOptions                    map[string]any
	OutputLinesSorted                bool
}

// TestCNTKBaselines runs every case of CNTK's reader tests (tests.json) through format.Open and
// the engine, printing minibatches as CNTK's test helper does, and compares with CNTK's
// baselines, expected errors and logs.
func TestCNTKBaselines(t *testing.T) {
	dir := testutil.Testdata(t, "cntk")
	data, err := os.ReadFile(filepath.Join(dir, "tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Tests []cntkTest }
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tests) != 37 {
		t.Errorf("tests.json lists %d cases, want 37", len(list.Tests))
	}
	for _, tc := range list.Tests {
		t.Run(tc.Test, func(t *testing.T) {
			if tc.Status != "available" {
				t.Skipf("not runnable: %s", tc.Status)
			}
			if tc.Reader == "ctf-parser-direct" {
				runParserDirect(t, dir, tc)
				return
			}
			variants := tc.DefMBSizeVariants
			if len(variants) == 0 {
				variants = []bool{false}
			}
			for _, v := range variants {
				t.Run(fmt.Sprintf("defMBSize=%v", v), func(t *testing.T) { runCNTKCase(t, dir, tc, v) })
			}
		})
	}
}

func runCNTKCase(t *testing.T, dir string, tc cntkTest, defMB bool) {
	cfg, err := cntkconfig.ParseFile(filepath.Join(dir, *tc.Config), "defMBSize="+strconv.FormatBool(defMB))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfg.Reader(*tc.Section)
	if err != nil {
		t.Fatal(err)
	}
	d := rc.Deserializers[0]
	opts := d.Options
	var log bytes.Buffer
	opts.Log = &log
	expected := tc.Expected
	if e, ok := tc.Expected[fmt.Sprintf("defMBSize=%v", defMB)].(map[string]any); ok {
		expected = e
	}
	wantErr, _ := expected["error"].(string)

	t.Chdir(filepath.Join(dir, filepath.Dir(tc.Input)))
	out, err := runEpochs(dir, tc, rc, &opts)
	if wantErr != "" {
		if err == nil {
			t.Fatalf("no error; want %q", wantErr)
		}
		if !strings.Contains(err.Error(), strings.TrimSuffix(wantErr, ".")) {
			t.Errorf("error %q does not carry CNTK's message %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log.String())
	}
	var want []string
	if b, _ := expected["baseline"].(string); b != "" {
		base, err := os.ReadFile(filepath.Join(dir, b))
		if err != nil {
			t.Fatal(err)
		}
		want = strings.Fields(string(base))
	} else if expected["emptyOutput"] != true {
		t.Fatalf("no expectation in %v", expected)
	}
	got := strings.Fields(out)
	if !equalTokens(got, want) {
		t.Errorf("output differs from the baseline: %s\n%.2000s", firstDifference(got, want), out)
	}
}

// runEpochs prints what CNTK's HelperRunReaderTest prints.
func runEpochs(dir string, tc cntkTest, rc *cntkconfig.Reader, opts *format.Options) (string, error) {
	// CNTK's tests run in the data directory and open the file as configured, which is the
	// name the error messages and logs show.
	src, err := dataset.OpenFiles([]string{filepath.Base(tc.Input)}, "", opts)
	if err != nil {
		return "", err
	}
	defer src.Close()
	cfg := minibatch.Config{
		MinibatchSize:                  int(*tc.MinibatchSize),
		EpochSize:                      *tc.EpochSize,
		NoRandomize:                    !rc.Randomize,
		RandomizationSeed:              rc.RandomizationSeed,
		RandomizationWindow:            rc.RandomizationWindow,
		SampleBasedRandomizationWindow: rc.SampleBasedRandomizationWindow,
		FrameMode:                      rc.FrameMode,
		Distribution:                   minibatch.CNTKCompatible,
		Workers:                        1,
	}
	if n, ok := tc.ReaderOptions["numberOfWorkers"].(float64); ok {
		cfg.Workers = int(n)
		cfg.Rank = int(tc.ReaderOptions["workerRank"].(float64))
	}
	r, err := minibatch.New(src, cfg)
	if err != nil {
		return "", err
	}
	defer r.Close()
	sc := src.Schema()
	var out strings.Builder
	for e := int64(0); e < *tc.Epochs; e++ {
		if err := r.SetPosition(e * *tc.EpochSize); err != nil {
			return "", err
		}
		for printed := 0; printed < 10 && r.Next(); printed++ {
			b := r.Batch()
			for _, name := range tc.PrintedStreams {
				i := sc.Index(name)
				if i < 0 {
					return "", fmt.Errorf("no stream %q in %v", name, sc.Streams)
				}
				printStream(&out, &sc.Streams[i], b, i)
			}
			if b.EndOfEpoch {
				break
			}
		}
		if err := r.Err(); err != nil {
			return "", err
		}
	}
	return out.String(), nil
}

// printStream writes stream i's columns in layout order, skipping gaps, one sample per line,
// sparse samples expanded, values as C's %g.
func printStream(out *strings.Builder, st *mlfeed.Stream, b *minibatch.Batch, i int) {
	d := &b.Data.Streams[i]
	row := make([]float64, st.Dim)
	for col := range b.Layouts[i].Cols {
		s := b.Sample(i, col)
		if s < 0 {
			continue
		}
		clear(row)
		from, to := d.SampleRange(st, s)
		for k := from; k < to; k++ {
			if st.Storage == mlfeed.Sparse {
				row[d.Indices[k]] = d.Values.Float64At(k)
			} else {
				row[k-from] = d.Values.Float64At(k)
			}
		}
		for k, v := range row {
			if k > 0 {
				out.WriteByte(' ')
			}
			out.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
		}
		out.WriteByte('\n')
	}
}

// runParserDirect is CNTK's invalid_inputs test: parse chunk 0 with maxErrors 99999 and
// traceLevel 2 and compare the warnings with the control log.
func runParserDirect(t *testing.T, dir string, tc cntkTest) {
	var log bytes.Buffer
	opts := &format.Options{Log: &log, Params: map[string]string{"maxErrors": "99999", "traceLevel": "2", "precision": tc.Precision}}
	for _, s := range tc.Streams {
		in, err := format.ParseInput(fmt.Sprintf("%s:%s:%d:%s", s.Name, s.Format, s.Dim, s.Alias))
		if err != nil {
			t.Fatal(err)
		}
		opts.Inputs = append(opts.Inputs, in)
	}
	t.Chdir(filepath.Join(dir, filepath.Dir(tc.Input)))
	src, err := dataset.OpenFiles([]string{filepath.Base(tc.Input)}, "ctf", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for i := range src.Chunks() {
		if _, err := src.ReadChunk(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(filepath.Join(dir, tc.Expected["stderr"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(log.String()), strings.Fields(string(want)); !equalTokens(got, want) {
		t.Errorf("log differs from CNTK's: %s", firstDifference(got, want))
	}
}

func equalTokens(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDifference(got, want []string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("token %d: got %q, want %q (%d vs %d tokens)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("got %d tokens, want %d", len(got), len(want))
}

// TestCNTKComposite is CNTK's composite-reader test: the two-file configuration (features in
// one file, the other stream in another, joined by sequence id) reads exactly as the one-file
// configuration, randomized, for both of CNTK's epoch and minibatch settings.
func TestCNTKComposite(t *testing.T) {
	dir := testutil.Testdata(t, "cntk")
	cfg, err := cntkconfig.ParseFile(filepath.Join(dir, "configs", "CNTKTextFormatReader", "dense.cntk"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "ctf"))
	open := func(section string) (mlfeed.Source, *cntkconfig.Reader) {
		rc, err := cfg.Reader(section)
		if err != nil {
			t.Fatal(err)
		}
		var srcs []mlfeed.Source
		for _, d := range rc.Deserializers {
			s, err := dataset.OpenFiles([]string{d.File}, "", &d.Options)
			if err != nil {
				t.Fatal(err)
			}
			srcs = append(srcs, s)
		}
		if len(srcs) == 1 {
			return srcs[0], rc
		}
		j, err := minibatch.Join(srcs...)
		if err != nil {
			t.Fatal(err)
		}
		return j, rc
	}
	one, rc := open("5x10_and_5x5_jagged")
	defer one.Close()
	two, _ := open("5x10_and_5x5_jagged_composite")
	defer two.Close()
	if !reflect.DeepEqual(one.Chunks(), two.Chunks()) {
		t.Fatalf("chunk tables differ: %v vs %v", one.Chunks(), two.Chunks())
	}
	for _, c := range []struct{ epoch, mb, epochs int64 }{{40, 10, 3}, {413, 21, 3}} {
		var outs [2]string
		for k, src := range []mlfeed.Source{one, two} {
			r, err := minibatch.New(src, minibatch.Config{MinibatchSize: int(c.mb), EpochSize: c.epoch, RandomizationWindow: rc.RandomizationWindow, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			sc := src.Schema()
			for e := int64(0); e < c.epochs; e++ {
				if err := r.SetPosition(e * c.epoch); err != nil {
					t.Fatal(err)
				}
				for printed := 0; printed < 10 && r.Next(); printed++ {
					b := r.Batch()
					for _, name := range []string{"features1", "features2"} {
						i := sc.Index(name)
						printStream(&out, &sc.Streams[i], b, i)
					}
					if b.EndOfEpoch {
						break
					}
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			outs[k] = out.String()
		}
		if outs[0] != outs[1] || len(outs[0]) < 1000 {
			t.Errorf("epoch %d, minibatch %d: the one-file and two-file readers differ (%d vs %d bytes)", c.epoch, c.mb, len(outs[0]), len(outs[1]))
		}
	}
}
