// Command cbfbench generates data and reads CBF files for bench/cbf.sh.
//
//	cbfbench gen dense|sparse OUT MB    write a CBF file of about MB megabytes
//	cbfbench genctf OUT MB              write a CTF file of about MB megabytes (dense F, sparse S)
//	cbfbench read [-runs N] [-parallel P] [-sum=false] [-nommap] FILE
//	                                    decode every chunk and sum every value (or only decode);
//	                                    print the median seconds of N runs, the sum and the
//	                                    mean CPU seconds (user and system) of a run. With
//	                                    P > 1, P goroutines read chunks at once.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/cbf"
	"github.com/mlfeed/mlfeed/format/cbf/internal/fsum"
	"github.com/mlfeed/mlfeed/internal/cputime"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		if len(os.Args) != 5 {
			usage()
		}
		err = gen(os.Args[2], os.Args[3], mb(os.Args[4]))
	case "genctf":
		if len(os.Args) != 4 {
			usage()
		}
		err = genCTF(os.Args[2], mb(os.Args[3]))
	case "read":
		fs := flag.NewFlagSet("read", flag.ExitOnError)
		runs := fs.Int("runs", 3, "runs")
		par := fs.Int("parallel", 1, "goroutines reading chunks")
		sum := fs.Bool("sum", true, "sum every value")
		noMmap := fs.Bool("nommap", false, "read chunks with ReadAt instead of mapping the file")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 || *par < 1 {
			usage()
		}
		err = read(fs.Arg(0), &cbf.ReaderOptions{NoMmap: *noMmap}, *runs, *par, *sum)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cbfbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cbfbench gen dense|sparse OUT MB | genctf OUT MB | read [-runs N] [-parallel P] [-sum=false] [-nommap] FILE")
	os.Exit(2)
}

func mb(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		usage()
	}
	return n << 20
}

// gen writes dense float32 samples of dim 256, or sparse samples of dim 100000 with 64
// values each, in sequences of 1 to 16 samples.
func gen(kind, out string, size int64) error {
	st := mlfeed.Stream{Name: "x", Storage: mlfeed.Dense, Type: mlfeed.Float32, Dim: 256}
	perSample := int64(256 * 4)
	switch kind {
	case "dense":
	case "sparse":
		st.Storage, st.Dim, perSample = mlfeed.Sparse, 100000, 64*8+4
	default:
		usage()
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := cbf.NewWriter(f, mlfeed.Schema{Streams: []mlfeed.Stream{st}}, nil)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 2))
	for total := int64(0); total < size; {
		c := &mlfeed.Chunk{}
		d := mlfeed.StreamData{SeqStart: []int64{0}}
		var vals []float32
		if st.Storage == mlfeed.Sparse {
			d.SampleStart = []int64{0}
		}
		for ; c.Sequences < 4096 && total < size; c.Sequences++ {
			n := 1 + r.IntN(16)
			for range n {
				if st.Storage == mlfeed.Dense {
					for range st.Dim {
						vals = append(vals, r.Float32())
					}
					continue
				}
				ix := make([]int32, 64)
				for j := range ix {
					ix[j] = int32(r.IntN(st.Dim))
				}
				slices.Sort(ix)
				for _, i := range ix {
					d.Indices = append(d.Indices, i)
					vals = append(vals, r.Float32())
				}
				d.SampleStart = append(d.SampleStart, int64(len(d.Indices)))
			}
			d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+int64(n))
			total += int64(n) * perSample
		}
		d.Values = mlfeed.NewBuffer(mlfeed.Float32, len(vals))
		copy(d.Values.Float32s(), vals)
		c.Streams = []mlfeed.StreamData{d}
		if err := w.WriteChunk(c); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// genCTF writes sequences of 1 to 8 lines with an id, a dense |F of dim 32 and a sparse |S of
// dim 10000 with 8 values.
func genCTF(out string, size int64) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(3, 4))
	var written int64
	var line []byte
	for id := 0; written < size; id++ {
		for range 1 + r.IntN(8) {
			line = strconv.AppendInt(line[:0], int64(id), 10)
			line = append(line, "\t|F"...)
			for range 32 {
				line = append(line, ' ')
				line = strconv.AppendFloat(line, float64(float32(r.NormFloat64())), 'g', 6, 32)
			}
			line = append(line, " |S"...)
			// Eight distinct indices: a sample repeating one is refused by the CTF reader.
			var picked [8]int
			for k := range picked {
				for again := true; again; {
					picked[k], again = r.IntN(10000), false
					for _, p := range picked[:k] {
						again = again || p == picked[k]
					}
				}
			}
			for _, ix := range picked {
				line = append(line, ' ')
				line = strconv.AppendInt(line, int64(ix), 10)
				line = append(line, ':')
				line = strconv.AppendFloat(line, float64(float32(r.Float64())), 'g', 6, 32)
			}
			line = append(line, '\n')
			bw.Write(line)
			written += int64(len(line))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// read decodes every chunk of a CBF file and sums the values, runs times, and prints the
// median time in seconds and the sum. par goroutines take chunks in turn. Without sum, the
// chunks are only decoded.
func read(name string, opts *cbf.ReaderOptions, runs, par int, sum bool) error {
	var times []float64
	var total float64
	cpu0 := cputime.Seconds()
	for range runs {
		t := time.Now()
		rd, err := cbf.Open(name, opts)
		if err != nil {
			return err
		}
		sums := make([]float64, len(rd.Chunks()))
		errs := make([]error, par)
		var next atomic.Int64
		var wg sync.WaitGroup
		for g := range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var c *mlfeed.Chunk // the previous chunk, whose memory the next one reuses
				for i := int(next.Add(1) - 1); i < len(sums); i = int(next.Add(1) - 1) {
					var err error
					if c, err = rd.ReadChunkReuse(context.Background(), i, c); err != nil {
						errs[g] = err
						return
					}
					for k := range c.Streams {
						if sum {
							sums[i] += add(c.Streams[k].Values.Float32s())
						}
					}
				}
			}()
		}
		wg.Wait()
		rd.Close()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		times = append(times, time.Since(t).Seconds())
		total = 0
		for _, s := range sums {
			total += s
		}
	}
	cpu := (cputime.Seconds() - cpu0) / float64(runs)
	slices.Sort(times)
	fmt.Printf("%.6f %.6g %.6f\n", times[len(times)/2], total, cpu)
	return nil
}

// add sums v, with NaN counted as 0 so that sums stay comparable.
func add(v []float32) float64 {
	s := fsum.Float32s(v)
	if math.IsNaN(s) {
		return 0
	}
	return s
}
