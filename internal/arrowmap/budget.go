package arrowmap

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// Allocator returns memory.DefaultAllocator refusing any single allocation larger than limit
// bytes (limit <= 0: sched.DefaultMemory): a footer, a schema message or a page header that
// claims a buffer larger than the memory budget would otherwise have arrow-go allocate it (Go
// cannot recover from running out of memory). A refusal panics with an error wrapping
// mlfeed.ErrTooLarge that names the size and --memory; Catch passes it on as it is.
func Allocator(limit int64) memory.Allocator {
	if limit <= 0 {
		limit = sched.DefaultMemory
	}
	return budgetAllocator{limit}
}

// Budget returns the memory budget of the scheduler ctx carries (nil: none), or 0.
func Budget(ctx context.Context) int64 {
	if ctx == nil {
		return 0
	}
	if s := sched.FromContext(ctx); s != nil {
		return s.Memory()
	}
	return 0
}

type budgetAllocator struct{ limit int64 }

func (a budgetAllocator) check(size int) {
	if int64(size) > a.limit {
		panic(fmt.Errorf("%w: one buffer of %d bytes exceeds the memory budget of %d bytes (raise it with --memory)", mlfeed.ErrTooLarge, size, a.limit))
	}
}

func (a budgetAllocator) Allocate(size int) []byte {
	a.check(size)
	return memory.DefaultAllocator.Allocate(size)
}

func (a budgetAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	return memory.DefaultAllocator.Reallocate(size, b)
}

func (a budgetAllocator) Free(b []byte) { memory.DefaultAllocator.Free(b) }
