package cbf_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	"github.com/mlfeed/mlfeed/internal/testutil"
)

// ctf2binRun is one ctf2bin.py run of testdata/cntk/generated/ctf2bin/MANIFEST.tsv.
type ctf2binRun struct {
	output, input string
	streams       []mlfeed.Stream // from the header file
	chunkSize     int64
	precision     string
}

func manifest(t *testing.T) []ctf2binRun {
	dir := testutil.Testdata(t, "cntk", "generated", "ctf2bin")
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []ctf2binRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		size, err := strconv.ParseInt(c[3], 10, 64)
		if err != nil {
			t.Fatalf("manifest line %q: %v", line, err)
		}
		r := ctf2binRun{output: filepath.Join(dir, c[0]), input: filepath.Join(dir, "..", "..", c[1]), chunkSize: size, precision: c[4]}
		hdr, err := os.Open(filepath.Join(dir, c[2]))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(hdr)
		for sc.Scan() {
			f := strings.Fields(sc.Text()) // name alias dense|sparse dim, as ctf2bin.py reads it
			st, err := format.ParseInput(strings.Join([]string{f[0], f[2], f[3], f[1]}, ":"))
			if err != nil {
				t.Fatal(err)
			}
			r.streams = append(r.streams, st)
		}
		hdr.Close()
		runs = append(runs, r)
	}
	if len(runs) != 11 {
		t.Fatalf("%d manifest entries, want 11", len(runs))
	}
	return runs
}

// convertFile converts the named inputs to out as `mlfeed convert` does: format.Open, then
// convert.File with the output format from the name.
func convertFile(t *testing.T, inputs []string, fo *format.Options, out string, wo format.WriteOptions) {
	t.Helper()
	src, err := dataset.OpenFiles(inputs, "", fo)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := convert.File(context.Background(), src, out, &convert.Options{Write: wo}); err != nil {
		t.Fatal(err)
	}
}

// TestCTF2Bin converts each CTF input of the manifest with --compat ctf2bin, the same stream
// declarations, chunk size and precision, and compares the bytes with ctf2bin.py's.
func TestCTF2Bin(t *testing.T) {
	for _, r := range manifest(t) {
		t.Run(filepath.Base(r.output), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.cbf")
			convertFile(t, []string{r.input}, &format.Options{Inputs: r.streams, Params: map[string]string{"precision": r.precision}},
				out, format.WriteOptions{Compat: cbf.CompatCTF2Bin, ChunkSize: r.chunkSize})
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(r.output)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("differs from ctf2bin.py's output at byte %d (%d vs %d bytes)", testutil.FirstDiff(got, want), len(got), len(want))
			}
		})
	}
}

// TestCTFRoundTrip converts every CBF file of the corpus to CTF and back with --compat
// ctf2bin: the bytes must come back unchanged, since every one of them is ctf2bin.py output.
func TestCTFRoundTrip(t *testing.T) {
	chunkSize := map[string]int64{"Simple_jagged_sequence.bin": 1} // one sequence per chunk
	for _, r := range manifest(t) {
		chunkSize[filepath.Base(r.output)] = r.chunkSize
	}
	for name, size := range chunkSize {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(testutil.Testdata(t, "cntk"), "cbf", name)
			if _, err := os.Stat(path); err != nil {
				path = testutil.Testdata(t, "cntk", "generated", "ctf2bin", name)
			}
			rd, err := cbf.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			schema := rd.Schema()
			rd.Close()
			dir := t.TempDir()
			text := filepath.Join(dir, "data.ctf")
			convertFile(t, []string{path}, nil, text, format.WriteOptions{})
			precision := "float"
			if schema.Streams[0].Type == mlfeed.Float64 {
				precision = "double"
			}
			back := filepath.Join(dir, "back.cbf")
			convertFile(t, []string{text}, &format.Options{Inputs: schema.Streams, Params: map[string]string{"precision": precision}},
				back, format.WriteOptions{Compat: cbf.CompatCTF2Bin, ChunkSize: size})
			got, _ := os.ReadFile(back)
			want, _ := os.ReadFile(path)
			if !bytes.Equal(got, want) {
				t.Fatalf("differs after CBF -> CTF -> CBF at byte %d (%d vs %d bytes)", testutil.FirstDiff(got, want), len(got), len(want))
			}
		})
	}
}

// TestCTF2BinSequences: a CTF file converted with --compat ctf2bin has ctf2bin.py's
// sequences, which group lines by id and join a line without an id to the sequence before
// it, across chunks of the CTF reader; a file whose first line has no id has one sequence per
// line.
func TestCTF2BinSequences(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want []int64
	}{
		{"1 |x 1\n2 |x 2\n2 |x 3\n|x 4\n3 |x 5\n|x 6\n|x 7\n", []int64{0, 1, 4, 7}},
		{"|x 1\n|x 2\n", []int64{0, 1, 2}},
	} {
		in := filepath.Join(dir, "in.ctf")
		if err := os.WriteFile(in, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.cbf")
		os.Remove(out)
		st := mlfeed.Stream{Name: "x", Storage: mlfeed.Dense, Dim: 1}
		convertFile(t, []string{in}, &format.Options{Inputs: []mlfeed.Stream{st}, Params: map[string]string{"chunkSizeInBytes": "8"}},
			out, format.WriteOptions{Compat: cbf.CompatCTF2Bin})
		r, err := cbf.Open(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		seq := []int64{0}
		for i := range r.Chunks() {
			c, err := r.ReadChunk(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Streams[0].SeqStart
			for q := 0; q < c.Sequences; q++ {
				seq = append(seq, seq[len(seq)-1]+d[q+1]-d[q])
			}
		}
		r.Close()
		if !slices.Equal(seq, tc.want) {
			t.Errorf("%q: sequences %v, want %v", tc.text, seq, tc.want)
		}
	}
}
