package libsvm

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

// benchText returns LIBSVM text of n lines with about 40 features each, values as
// dump_svmlight_file writes them (%.16g).
func benchText(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		b.WriteString(strconv.Itoa(r.IntN(10)))
		idx := 0
		for k := 0; k < 40; k++ {
			idx += 1 + r.IntN(50)
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(idx))
			b.WriteByte(':')
			b.WriteString(strconv.FormatFloat(r.Float64(), 'g', 16, 64))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readAll opens data and parses every chunk on this goroutine, reusing chunk memory.
func readAll(tb testing.TB, rd *Reader) int {
	var c *mlfeed.Chunk
	nnz := 0
	for i := range rd.Chunks() {
		var err error
		if c, err = rd.ReadChunkReuse(context.Background(), i, c); err != nil {
			tb.Fatal(err)
		}
		nnz += len(c.Streams[1].Indices)
	}
	return nnz
}

// BenchmarkRead measures the scan and the parse of 20 000 lines in memory.
func BenchmarkRead(b *testing.B) {
	data := benchText(20000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rd, err := NewReaderBytes(data, nil)
		if err != nil {
			b.Fatal(err)
		}
		readAll(b, rd)
	}
}

// BenchmarkWrite measures formatting the same data.
func BenchmarkWrite(b *testing.B) {
	data := benchText(20000)
	rd, err := NewReaderBytes(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := rd.ReadChunk(context.Background(), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		w, err := NewWriter(&out, rd.Schema(), nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := range rd.Chunks() {
			c, _ = rd.ReadChunk(context.Background(), i)
			if err := w.WriteChunk(c); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
	}
}

// BenchmarkScript reads the file MLFEED_BENCH_FILE (bench/libsvm.sh sets it): Open's scan and
// every chunk's parse, on one goroutine. It reports the CPU seconds per read beside the wall
// time.
func BenchmarkScript(b *testing.B) {
	name := os.Getenv("MLFEED_BENCH_FILE")
	if name == "" {
		b.Skip("MLFEED_BENCH_FILE not set (bench/libsvm.sh sets it)")
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	cpu := cputime.Seconds()
	for b.Loop() {
		rd, err := Open(name, nil)
		if err != nil {
			b.Fatal(err)
		}
		readAll(b, rd)
		rd.Close()
	}
	// CPU time as well as wall time: on a busy machine the wall clock counts waiting too.
	b.ReportMetric((cputime.Seconds()-cpu)/float64(b.N), "cpu-s/op")
}
