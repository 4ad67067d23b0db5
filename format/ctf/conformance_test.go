package ctf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// TestInvalidInputsLog reproduces CNTK's warning and info log for invalid_inputs.txt token for
// token: the same messages, in the same order, with the same byte offsets.
func TestInvalidInputsLog(t *testing.T) {
	in := testutil.Testdata(t, "cntk", "ctf", "invalid_inputs.txt")
	want, err := os.ReadFile(testutil.Testdata(t, "cntk", "baselines", "ctf", "invalid_inputs_Control.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(in)) // CNTK names the file as configured: "invalid_inputs.txt"
	var log bytes.Buffer
	r, err := Open("invalid_inputs.txt", &ReaderOptions{
		Inputs: []mlfeed.Stream{
			{Name: "A", Storage: mlfeed.Dense, Dim: 1},
			{Name: "B", Storage: mlfeed.Sparse, Dim: 10},
		},
		MaxErrors: 99999, TraceLevel: 2, ChunkSize: math.MaxInt64, Log: &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Chunks()) != 1 {
		t.Fatalf("%d chunks, want 1", len(r.Chunks()))
	}
	if _, err := r.ReadChunk(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	got, exp := strings.Fields(log.String()), strings.Fields(string(want))
	for i := 0; i < len(got) || i < len(exp); i++ {
		if i >= len(got) || i >= len(exp) || got[i] != exp[i] {
			t.Fatalf("log differs at token %d:\n got: %s\nwant: %s", i, context3(got, i), context3(exp, i))
		}
	}
}

func context3(toks []string, i int) string {
	lo, hi := max(0, i-12), min(len(toks), i+12)
	if lo > len(toks) {
		return "<end>"
	}
	return strings.Join(toks[lo:hi], " ")
}

// cntkTest is one entry of tests.json.
type cntkTest struct {
	Test      string `json:"test"`
	Reader    string `json:"reader"`
	Input     string `json:"input"`
	Precision string `json:"precision"`
	Streams   []struct {
		Name   string `json:"name"`
		Alias  string `json:"alias"`
		Dim    int    `json:"dim"`
		Format string `json:"format"`
	} `json:"streams"`
	Randomize     bool           `json:"randomize"`
	EpochSize     int64          `json:"epochSize"`
	MinibatchSize int64          `json:"minibatchSize"`
	Epochs        int            `json:"epochs"`
	Printed       []string       `json:"printedStreams"`
	Expected      map[string]any `json:"expected"`
	Status        string         `json:"status"`
	Variants      []bool         `json:"defMBSizeVariants"`
	DefinesStream string         `json:"definesMBSizeStream"`
	ReaderOptions map[string]any `json:"readerOptions"`
}

func loadTests(t *testing.T) []cntkTest {
	b, err := os.ReadFile(testutil.Testdata(t, "cntk", "tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []cntkTest `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Tests
}

// options builds reader options for a test; defMBSize marks the section's length-defining
// stream.
func (tc *cntkTest) options(defMBSize bool) *ReaderOptions {
	o := &ReaderOptions{TraceLevel: 1}
	if tc.Precision == "double" {
		o.Precision = mlfeed.Float64
	}
	defining := tc.DefinesStream
	if defining == "" && len(tc.Streams) > 0 {
		defining = tc.Streams[0].Name
	}
	for _, s := range tc.Streams {
		st := mlfeed.Stream{Name: s.Name, Dim: s.Dim, Storage: mlfeed.Dense}
		if s.Alias != s.Name {
			st.Alias = s.Alias
		}
		if s.Format == "sparse" {
			st.Storage = mlfeed.Sparse
		}
		st.DefinesMBSize = defMBSize && s.Name == defining
		o.Inputs = append(o.Inputs, st)
	}
	for k, v := range tc.ReaderOptions {
		switch k {
		case "chunkSizeInBytes":
			if f, ok := v.(float64); ok {
				o.ChunkSize = int64(f)
			}
		case "keepDataInMemory":
			o.KeepDataInMemory = v.(bool)
		case "skipSequenceIds":
			o.SkipSequenceIDs = v.(bool)
		case "maxErrors":
			o.MaxErrors = int(v.(float64))
		case "traceLevel":
			o.TraceLevel = int(v.(float64))
		}
	}
	return o
}

// seqRef is a sequence of the file with its index sample count.
type seqRef struct {
	c       *mlfeed.Chunk
	q       int
	samples int64
}

// harness reproduces the output of CNTK's reader test helper for a file read in file order
// (see ../shared/testdata/cntk/README.md): epochs of minibatches of whole sequences, packed
// first-fit into rows, printed time step by time step with %g.
func harness(t *testing.T, r *Reader, tc *cntkTest) string {
	var seqs []seqRef
	var starts []int64
	var total int64
	for i := range r.Chunks() {
		infos, err := r.Sequences(i)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.ReadChunk(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if c.Sequences != len(infos) || int64(len(infos)) != int64(r.Chunks()[i].Sequences) {
			t.Fatalf("chunk %d: %d sequences decoded, %d indexed, chunk table %d", i, c.Sequences, len(infos), r.Chunks()[i].Sequences)
		}
		var n int64
		for q, in := range infos {
			seqs = append(seqs, seqRef{c, q, in.Samples})
			starts = append(starts, total)
			total += in.Samples
			n += in.Samples
		}
		if n != r.Chunks()[i].Samples {
			t.Fatalf("chunk %d: sequences hold %d samples, chunk table %d", i, n, r.Chunks()[i].Samples)
		}
	}
	sc := r.Schema()
	var out strings.Builder
	for e := 0; e < tc.Epochs; e++ {
		pos, end := int64(e)*tc.EpochSize, int64(e+1)*tc.EpochSize
		sweep, off := pos/total, pos%total
		k := 0
		for k < len(seqs) && starts[k] < off {
			k++
		}
		if k == len(seqs) {
			sweep, k = sweep+1, 0
		}
		pos = sweep*total + starts[k]
		for printed := 0; pos < end && printed < 10; printed++ {
			var mb []seqRef
			var sum int64
			limit := min(tc.MinibatchSize, end-pos)
			for k < len(seqs) && (len(mb) == 0 || sum+seqs[k].samples <= limit) {
				mb = append(mb, seqs[k])
				sum += seqs[k].samples
				k++
			}
			pos += sum
			if k == len(seqs) {
				sweep, k = sweep+1, 0
				pos = sweep * total
			}
			for _, name := range tc.Printed {
				si := sc.Index(name)
				if si < 0 {
					t.Fatalf("no stream %q", name)
				}
				printStream(&out, &sc.Streams[si], si, mb)
			}
		}
	}
	return out.String()
}

// printStream prints one stream of a minibatch as CNTK's test helper does.
func printStream(out *strings.Builder, st *mlfeed.Stream, si int, mb []seqRef) {
	type slot struct{ row, t0 int }
	lens := make([]int, len(mb))
	width := 0
	for j, s := range mb {
		d := &s.c.Streams[si]
		lens[j] = int(d.SeqStart[s.q+1] - d.SeqStart[s.q])
		width = max(width, lens[j])
	}
	var used []int
	place := make([]slot, len(mb))
	for j := range mb {
		r := -1
		for k, u := range used {
			if u+lens[j] <= width {
				r = k
				break
			}
		}
		if r < 0 {
			used = append(used, 0)
			r = len(used) - 1
		}
		place[j] = slot{r, used[r]}
		used[r] += lens[j]
	}
	for tt := 0; tt < width; tt++ {
		for row := range used {
			for j, s := range mb {
				if place[j].row != row || tt < place[j].t0 || tt >= place[j].t0+lens[j] {
					continue
				}
				d := &s.c.Streams[si]
				smp := d.SeqStart[s.q] + int64(tt-place[j].t0)
				vals := make([]float64, st.Dim)
				from, to := d.SampleRange(st, smp)
				for v := from; v < to; v++ {
					if st.Storage == mlfeed.Sparse {
						vals[d.Indices[v]] = d.Values.Float64At(v)
					} else {
						vals[v-from] = d.Values.Float64At(v)
					}
				}
				for v, x := range vals {
					if v > 0 {
						out.WriteByte(' ')
					}
					out.WriteString(strconv.FormatFloat(x, 'g', 6, 64))
				}
				out.WriteByte('\n')
			}
		}
	}
}

// orderFree reports whether the block randomizer cannot change what the test prints: the
// file holds one sequence, or only identical lines. blank_lines is listed by the README as
// keeping file order with seed 0.
func orderFree(t *testing.T, tc *cntkTest, path string) bool {
	if !tc.Randomize || strings.HasSuffix(tc.Test, "_blank_lines") {
		return true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	ids := map[string]bool{}
	same := true
	for _, l := range lines {
		rest := strings.TrimLeft(l, "0123456789")
		ids[l[:len(l)-len(rest)]] = true
		same = same && rest == strings.TrimLeft(lines[0], "0123456789")
	}
	return same || len(ids) == 1 && !strings.HasPrefix(lines[0], "|")
}

// TestCNTKBaselines decodes every CTF input of CNTK's reader tests with the test's
// configuration and reproduces its baseline, both defMBSize variants, wherever the output does
// not depend on the randomizer; the two expected failures fail with CNTK's message.
func TestCNTKBaselines(t *testing.T) {
	for _, tc := range loadTests(t) {
		if tc.Reader != "ctf" || tc.Status != "available" {
			continue
		}
		variants := tc.Variants
		if len(variants) == 0 {
			variants = []bool{false}
		}
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/defMBSize=%v", tc.Test, v), func(t *testing.T) {
				path := testutil.Testdata(t, "cntk", tc.Input)
				exp := tc.Expected
				if e, ok := tc.Expected[fmt.Sprintf("defMBSize=%v", v)]; ok {
					exp = e.(map[string]any)
				}
				t.Chdir(filepath.Dir(path))
				r, err := Open(filepath.Base(path), tc.options(v))
				if msg, ok := exp["error"].(string); ok {
					if err == nil {
						err = r.ReadChunks(context.Background(), func(int, *mlfeed.Chunk) error { return nil })
						r.Close()
					}
					if err == nil || !strings.Contains(err.Error(), msg) {
						t.Fatalf("got error %v, want one containing %q", err, msg)
					}
					t.Logf("fails as expected: %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				base, _ := exp["baseline"].(string)
				if base == "" || !orderFree(t, &tc, path) {
					// The output depends on the randomizer or on distribution (minibatch
					// package); still decode every chunk.
					if err := r.ReadChunks(context.Background(), func(int, *mlfeed.Chunk) error { return nil }); err != nil {
						t.Fatal(err)
					}
					t.Skipf("output depends on the randomizer: decoded only")
				}
				want, err := os.ReadFile(testutil.Testdata(t, "cntk", base))
				if err != nil {
					t.Fatal(err)
				}
				got := strings.Fields(harness(t, r, &tc))
				exp2 := strings.Fields(string(want))
				for i := 0; i < len(got) || i < len(exp2); i++ {
					if i >= len(got) || i >= len(exp2) || got[i] != exp2[i] {
						t.Fatalf("output differs from %s at token %d (of %d/%d):\n got: %s\nwant: %s", base, i, len(got), len(exp2), context3(got, i), context3(exp2, i))
					}
				}
			})
		}
	}
}
