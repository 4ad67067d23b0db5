package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/internal/bytesize"
	"github.com/mlfeed/mlfeed/internal/sched"
)

// schedFlags are --threads and --memory, which every command that reads takes: they bound the
// threads and the memory of decoded chunks that reading uses (package internal/sched).
type schedFlags struct {
	threads int
	memory  string
}

func (f *schedFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.threads, "threads", 0, "use at most `N` threads for reading and decoding")
	fl.Lookup("threads").DefValue = "all cores"
	fl.StringVar(&f.memory, "memory", "", "budget `SIZE` for decoded chunks read ahead, in bytes or with K, M, G, T (default 2G, or a quarter of GOMEMLIMIT when less)")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("threads") && f.threads == 0 {
			return usageErr("--threads 0: want a number of threads from 1 to 65536 (without --threads: all cores)")
		}
		s, err := f.scheduler()
		if err != nil {
			return err
		}
		cmd.SetContext(sched.WithContext(cmd.Context(), s))
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// scheduler returns the scheduler the flags ask for.
func (f *schedFlags) scheduler() (*sched.Scheduler, error) {
	if f.threads < 0 || f.threads > 1<<16 {
		return nil, usageErr("--threads %d: want a number of threads from 1 to 65536 (without --threads: all cores)", f.threads)
	}
	mem, err := bytesize.Parse(f.memory)
	if err == nil && mem == 0 && f.memory != "" {
		err = errors.New("want a size above 0")
	}
	if err != nil {
		return nil, usageErr("--memory %q: %v", f.memory, err)
	}
	return sched.New(f.threads, mem), nil
}

// readAhead reads every chunk of src in order on the scheduler ctx carries (--threads,
// --memory), or on one of all cores and the default budget.
func readAhead(ctx context.Context, src mlfeed.Source, recycle bool) *sched.ReadAhead {
	s := sched.FromContext(ctx)
	if s == nil {
		s = sched.New(0, 0)
	}
	order := make([]int, len(src.Chunks()))
	for i := range order {
		order[i] = i
	}
	return s.ReadAhead(ctx, src, order, &sched.ReadAheadOptions{Recycle: recycle})
}
