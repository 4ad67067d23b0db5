//go:build unix

// Command ctfbench generates synthetic CTF files and times reading them, for bench/ctf.sh:
//
//	ctfbench gen -kind dense|sparse|mix -mb 200 -o FILE
//	ctfbench read [-n RUNS] [-input NAME:dense|sparse:DIM ...] FILE
//	ctfbench spin
//
// spin measures the parallelism the machine actually grants: it times a pure computation on
// one goroutine and on GOMAXPROCS goroutines (the same work each) and prints the speed-up, the
// ceiling for any parallel code on this machine at this moment.
//
// read prints one line: the file size, the best wall time of the runs and the CPU time of that
// run, and the throughputs in MB/s (10^6 bytes per second) by wall time and by CPU time.
//
// gen kinds:
// dense: one sequence per line, |features with 100 values of 6 decimals and a one-hot |labels
// of 10 (the kind numpy.loadtxt can also read). sparse: one sequence per line, |words with 1
// to 40 index:value pairs below 100000 and |labels with one pair. mix: sequences of 1 to 8
// lines with ids, a dense |x of 16 values, a sparse |w and a sparse |y.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/format/ctf"
	"github.com/mlfeed/mlfeed/internal/cputime"
	"github.com/mlfeed/mlfeed/internal/sched"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ctfbench gen|read ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "gen":
		gen(os.Args[2:])
	case "read":
		read(os.Args[2:])
	case "spin":
		spin()
	default:
		fmt.Fprintln(os.Stderr, "usage: ctfbench gen|read ...")
		os.Exit(2)
	}
}

type inputs []mlfeed.Stream

func (in *inputs) String() string { return fmt.Sprint(*in) }
func (in *inputs) Set(s string) error {
	st, err := format.ParseInput(s)
	*in = append(*in, st)
	return err
}

func read(args []string) {
	fs := flag.NewFlagSet("read", flag.ExitOnError)
	runs := fs.Int("n", 3, "runs; the best is reported")
	var in inputs
	fs.Var(&in, "input", "stream `NAME:dense|sparse:DIM` (repeatable; default: infer)")
	prof := fs.String("cpuprofile", "", "write a CPU profile to `FILE`")
	indexOnly := fs.Bool("index", false, "time Open (the index) only")
	fs.Parse(args)
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "ctfbench read: one FILE")
		os.Exit(2)
	}
	name := fs.Arg(0)
	st, err := os.Stat(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bestWall, bestCPU := time.Duration(1<<62), time.Duration(0)
	for k := 0; k < *runs; k++ {
		runtime.GC()
		c0 := cputime.Used()
		t0 := time.Now()
		r, err := ctf.Open(name, &ctf.ReaderOptions{Inputs: in})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var values int64
		if *indexOnly {
			r.Close()
			wall, cpu := time.Since(t0), cputime.Used()-c0
			if wall < bestWall {
				bestWall, bestCPU = wall, cpu
			}
			continue
		}
		ctx := sched.WithContext(context.Background(), sched.New(runtime.GOMAXPROCS(0), 0))
		err = r.ReadChunks(ctx, func(_ int, c *mlfeed.Chunk) error {
			for _, d := range c.Streams {
				values += int64(d.Values.Len())
			}
			return nil
		})
		r.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		wall, cpu := time.Since(t0), cputime.Used()-c0
		if wall < bestWall {
			bestWall, bestCPU = wall, cpu
		}
	}
	mb := float64(st.Size()) / 1e6
	fmt.Printf("bytes=%d wall_s=%.3f cpu_s=%.3f wall_MBps=%.1f cpu_MBps=%.1f\n", st.Size(), bestWall.Seconds(), bestCPU.Seconds(), mb/bestWall.Seconds(), mb/bestCPU.Seconds())
}

func spin() {
	work := func() {
		x := uint64(1)
		for i := 0; i < 4e8; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 42 {
			fmt.Println()
		}
	}
	best := func(n int) time.Duration {
		b := time.Duration(1 << 62)
		for k := 0; k < 3; k++ {
			t0 := time.Now()
			var wg sync.WaitGroup
			for g := 0; g < n; g++ {
				wg.Add(1)
				go func() { defer wg.Done(); work() }()
			}
			wg.Wait()
			b = min(b, time.Since(t0))
		}
		return b
	}
	n := runtime.GOMAXPROCS(0)
	one, all := best(1), best(n)
	fmt.Printf("goroutines=%d speedup=%.2f\n", n, float64(n)*one.Seconds()/all.Seconds())
}

func gen(args []string) {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	kind := fs.String("kind", "dense", "dense, sparse or mix")
	mb := fs.Int64("mb", 200, "size in MB (10^6 bytes)")
	out := fs.String("o", "", "output file")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Parse(args)
	if *out == "" {
		fmt.Fprintln(os.Stderr, "ctfbench gen: -o FILE is required")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(*seed, 2))
	limit := *mb * 1000 * 1000
	var n int64
	var b []byte
	dec := func(b []byte) []byte {
		v := rng.Float64()*2 - 1
		return strconv.AppendFloat(b, float64(int64(v*1e6))/1e6, 'f', -1, 64)
	}
	for seq := 0; n < limit; seq++ {
		b = b[:0]
		switch *kind {
		case "dense":
			b = append(b, "|features"...)
			for k := 0; k < 100; k++ {
				b = append(b, ' ')
				b = dec(b)
			}
			b = append(b, " |labels"...)
			hot := rng.IntN(10)
			for k := 0; k < 10; k++ {
				if k == hot {
					b = append(b, " 1"...)
				} else {
					b = append(b, " 0"...)
				}
			}
			b = append(b, '\n')
		case "sparse":
			b = append(b, "|words"...)
			for k := rng.IntN(40) + 1; k > 0; k-- {
				b = append(b, ' ')
				b = strconv.AppendInt(b, int64(rng.IntN(100000)), 10)
				b = append(b, ':')
				b = dec(b)
			}
			b = append(b, "\t|labels "...)
			b = strconv.AppendInt(b, int64(rng.IntN(10)), 10)
			b = append(b, ":1\n"...)
		case "mix":
			for line := rng.IntN(8) + 1; line > 0; line-- {
				b = strconv.AppendInt(b, int64(seq), 10)
				b = append(b, " |x"...)
				for k := 0; k < 16; k++ {
					b = append(b, ' ')
					b = dec(b)
				}
				b = append(b, " |w"...)
				for k := rng.IntN(30) + 1; k > 0; k-- {
					b = append(b, ' ')
					b = strconv.AppendInt(b, int64(rng.IntN(100000)), 10)
					b = append(b, ":1"...)
				}
				b = append(b, " |y "...)
				b = strconv.AppendInt(b, int64(rng.IntN(10)), 10)
				b = append(b, ":1\n"...)
			}
		default:
			fmt.Fprintln(os.Stderr, "ctfbench gen: -kind must be dense, sparse or mix")
			os.Exit(2)
		}
		w.Write(b)
		n += int64(len(b))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
