//go:build unix

// Command chunkorder measures what reading a data set's chunks in a random order costs
// against reading them in file order: the CPU time (user + system, of every thread of the
// process) of ReadChunk on every chunk once, from one goroutine, as the minibatch engine's
// randomizer and convert ask for them. Decoders that spend work on the order they guess
// (speculative parses or read-ahead of the next chunk on other cores) show here as a ratio
// above 1. It prints the median of -runs runs of each order and the ratio. It uses only
// format.Open and Source.ReadChunk, so bench/minibatch.sh builds it against an older tree too.
//
//	go run ./bench/chunkorder [-runs N] FILE...
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/internal/cputime"
	_ "github.com/mlfeed/mlfeed/storage/all"
)

// sweep reads every chunk of a freshly opened source in the given order and returns the CPU
// time it took, opening excluded.
func sweep(names []string, shuffle bool, seed uint64) time.Duration {
	src, err := dataset.OpenFiles(names, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	order := make([]int, len(src.Chunks()))
	for i := range order {
		order[i] = i
	}
	if shuffle {
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	start := cputime.Used()
	var n int64
	for _, i := range order {
		c, err := src.ReadChunk(context.Background(), i)
		if err != nil {
			log.Fatal(err)
		}
		n += int64(c.Sequences)
	}
	if total, _ := mlfeed.Totals(src.Chunks()); n != total {
		log.Fatalf("read %d sequences of %d", n, total)
	}
	return cputime.Used() - start
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func main() {
	runs := flag.Int("runs", 5, "runs of each order")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: chunkorder [-runs N] FILE...")
	}
	var inOrder, random []time.Duration
	for r := 0; r < *runs; r++ {
		inOrder = append(inOrder, sweep(flag.Args(), false, 0))
		random = append(random, sweep(flag.Args(), true, uint64(r)))
	}
	a, b := median(inOrder), median(random)
	fmt.Printf("in order %.3fs CPU, random order %.3fs CPU: %.2fx\n", a.Seconds(), b.Seconds(), b.Seconds()/a.Seconds())
}
