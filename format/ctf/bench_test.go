package ctf

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// benchFile writes a synthetic file of about size bytes: dense (100 values of 6 decimals and a
// one-hot label per line) or sparse (1 to 40 index:value pairs per line).
func benchFile(b *testing.B, kind string, size int) (string, []mlfeed.Stream) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	for buf.Len() < size {
		if kind == "dense" {
			buf.WriteString("|features")
			for k := 0; k < 100; k++ {
				buf.WriteByte(' ')
				buf.WriteString(strconv.FormatFloat(float64(int64((rng.Float64()*2-1)*1e6))/1e6, 'f', -1, 64))
			}
			fmt.Fprintf(&buf, " |labels %d:1\n", rng.IntN(10))
		} else {
			buf.WriteString("|words")
			for k := rng.IntN(40) + 1; k > 0; k-- {
				fmt.Fprintf(&buf, " %d:%s", rng.IntN(100000), strconv.FormatFloat(float64(int64(rng.Float64()*1e6))/1e6, 'f', -1, 64))
			}
			fmt.Fprintf(&buf, " |labels %d:1\n", rng.IntN(10))
		}
	}
	name := filepath.Join(b.TempDir(), kind+".ctf")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	in := []mlfeed.Stream{{Name: "features", Storage: mlfeed.Dense, Dim: 100}, {Name: "labels", Storage: mlfeed.Sparse, Dim: 10}}
	if kind != "dense" {
		in[0] = mlfeed.Stream{Name: "words", Storage: mlfeed.Sparse, Dim: 100000}
	}
	return name, in
}

func benchRead(b *testing.B, name string, opts *ReaderOptions) {
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Open(name, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.ReadChunks(context.Background(), func(int, *mlfeed.Chunk) error { return nil }); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkRead indexes and parses a file with every core GOMAXPROCS allows (run with
// -cpu 1,2 to see the scaling).
func BenchmarkRead(b *testing.B) {
	for _, kind := range []string{"dense", "sparse"} {
		b.Run(kind, func(b *testing.B) {
			name, in := benchFile(b, kind, 16<<20)
			benchRead(b, name, &ReaderOptions{Inputs: in, ChunkSize: 1 << 20})
		})
	}
}

// BenchmarkIndex measures the indexer alone.
func BenchmarkIndex(b *testing.B) {
	name, in := benchFile(b, "dense", 16<<20)
	st, _ := os.Stat(name)
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		r, err := Open(name, &ReaderOptions{Inputs: in})
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkWrite measures the writer on a decoded dense file.
func BenchmarkWrite(b *testing.B) {
	name, in := benchFile(b, "dense", 4<<20)
	r, err := Open(name, &ReaderOptions{Inputs: in})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	c, err := r.ReadChunk(context.Background(), 0)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(name)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		w, _ := NewWriter(&out, r.Schema(), nil)
		if err := w.WriteChunk(c); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
}

// BenchmarkFile reads the file named by $MLFEED_CTF_BENCH_FILE with the streams in
// $MLFEED_CTF_BENCH_INPUTS (comma-separated --input declarations); bench/ctf.sh uses it.
func BenchmarkFile(b *testing.B) {
	name := os.Getenv("MLFEED_CTF_BENCH_FILE")
	if name == "" {
		b.Skip("set MLFEED_CTF_BENCH_FILE (see bench/ctf.sh)")
	}
	var in []mlfeed.Stream
	for _, d := range strings.Split(os.Getenv("MLFEED_CTF_BENCH_INPUTS"), ",") {
		if d == "" {
			continue
		}
		s, err := format.ParseInput(d)
		if err != nil {
			b.Fatal(err)
		}
		in = append(in, s)
	}
	benchRead(b, name, &ReaderOptions{Inputs: in})
}

// BenchmarkPythonFloats reads values as Python writes them (repr, up to 17 significant
// digits) into declared float32 streams: rounded and counted (the default), rounded without a
// count (precision=float), and read at float64 (precision=double).
func BenchmarkPythonFloats(b *testing.B) {
	text, _, _ := pythonFloats(40000, 16, 3)
	name := filepath.Join(b.TempDir(), "py.ctf")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	in := []mlfeed.Stream{{Name: "x", Storage: mlfeed.Dense, Dim: 16}, {Name: "y", Storage: mlfeed.Sparse, Dim: 5}}
	for _, c := range []struct {
		name string
		prec mlfeed.ElemType
	}{{"default", mlfeed.Invalid}, {"float", mlfeed.Float32}, {"double", mlfeed.Float64}} {
		b.Run(c.name, func(b *testing.B) { benchRead(b, name, &ReaderOptions{Inputs: in, Precision: c.prec}) })
	}
}
