package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/convert"
	"github.com/mlfeed/mlfeed/dataset"
	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/bytesize"
	"github.com/mlfeed/mlfeed/shard"
)

// shardFlags are convert's flags for sharded output and conversion as tasks.
type shardFlags struct {
	shards    int
	shardSize string
	task      string
	taskCount int
}

func (f *shardFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.shards, "shards", 0, "write OUTPUT as a directory of `N` shards and a manifest")
	fl.StringVar(&f.shardSize, "shard-size", "", "write OUTPUT as a directory of shards of about `SIZE` bytes each (e.g. 256MiB)")
	fl.StringVar(&f.task, "task", "", "convert only task `I/N`'s share of the shards (default: from $JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID or $AWS_BATCH_JOB_ARRAY_INDEX)")
	fl.IntVar(&f.taskCount, "task-count", 0, "the number of tasks, when the job runner's environment does not say it (Kubernetes, AWS Batch)")
}

// sharded reports whether the conversion writes a directory of shards: a shard flag is set,
// the environment names a task, or OUTPUT is an existing directory that is empty or holds an
// mlfeed data set (its manifest, or its tasks' manifests).
func (f *shardFlags) sharded(out string) bool {
	if f.shards != 0 || f.shardSize != "" || f.task != "" || f.taskCount != 0 {
		return true
	}
	if _, _, ok, _ := shard.TaskFromEnv(os.Getenv, 0); ok {
		return true
	}
	return shardDir(out)
}

// shardDir reports whether out is an existing directory that is empty or holds an mlfeed
// data set: a directory conversion may write shards into without being asked to.
func shardDir(out string) bool {
	fi, err := os.Stat(out)
	if err != nil || !fi.IsDir() {
		return false
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() == shard.ManifestName || strings.HasPrefix(e.Name(), "mlfeed.task-") {
			return true
		}
	}
	return len(entries) == 0
}

// options turns the flags into shard options around the conversion's options.
func (f *shardFlags) options(o *convert.Options) (*convert.ShardOptions, error) {
	so := &convert.ShardOptions{Options: *o, Shards: f.shards}
	if f.shards < 0 {
		return nil, usageErr("--shards %d: want a positive number", f.shards)
	}
	if f.shardSize != "" {
		n, err := bytesize.Parse(f.shardSize)
		if err == nil && n == 0 {
			err = errors.New("want a size above 0")
		}
		if err != nil {
			return nil, usageErr("--shard-size %q: %v", f.shardSize, err)
		}
		so.ShardSize = n
	}
	if f.taskCount < 0 {
		return nil, usageErr("--task-count %d: want a positive number", f.taskCount)
	}
	if f.task != "" {
		i, n, ok := strings.Cut(f.task, "/")
		ti, err1 := strconv.Atoi(i)
		tn, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || tn < 1 || ti < 0 || ti >= tn || tn > 1<<20 {
			return nil, usageErr("--task %q: want I/N with 0 <= I < N", f.task)
		}
		so.Task, so.Tasks = ti, tn
	} else {
		ti, tn, ok, err := shard.TaskFromEnv(os.Getenv, f.taskCount)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if ok {
			so.Task, so.Tasks = ti, tn
		} else if f.taskCount > 0 {
			return nil, usageErr("--task-count without a task index: give --task I/N or run under a job runner that sets one")
		}
	}
	if so.ShardSize > 0 && (so.Shards > 0 || so.Tasks > 1) {
		return nil, usageErr("--shard-size cannot be combined with --shards or with tasks")
	}
	return so, nil
}

// convertShards writes src as a directory of shards.
func convertShards(ctx context.Context, cmd *cobra.Command, src mlfeed.Source, dir string, so *convert.ShardOptions) error {
	if so.Format == nil {
		return usageErr("a directory of shards needs its format: give --to FORMAT")
	}
	m, err := convert.Shards(ctx, src, dir, so)
	if err != nil {
		return err
	}
	if so.Tasks > 1 {
		fmt.Fprintf(cmd.ErrOrStderr(), "task %d of %d: wrote %d shard(s), %d sequences, to %s; run `mlfeed merge %s` once every task is done\n",
			so.Task, so.Tasks, len(m.Shards), m.Sequences, dir, dir)
	}
	return nil
}

// shardFiles expands the arguments of validate: a directory, glob or manifest of shards
// becomes its shards, each checked on its own. A manifest's shards are also checked against
// their recorded sizes and checksums: each mismatch goes to report and counts as a failure, as
// does an argument that resolves to no shards (with a "not checked" line on stdout).
func shardFiles(args []string, formatName string, opts *format.Options, report func(error), stdout io.Writer) (files []string, failed int) {
	for _, arg := range args {
		paths, n, err := dataset.ValidateArg(arg, formatName, opts, report)
		if err != nil {
			report(err)
			fmt.Fprintf(stdout, "%s: not checked\n", arg)
			failed++
			continue
		}
		if n > 0 {
			fmt.Fprintf(stdout, "%s: %d shard(s) differ from the manifest\n", arg, n)
			failed++
		}
		files = append(files, paths...)
	}
	return files, failed
}

func init() {
	cmd := &cobra.Command{
		Use:   "merge DIR",
		Short: "Join the manifests of a conversion's tasks into the data set's manifest",
		Long: `merge joins the partial manifests (mlfeed.task-I-of-N.json) that the N tasks of
` + "`mlfeed convert --task I/N`" + ` wrote into DIR into the data set's manifest, DIR/mlfeed.json, after
checking that every task finished and that all agree on format and streams. It then removes the
partial manifests. Run it once, after the last task (a job's completion step, a dependent job).`,
		Example: `  mlfeed convert --task 0/4 --to cbf data/*.ctf out/   # ... and tasks 1/4, 2/4, 3/4
  mlfeed merge out/
  mlfeed info out/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("merge takes one directory (see 'mlfeed merge --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := shard.Merge(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d shards, %d sequences, %d samples\n", args[0], len(m.Shards), m.Sequences, m.Samples)
			return nil
		},
	}
	rootCmd.AddCommand(cmd)
}
