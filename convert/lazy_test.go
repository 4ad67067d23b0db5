package convert_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// TestSequentialCTF converts CTF files large enough that a conversion reads them without an
// index (format.Options.Sequential; see format/ctf/lazy.go) to CBF as ctf2bin.py does, to
// CTF and, one sample per sequence, to IDX (which wants the count up front): every output is
// byte for byte that of a conversion from an indexed reader, with and without a progress
// report.
func TestSequentialCTF(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var multi, single bytes.Buffer
	for q := 0; multi.Len() < 9<<20; q++ {
		for l := range 1 + rng.IntN(4) {
			if l == 0 || rng.IntN(2) == 0 {
				fmt.Fprintf(&multi, "%d", q)
			}
			fmt.Fprintf(&multi, "\t|x %.4f %.3f |y %d:%.2f %d:1\n", rng.Float64(), rng.NormFloat64(), rng.IntN(50), rng.Float64(), 50+rng.IntN(50))
		}
	}
	for q := 0; single.Len() < 9<<20; q++ {
		fmt.Fprintf(&single, "%d |x %.4f %.3f %d\n", q, rng.Float64(), rng.NormFloat64(), rng.IntN(9))
	}
	inputs := map[string][]byte{"multi.ctf": multi.Bytes(), "single.ctf": single.Bytes()}
	for name, b := range inputs {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		in, out string
		write   format.WriteOptions
	}{
		{"multi.ctf", "cbf", format.WriteOptions{Compat: "ctf2bin", ChunkSize: 1 << 20}},
		{"multi.ctf", "cbf", format.WriteOptions{}},
		{"multi.ctf", "ctf", format.WriteOptions{}},
		{"single.ctf", "idx", format.WriteOptions{}},
	} {
		var outs [][]byte
		for _, seq := range []bool{false, true, true} {
			progress := len(outs) == 2
			ctx := sched.WithContext(ctx, sched.New(2, 0))
			src, err := dataset.OpenFiles([]string{filepath.Join(dir, tc.in)}, "ctf", &format.Options{Sequential: seq, Context: ctx})
			if err != nil {
				t.Fatal(err)
			}
			if n := mlfeed.NumChunks(src); seq && n < 2 {
				t.Fatalf("%s: %d chunks", tc.in, n)
			}
			out := filepath.Join(dir, fmt.Sprintf("out%d.%s", len(outs), tc.out))
			opts := &convert.Options{Write: tc.write}
			var done, total int64
			if progress {
				opts.Progress = func(d, n int64) { done, total = d, n }
			}
			if err := convert.File(ctx, src, out, opts); err != nil {
				t.Fatalf("%s to %s (sequential %v): %v", tc.in, tc.out, seq, err)
			}
			src.Close()
			if progress && (done == 0 || done != total) {
				t.Errorf("%s to %s: progress %d of %d", tc.in, tc.out, done, total)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, b)
		}
		if !bytes.Equal(outs[1], outs[0]) || !bytes.Equal(outs[2], outs[0]) {
			t.Errorf("%s to %s: a sequential read gives another output (%d, %d bytes; indexed %d)", tc.in, tc.out, len(outs[1]), len(outs[2]), len(outs[0]))
		}
	}
}
