// Command pqread times mlfeed reading Parquet files in full: every row group decoded into
// chunks, on -threads goroutines (each reading whole row groups), the task bench/parquet.sh
// gives DuckDB's SELECT * too. It prints the median seconds of -runs runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlfeed/mlfeed/format/parquet"
)

func main() {
	runs := flag.Int("runs", 5, "number of timed runs")
	threads := flag.Int("threads", 1, "row groups decoded at once")
	flag.Parse()
	var times []float64
	var rows atomic.Int64
	for r := 0; r < *runs; r++ {
		t := time.Now()
		rows.Store(0)
		for _, name := range flag.Args() {
			rd, err := parquet.Open(name, nil)
			if err != nil {
				log.Fatal(err)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			var fail atomic.Value
			for g := 0; g < *threads; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1) - 1)
						if i >= len(rd.Chunks()) {
							return
						}
						c, err := rd.ReadChunk(context.Background(), i)
						if err != nil {
							fail.Store(err)
							return
						}
						rows.Add(int64(c.Sequences))
					}
				}()
			}
			wg.Wait()
			if err, ok := fail.Load().(error); ok {
				log.Fatal(err)
			}
			rd.Close()
		}
		times = append(times, time.Since(t).Seconds())
	}
	sort.Float64s(times)
	fmt.Printf("%.4f %d\n", times[len(times)/2], rows.Load())
}
