// Command idxread times mlfeed reading IDX files into memory and summing every element, the
// task bench/idx.sh gives numpy too. It prints the median seconds of -runs runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sort"
	"time"

	"github.com/mlfeed/mlfeed/format/idx"
)

func main() {
	runs := flag.Int("runs", 5, "number of timed runs")
	flag.Parse()
	var times []float64
	var total uint64
	for r := 0; r < *runs; r++ {
		t := time.Now()
		total = 0
		for _, name := range flag.Args() {
			rd, err := idx.Open(name, nil)
			if err != nil {
				log.Fatal(err)
			}
			for i := range rd.Chunks() {
				c, err := rd.ReadChunk(context.Background(), i)
				if err != nil {
					log.Fatal(err)
				}
				for _, v := range c.Streams[0].Values.Uint8s() {
					total += uint64(v)
				}
			}
			rd.Close()
		}
		times = append(times, time.Since(t).Seconds())
	}
	sort.Float64s(times)
	fmt.Printf("%.6f %d\n", times[len(times)/2], total)
}
