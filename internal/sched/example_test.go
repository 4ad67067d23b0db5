package sched_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// A decoder splits a large chunk into parts with Parallel: the calling goroutine works through
// them, helped by whatever threads of the scheduler in ctx are idle.
func ExampleParallel() {
	ctx := sched.WithContext(context.Background(), sched.New(4, 0))
	var sum atomic.Int64
	err := sched.Parallel(ctx, 10, func(ctx context.Context, i int) error {
		sum.Add(int64(i))
		return nil
	})
	fmt.Println(sum.Load(), err)
	// Output: 45 <nil>
}

// ReadAhead yields a source's chunks in the order asked for, decoding the next ones on the
// scheduler's other threads meanwhile.
func ExampleScheduler_ReadAhead() {
	schema := mlfeed.Schema{Streams: []mlfeed.Stream{{Name: "x", Type: mlfeed.Float32, Dim: 1}}}
	var chunks []*mlfeed.Chunk
	for i := range 3 {
		v := mlfeed.NewBuffer(mlfeed.Float32, 2)
		v.Float32s()[0], v.Float32s()[1] = float32(2*i), float32(2*i+1)
		chunks = append(chunks, &mlfeed.Chunk{Sequences: 2, Streams: []mlfeed.StreamData{{SeqStart: []int64{0, 1, 2}, Values: v}}})
	}
	src, err := mlfeed.NewMemorySource(schema, chunks...)
	if err != nil {
		panic(err)
	}
	ra := sched.New(2, 0).ReadAhead(context.Background(), src, []int{2, 0, 1}, nil)
	defer ra.Close()
	for ra.Next() {
		fmt.Println(ra.Index(), ra.Chunk().Streams[0].Values.Float32s())
	}
	fmt.Println(ra.Err())
	// Output:
	// 2 [4 5]
	// 0 [0 1]
	// 1 [2 3]
	// <nil>
}
