package binsparse_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// BigCSR returns a deterministic random CSR matrix with about nnz stored values: uint64
// pointers, uint32 column indices and float64 values, about 20 values per row (the matrix of
// bench/binsparse.sh).
func bigCSR(tb testing.TB, nnz int) *binsparse.Matrix {
	rows := max(1, nnz/20)
	cols := 1 << 20
	r := rand.New(rand.NewSource(42))
	ptr := mlfeed.NewBuffer(mlfeed.Uint64, rows+1)
	p := ptr.Uint64s()
	idx := mlfeed.NewBuffer(mlfeed.Uint32, nnz)
	ix := idx.Uint32s()
	vals := mlfeed.NewBuffer(mlfeed.Float64, nnz)
	v := vals.Float64s()
	for i := 0; i < rows; i++ {
		lo, hi := i*nnz/rows, (i+1)*nnz/rows
		p[i+1] = uint64(hi)
		// Sorted distinct columns: a random start and random gaps.
		c := uint32(r.Intn(cols / 2))
		step := uint32((cols / 2) / max(1, hi-lo))
		for k := lo; k < hi; k++ {
			ix[k] = c
			c += 1 + uint32(r.Intn(int(max(1, step-1))))
			v[k] = float64(r.Intn(1<<20)) / 1024
		}
	}
	m, err := binsparse.New(binsparse.CSR, []int64{int64(rows), int64(cols)}, map[string]mlfeed.Buffer{
		"pointers_to_1": ptr, "indices_1": idx, "values": vals}, false)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func matrixBytes(m *binsparse.Matrix) int64 {
	var n int64
	for _, b := range m.Arrays {
		n += int64(len(b.Bytes))
	}
	return n
}

// benchWriteRead times writing m to the file p and reading it back.
func benchWriteRead(b *testing.B, m *binsparse.Matrix, p string, opts *binsparse.WriteOptions) {
	b.Run("write", func(b *testing.B) {
		b.SetBytes(matrixBytes(m))
		for i := 0; i < b.N; i++ {
			if err := binsparse.WriteFile(p, m, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(matrixBytes(m))
		for i := 0; i < b.N; i++ {
			if _, err := binsparse.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkHDF5(b *testing.B) {
	benchWriteRead(b, bigCSR(b, 1<<20), filepath.Join(b.TempDir(), "m.bsp.h5"), nil)
}

func BenchmarkHDF5Uncompressed(b *testing.B) {
	benchWriteRead(b, bigCSR(b, 1<<20), filepath.Join(b.TempDir(), "m.bsp.h5"), &binsparse.WriteOptions{Level: binsparse.NoCompression})
}

func BenchmarkNPZ(b *testing.B) {
	benchWriteRead(b, bigCSR(b, 1<<20), filepath.Join(b.TempDir(), "m.bsp.npz"), nil)
}

func BenchmarkConvertCSRToCSC(b *testing.B) {
	m := bigCSR(b, 1<<20)
	b.SetBytes(matrixBytes(m))
	for i := 0; i < b.N; i++ {
		if _, err := m.Convert(binsparse.CSC, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	m := bigCSR(b, 1<<20)
	b.SetBytes(matrixBytes(m))
	for i := 0; i < b.N; i++ {
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScript is what bench/binsparse.sh runs: with MLFEED_BENCH_DIR set it writes a CSR
// matrix of MLFEED_BENCH_NNZ values (default 20 million) to $MLFEED_BENCH_DIR/mlfeed.bsp.h5
// (deflate level 1, 1 MiB chunks, as the script's h5py side writes); with MLFEED_BENCH_FILES
// (comma-separated) set it reads each of those files instead. Both run with a scheduler of
// GOMAXPROCS threads in the context, as the command line's commands do; MLFEED_BENCH_THREADS
// sets another number (1: serial).
func BenchmarkScript(b *testing.B) {
	dir := os.Getenv("MLFEED_BENCH_DIR")
	if dir == "" {
		b.Skip("skipped: set MLFEED_BENCH_DIR (bench/binsparse.sh does)")
	}
	threads, _ := strconv.Atoi(os.Getenv("MLFEED_BENCH_THREADS"))
	ctx := sched.WithContext(context.Background(), sched.New(threads, 0))
	if files := os.Getenv("MLFEED_BENCH_FILES"); files != "" {
		for _, p := range strings.Split(files, ",") {
			b.Run("read/"+filepath.Base(p), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := binsparse.ReadFileContext(ctx, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		return
	}
	nnz := 20_000_000
	if s := os.Getenv("MLFEED_BENCH_NNZ"); s != "" {
		nnz, _ = strconv.Atoi(s)
	}
	m := bigCSR(b, nnz)
	b.Run("write", func(b *testing.B) {
		b.SetBytes(matrixBytes(m))
		for i := 0; i < b.N; i++ {
			if err := binsparse.WriteFileContext(ctx, filepath.Join(dir, "mlfeed.bsp.h5"), m, &binsparse.WriteOptions{Level: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
