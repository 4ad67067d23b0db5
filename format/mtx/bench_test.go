package mtx_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed/format/mtx"
)

// writeBench writes a random real general coordinate file of nnz entries, about 20 per row,
// in row order with sorted columns (as mlfeed's writer orders them).
func writeBench(w io.Writer, nnz int) error {
	rows, cols := max(1, nnz/20), 1<<20
	r := rand.New(rand.NewSource(42))
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", rows, cols, nnz)
	buf := make([]byte, 0, 64)
	for i := 0; i < rows; i++ {
		lo, hi := i*nnz/rows, (i+1)*nnz/rows
		c := r.Intn(cols / 2)
		step := (cols / 2) / max(1, hi-lo)
		for k := lo; k < hi; k++ {
			buf = strconv.AppendInt(buf[:0], int64(i+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(c+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(r.Intn(1<<20))/1024, 'g', -1, 64)
			buf = append(buf, '\n')
			bw.Write(buf)
			c += 1 + r.Intn(max(1, step-1))
		}
	}
	return bw.Flush()
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	if err := writeBench(&buf, 1<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := mtx.Read(bytes.NewReader(data), "bench.mtx"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	var buf bytes.Buffer
	if err := writeBench(&buf, 1<<20); err != nil {
		b.Fatal(err)
	}
	m, err := mtx.Read(&buf, "bench.mtx")
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	for i := 0; i < b.N; i++ {
		out.Reset()
		if err := mtx.Write(&out, m, nil); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(out.Len()))
	}
}

// BenchmarkScript is what bench/binsparse.sh runs: with MLFEED_BENCH_DIR set it parses
// $MLFEED_BENCH_DIR/bench.mtx, first writing it (MLFEED_BENCH_NNZ entries, default 20
// million) when it does not exist.
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("skipped: set MLFEED_BENCH_DIR (bench/binsparse.sh does)")
	}
	p := filepath.Join(dir, "bench.mtx")
	if _, err := os.Stat(p); err != nil {
		nnz := 20_000_000
		if s := os.Getenv("MLFEED_BENCH_NNZ"); s != "" {
			nnz, _ = strconv.Atoi(s)
		}
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := writeBench(f, nnz); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	st, _ := os.Stat(p)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := mtx.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(m.Descriptor.NumberOfStoredValues), "entries")
		}
	}
}
